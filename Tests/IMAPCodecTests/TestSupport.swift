import IMAPCodec
import MoTestSupport

/// How a test feeds bytes to the parser (swift-nio's ByteToMessageDecoderVerifier idea: every decoder must give
/// the same result whatever the arrival pattern).
enum Feed: CaseIterable, Sendable {
    case whole, byteByByte, randomChunks
}

/// Feeds `bytes` as `feed` says, draining events after every append; consecutive body chunks are merged.
/// Throws the parser's error, if any.
func parse(_ bytes: [UInt8], _ feed: Feed = .whole, seed: UInt64 = 1, options: ResponseParser.Options = .init())
    throws(IMAPParseError) -> [ResponseEvent]
{
    var parser = ResponseParser(options: options)
    var events: [ResponseEvent] = []
    func drain() throws(IMAPParseError) {
        while let e = try parser.next() {
            if case .bodyBytes(let b) = e, case .bodyBytes(let prev)? = events.last {
                events[events.count - 1] = .bodyBytes(prev + b)
            } else {
                events.append(e)
            }
        }
    }
    switch feed {
    case .whole:
        parser.append(bytes)
        try drain()
    case .byteByByte:
        for b in bytes {
            parser.append(CollectionOfOne(b))
            try drain()
        }
    case .randomChunks:
        var rng = SeededGenerator(seed: seed)
        var i = 0
        while i < bytes.count {
            let n = Int.random(in: 1...max(1, min(300, bytes.count - i)), using: &rng)
            parser.append(bytes[i..<i + n])
            i += n
            try drain()
        }
    }
    return events
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// The untagged responses among `events`.
func untagged(_ events: [ResponseEvent]) -> [UntaggedResponse] {
    events.compactMap { if case .untagged(let u) = $0 { u } else { nil } }
}

func tagged(_ events: [ResponseEvent]) -> [TaggedResponse] {
    events.compactMap { if case .tagged(let t) = $0 { t } else { nil } }
}
