import IMAPCodec
import MoTestSupport
import Testing

/// Hostile inputs must be refused cleanly, with a message naming the limit, once the buffered bytes cross it
/// (never after buffering the whole attack).
@Suite struct LimitTests {
    /// Feeds `prefix` then `filler` repeatedly in 4 KiB chunks until the parser throws; returns the error and
    /// how many bytes had been appended by then.
    func attack(_ prefix: String, _ filler: [UInt8], total: Int, options: ResponseParser.Options = .init())
        -> (IMAPParseError?, Int)
    {
        var p = ResponseParser(options: options)
        var sent = 0
        func feed(_ b: some Collection<UInt8>) -> IMAPParseError? {
            p.append(b)
            sent += b.count
            do { while try p.next() != nil {} } catch { return error }
            return nil
        }
        if let e = feed(bytes(prefix)) { return (e, sent) }
        var chunk: [UInt8] = []
        while chunk.count < 4096 { chunk += filler }
        while sent < total {
            if let e = feed(chunk) { return (e, sent) }
        }
        return (nil, sent)
    }

    /// `attack` with `filler` repeated: refused with `message`, naming `limit` (when given), within `maxSent` bytes.
    func expectRefusal(
        _ prefix: String, _ filler: String, total: Int, options: ResponseParser.Options = .init(),
        message: String, limit: IMAPParseError.Limit?, maxSent: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (e, sent) = attack(prefix, bytes(filler), total: total, options: options)
        #expect(e?.description == message, sourceLocation: sourceLocation)
        if let limit { #expect(e?.limit == limit, sourceLocation: sourceLocation) }
        #expect(sent <= maxSent, sourceLocation: sourceLocation)
    }

    @Test(arguments: Feed.allCases)
    func literalOf2To62Bytes(_ feed: Feed) {
        let e = #expect(throws: IMAPParseError.self) {
            try parse(bytes("* 1 FETCH (BODY[] {4611686018427387904}\r\n"), feed)
        }
        #expect(e?.limit == .literalSize)
        #expect(e?.kind == .protocolViolation)
        if feed == .whole {
            #expect(e?.description == "server announced a literal of 4611686018427387904 bytes; the limit is 1073741824")
        }
    }

    @Test func literalRefusedBeforeItsSizeIsComplete() throws {
        var p = ResponseParser()
        p.append(bytes("* 1 FETCH (BODY[] {46116860184"))
        _ = try p.next()  // fetchStart
        let e = #expect(throws: IMAPParseError.self) { try p.next() }
        #expect(e?.description == "server announced a literal of at least 46116860184 bytes; the limit is 1073741824")
    }

    @Test func literalLargerThan64Bits() {
        let e = #expect(throws: IMAPParseError.self) {
            try parse(bytes("* 1 FETCH (BODY[] {99999999999999999999999}\r\n"))
        }
        #expect(e?.limit == .literalSize)
    }

    @Test func inlineLiteralLimit() {
        let e = #expect(throws: IMAPParseError.self) { try parse(bytes("* LIST () \"/\" {2000000}\r\n")) }
        #expect(e?.description == "server announced a literal of 2000000 bytes; the limit is 1048576")
        #expect(e?.limit == .inlineLiteralSize)
    }

    @Test(arguments: ["* 1 FETCH (X-FOO ", "* 1 FETCH (BODYSTRUCTURE ", "* STATUS x (X-FOO "])
    func deepNesting(_ prefix: String) {
        expectRefusal(
            prefix, "(", total: 100_000, message: "server response nests lists deeper than 64 levels",
            limit: .nestingDepth, maxSent: 8192)
    }

    @Test func deepNestingByteByByte() {
        let input = bytes("* 1 FETCH (X-FOO " + String(repeating: "(", count: 100_000))
        let e = #expect(throws: IMAPParseError.self) { try parse(input, .byteByByte) }
        #expect(e?.limit == .nestingDepth)
    }

    @Test(arguments: ["* CAPABILITY ", "* 1 FETCH (FLAGS (", "A"])
    func hugeAtom(_ prefix: String) {
        expectRefusal(
            prefix, "a", total: 1_000_000, message: "server sent an atom longer than 262144 bytes",
            limit: .atomLength, maxSent: 2 * 262144 + 8192)
    }

    @Test func hugeQuotedString() {
        expectRefusal(
            "* LIST () \"/\" \"", "a", total: 1_000_000, message: "server sent a quoted string longer than 262144 bytes",
            limit: nil, maxSent: 2 * 262144 + 8192)
    }

    @Test(arguments: ["* FLAGS (", "* 1 FETCH (FLAGS (", "* OK [PERMANENTFLAGS ("])
    func hundredThousandFlags(_ prefix: String) {
        expectRefusal(
            prefix, "\\Seen ", total: 600_000, message: "server sent a list of more than 10000 items",
            limit: .listLength, maxSent: 2 * 10_000 * 6 + 8192)
    }

    @Test func hundredThousandFlagsWhole() {
        let input = bytes("* FLAGS (" + String(repeating: "$kw ", count: 100_000) + ")\r\n")
        let e = #expect(throws: IMAPParseError.self) { try parse(input) }
        #expect(e?.limit == .listLength)
    }

    @Test func tooManyFetchAttributes() {
        let input = bytes("* 1 FETCH (" + String(repeating: "UID 1 ", count: 1001) + ")\r\n")
        let e = #expect(throws: IMAPParseError.self) { try parse(input) }
        #expect(e?.description == "server sent a FETCH response with more than 1000 attributes")
    }

    @Test func lineLength() {
        var o = ResponseParser.Options()
        o.maxLineLength = 10_000
        expectRefusal(
            "* OK ", "word ", total: 100_000, options: o,
            message: "server sent a response longer than 10000 bytes (not counting message bodies)",
            limit: .lineLength, maxSent: 10_000 + 4096 + 5)
    }

    @Test func longSearchWithinDefaultLimits() throws {
        let numbers = (1...200_000).map(String.init).joined(separator: " ")
        let events = try parse(bytes("* SEARCH " + numbers + "\r\n"))
        guard case .untagged(.search(let n, nil)) = events.first else { Issue.record("\(events.count)"); return }
        #expect(n.count == 200_000)
    }

    /// A 200 MB body passes through while the parser holds at most one appended chunk.
    @Test func hugeBodyIsStreamed() throws {
        let size = 200 << 20
        var p = ResponseParser()
        p.append(bytes("* 1 FETCH (UID 7 BODY[] {\(size)}\r\n"))
        #expect(try p.next() == .fetchStart(sequenceNumber: 1))
        #expect(try p.next() == .fetchAttribute(.uid(7)))
        #expect(try p.next() == .bodyStart(FetchBodyStart(kind: .body, section: "", size: size)))
        let chunk = [UInt8](repeating: 0x41, count: 1 << 16)
        var received = 0, maxBuffered = 0
        for _ in 0..<(size >> 16) {
            p.append(chunk)
            maxBuffered = max(maxBuffered, p.bufferedByteCount)
            while let e = try p.next() {
                if case .bodyBytes(let b) = e { received += b.count; continue }
                #expect(e == .bodyEnd)
                #expect(received == size)
            }
        }
        p.append(bytes(" FLAGS (\\Seen))\r\nA1 OK done\r\n"))
        #expect(try p.next() == .fetchAttribute(.flags([.seen])))
        #expect(try p.next() == .fetchEnd)
        #expect(try p.next() == .tagged(TaggedResponse(tag: "A1", status: .ok, text: ResponseText(text: "done"))))
        #expect(received == size)
        #expect(maxBuffered <= 1 << 16)
    }

    /// 100k FETCH FLAGS responses (a flag sync of a large mailbox) parse quickly.
    @Test func manyFetchResponses() throws {
        var input: [UInt8] = []
        for i in 1...100_000 {
            input += bytes("* \(i) FETCH (UID \(i) MODSEQ (\(i + 10)) FLAGS (\\Seen $Forwarded))\r\n")
        }
        let clock = ContinuousClock()
        var count = 0
        let elapsed = try clock.measure {
            var p = ResponseParser()
            var i = 0
            while i < input.count {  // 64 KiB reads, as from a socket
                p.append(input[i..<min(input.count, i + 65536)])
                i += 65536
                while let e = try p.next() { if case .fetchEnd = e { count += 1 } }
            }
        }
        #expect(count == 100_000)
        print("100k FETCH responses parsed in \(elapsed)")
    }

    @Test func fuzzEntryNeverCrashes() {
        var rng = SeededGenerator(seed: 42)
        let corpus = DovecotTranscripts.sessionA + DovecotTranscripts.sessionC
        for _ in 0..<300 {
            var data = corpus
            for _ in 0..<8 {
                let i = Int.random(in: 0..<data.count, using: &rng)
                data[i] = UInt8.random(in: 0...255, using: &rng)
            }
            data.withUnsafeBytes { fuzzParseResponses($0) }
        }
        // Token soup: grammar fragments in random order, so literals, lists and codes collide.
        let tokens = [
            "* ", "1 ", "FETCH ", "(", ")", "{3}\r\n", "~{2}\r\n", "{0}\r\n", "\"", "\\", "[", "]", "<0>", "BODY[",
            "BINARY", "NIL ", "UID ", "FLAGS ", "\r\n", "\n", "A1 OK ", "+ ", "LIST ", "STATUS ", "x ", "MODSEQ ",
            "COPYUID 1 1:2 3 ", "VANISHED (EARLIER) ", "1:*,", "ESEARCH ", "SEARCH ", "\u{0}", "\u{FF}"
        ].map { Array($0.utf8) }
        for _ in 0..<3000 {
            var data: [UInt8] = []
            for _ in 0..<Int.random(in: 1...40, using: &rng) { data += tokens[Int.random(in: 0..<tokens.count, using: &rng)] }
            data.withUnsafeBytes { fuzzParseResponses($0) }
            // Whatever the bytes, every arrival pattern yields the same events up to an error. (An error may be
            // reported later when bytes trickle in: a partial unit is re-examined only on a new line or doubling.)
            let results = Feed.allCases.map { feed in eventsUntilError(data, feed, seed: UInt64(data.count)) }
            #expect(results.allSatisfy { $0 == results[0] }, "feeds disagree on \(String(decoding: data, as: UTF8.self).debugDescription)")
        }
    }

    func eventsUntilError(_ data: [UInt8], _ feed: Feed, seed: UInt64) -> [ResponseEvent] {
        var p = ResponseParser()
        var events: [ResponseEvent] = []
        var rng = SeededGenerator(seed: seed)
        var i = 0
        while i < data.count {
            let n = feed == .whole ? data.count : feed == .byteByByte ? 1 : Int.random(in: 1...min(50, data.count - i), using: &rng)
            p.append(data[i..<i + n])
            i += n
            do {
                while let e = try p.next() {
                    if case .bodyBytes(let b) = e, case .bodyBytes(let prev)? = events.last {
                        events[events.count - 1] = .bodyBytes(prev + b)
                    } else {
                        events.append(e)
                    }
                }
            } catch { return events }
        }
        return events
    }
}
