import Testing
import IMAPCodec
import MoCore
import MoNet
import MoTestSupport
@testable import IMAPClient
import Synchronization

/// Every client command against the project's private, real Dovecot.
@Suite(.serialized) struct IMAPClientTests {
    static func settings(
        _ server: TestServer, security: TLSMode = .implicit,
        auth: AuthMethod = .auto, password: String? = nil
    ) -> IMAPSettings {
        let secret = password ?? server.password
        return IMAPSettings(
            host: server.host, port: security == .implicit ? server.imapsPort : server.imapPort,
            security: security, user: server.user, authentication: auth,
            tls: TLSOptions(caFile: server.caFile), timeout: 20, secret: { secret })
    }

    static func message(_ subject: String, body: String = "Hello.\r\n") -> [UInt8] {
        Array("From: a@example.com\r\nTo: b@example.com\r\nSubject: \(subject)\r\nMessage-ID: <\(subject)@mo.test>\r\n\r\n\(body)".utf8)
    }

    /// A mailbox of its own for each test, so tests on the shared server do not see each other's mail.
    static func freshMailbox(_ c: IMAPConnection, _ name: String) throws -> MailboxName {
        let box = MailboxName("t-\(name)-\(UInt32.random(in: 0...UInt32.max))")
        try c.create(box)
        return box
    }

    @Test(arguments: [AuthMethod.auto, .login, .plain, .xoauth2, .oauthbearer])
    func logsInWithEachMethod(auth: AuthMethod) throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server, auth: auth))
        #expect(c.capabilities.contains(.imap4rev1))
        #expect(c.capabilities.contains(.qresync))  // post-login capabilities
        c.logout()
    }

    @Test func wrongPasswordIsAnAuthenticationError() throws {
        let server = try TestServer.shared()
        let e = #expect(throws: IMAPError.self, "logged in with a wrong password") {
            _ = try IMAPConnection.open(Self.settings(server, password: "wrong"))
        }
        #expect(e?.kind == .authentication)
        #expect(
            e?.description == "imap 127.0.0.1:\(server.imapsPort): authentication failed: mo was refused (PLAIN): Authentication failed.")
    }

    @Test func startTLSOnThePlainPort() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server, security: .starttls))
        #expect(c.connection.isTLS)
        try c.noop()
        c.logout()
    }

    /// Names that only look like loopback (`127.attacker.example` resolves wherever its owner wants) are
    /// refused like any other host.
    @Test(arguments: ["imap.example.com", "127.attacker.example", "127.0.0.1.example", "127.0.0.1:143"])
    func plaintextToANonLoopbackHostIsRefusedBeforeConnecting(host: String) throws {
        let s = IMAPSettings(host: host, port: 143, security: .none, user: "u", secret: { "p" })
        #expect(throws: IMAPError.self) { _ = try IMAPConnection.open(s) }
        do { _ = try IMAPConnection.open(s) } catch let e {
            #expect(e.kind == .security)
            #expect(e.description == "imap \(host):143: refusing to send a password without TLS to a host that is not loopback")
        }
    }

    @Test func startTLSNotOfferedIsRefused() throws {
        // A server that never offers STARTTLS: the client must stop, not log in in clear text.
        let fake = try lineScriptedServer(greeting: "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] fake ready\r\n")
        defer { fake.stop() }
        let s = IMAPSettings(host: "127.0.0.1", port: fake.port, security: .starttls, user: "u", timeout: 5, secret: { "secret" })
        let e = #expect(throws: IMAPError.self, "went on without STARTTLS") { _ = try IMAPConnection.open(s) }
        #expect(e?.kind == .security)
        #expect(
            e?.description
                == "127.0.0.1:\(fake.port) does not offer STARTTLS; refusing to continue without TLS (its capabilities lack STARTTLS)")
        #expect(!fake.receivedText.contains("secret"))
    }

    /// News a server sends after IDLE but before its `+` (Dovecot flushes held NOTIFY news there) and news
    /// that arrives while DONE completes both reach the caller: a lost one would leave a watcher asleep.
    @Test func idleDeliversNewsBeforeItsContinuationAndAfterDone() throws {
        let idleTag = LockedText()
        let fake = try lineScriptedServer(greeting: "* PREAUTH [CAPABILITY IMAP4rev1 IDLE] fake\r\n") { line in
            if line.hasSuffix(" IDLE") {
                idleTag.value.withLock { $0 = String(line.prefix { $0 != " " }) }
                return "* STATUS Other (HIGHESTMODSEQ 9)\r\n+ idling\r\n"
            }
            if line == "DONE" { return "* 4 EXISTS\r\n\(idleTag.value.withLock { $0 }) OK idle done\r\n" }
            return nil
        }
        defer { fake.stop() }
        let c = try IMAPConnection.open(
            IMAPSettings(
                host: "127.0.0.1", port: fake.port, security: .none, user: "u",
                timeout: 5, secret: { "" }))
        var seen: [IdleEvent] = []
        try c.idle(seconds: 1) {
            seen.append($0); return false
        }
        var status = StatusResponse(mailbox: MailboxName("Other"))
        status.highestModSeq = ModSequence(9)
        #expect(seen == [.untagged(.status(status)), .untagged(.exists(4))])
    }

    /// RFC 7628 §3.2.3: a refused OAUTHBEARER gets an error challenge, which the client answers with a
    /// single ^A (`AQ==`); the IMAP copy used to send an empty line (the SMTP copy already sent ^A).
    @Test func oauthBearerFailureAnswersTheErrorChallengeWithCtrlA() throws {
        let tag = LockedText()
        let fake = try lineScriptedServer(greeting: "* OK [CAPABILITY IMAP4rev1 AUTH=OAUTHBEARER SASL-IR] fake\r\n") { line in
            if line.hasSuffix(" AUTHENTICATE OAUTHBEARER") {  // the initial response follows the "+"
                tag.value.withLock { $0 = String(line.prefix { $0 != " " }) }
                return "+ \r\n"
            }
            if line.hasPrefix("bixh") { return "+ eyJzdGF0dXMiOiJpbnZhbGlkX3Rva2VuIn0=\r\n" }  // base64 of "n,a"
            if line == "AQ==" { return "\(tag.value.withLock { $0 }) NO [AUTHENTICATIONFAILED] bad token\r\n" }
            return nil
        }
        defer { fake.stop() }
        let settings = IMAPSettings(
            host: "127.0.0.1", port: fake.port, security: .none, user: "a,b=c",
            authentication: .oauthbearer, timeout: 3, secret: { "T" })
        let error = #expect(throws: IMAPError.self) { _ = try IMAPConnection.open(settings) }
        #expect(error?.description.contains("bad token") == true, "\(String(describing: error))")
        let sent = fake.receivedText.split(separator: "\r\n").map(String.init)
        let initial = sent.first { $0.hasPrefix("bixh") }
        #expect(
            initial.flatMap(Base64.decode)
                == Array("n,a=a=2Cb=3Dc,\u{1}host=127.0.0.1\u{1}port=\(fake.port)\u{1}auth=Bearer T\u{1}\u{1}".utf8))
        #expect(sent.contains("AQ=="))
    }

    /// A server's NO text with terminal escapes reaches the error line escaped (issue #14).
    @Test func refusalTextIsEscaped() throws {
        let fake = try lineScriptedServer(greeting: "* PREAUTH [CAPABILITY IMAP4rev1] fake\r\n") { line in
            line.contains(" SELECT ") ? "\(line.prefix { $0 != " " }) NO \u{1B}[2J\u{1B}]0;owned\u{7}gone\r\n" : nil
        }
        defer { fake.stop() }
        let c = try IMAPConnection.open(
            IMAPSettings(
                host: "127.0.0.1", port: fake.port, security: .none, user: "u",
                timeout: 5, secret: { "" }))
        do {
            _ = try c.select(MailboxName("Box"))
            Issue.record("SELECT succeeded")
        } catch let error as IMAPError {
            #expect(error.description.hasSuffix("refused: \\u{1B}[2J\\u{1B}]0;owned\\u{7}gone"), "\(error.description)")
            #expect(!error.description.unicodeScalars.contains { isTerminalControl($0) })
        }
    }

    /// A server that stalls in the middle of a response costs one timeout, not two: the failed command and
    /// the LOGOUT after it together stay within the bound (issue #14; a bound, not a benchmark).
    @Test func stallMidResponseCostsOneTimeout() throws {
        let fake = try lineScriptedServer(greeting: "* PREAUTH [CAPABILITY IMAP4rev1] fake\r\n") { line in
            if line.contains(" NOOP") { return "* 1 FETCH (UID 5 FLAGS (\\Se" }  // and then nothing
            if line.contains(" LOGOUT") { return "" }  // still nothing
            return nil
        }
        defer { fake.stop() }
        let timeout = 1.0
        let c = try IMAPConnection.open(
            IMAPSettings(
                host: "127.0.0.1", port: fake.port, security: .none, user: "u",
                timeout: timeout, secret: { "" }))
        let start = monotonicSeconds()
        do {
            try c.noop()
            Issue.record("NOOP completed")
        } catch let error as IMAPError {
            guard case .network(let n) = error.reason, n.code == .timeout else {
                Issue.record("not a timeout: \(error)")
                return
            }
        }
        c.logout()
        let elapsed = monotonicSeconds() - start
        #expect(elapsed < 1.8 * timeout, "a stall cost \(elapsed) s with a \(timeout) s timeout")
    }

    @Test func traceRedactsCredentials() throws {
        let server = try TestServer.shared()
        for auth in [AuthMethod.login, .plain, .xoauth2] {
            let lines = Mutex<[String]>([])
            let c = try IMAPConnection.open(
                Self.settings(server, auth: auth), trace: IMAPTrace { line in lines.withLock { $0.append(line) } })
            c.logout()
            let all = lines.withLock { $0 }.joined(separator: "\n")
            #expect(!all.contains(server.password))
            #expect(!all.contains(String(decoding: SASL.plain(user: server.user, password: server.password), as: UTF8.self)))
            #expect(all.contains("<redacted>"))
            #expect(all.contains("S: * OK"))
        }
    }

    /// A body writer that fails after part of the literal went out leaves nothing usable on the connection:
    /// it is closed and the error is a network one (callers end the run), and the server stored nothing.
    @Test func anAppendAbandonedMidLiteralClosesTheConnection() throws {
        struct Gone: Error {}
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        let box = try Self.freshMailbox(c, "abandoned")
        #expect {
            try c.append(to: box, size: 100) { connection in
                try connection.write(Array(repeating: UInt8(ascii: "x"), count: 40))
                throw Gone()
            }
        } throws: { error in
            guard let e = error as? IMAPError, case .network = e.reason else { return false }
            return true
        }
        #expect(throws: (any Error).self) { try c.noop() }
        let other = try IMAPConnection.open(Self.settings(server))
        defer { other.logout() }
        #expect(try other.status(box, [.messages]).messages == 0)
    }

    @Test func listSelectStatusAppendFetchStore() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        defer { c.logout() }
        try c.enable([.qresync])
        #expect(c.enabled.contains(.qresync))

        let boxes = try c.list()
        let sent = boxes.first { $0.mailbox.decoded == "Sent" }
        #expect(sent?.attributes.contains(.sent) == true)
        #expect(boxes.first?.delimiter == UInt8(ascii: "/"))

        let box = try Self.freshMailbox(c, "basic")
        let m1 = Self.message("one"), m2 = Self.message("two", body: "Line\r\n.\r\nBinary-ish: \u{00e9}\r\n")
        let a1 = try c.append(
            to: box, flags: [.seen], date: InternalDate(year: 2024, month: 3, day: 5, hour: 12, minute: 0, second: 0, zoneMinutes: 60),
            message: m1)
        let a2 = try c.append(to: box, message: m2)
        #expect(a1 != nil && a2 != nil && a1!.uid < a2!.uid && a1!.uidValidity == a2!.uidValidity)

        let status = try c.status(box, [.messages, .uidNext, .uidValidity, .highestModSeq])
        #expect(status.messages == 2 && status.uidNext == a2!.uid + 1 && status.uidValidity == a1!.uidValidity)

        let selected = try c.select(box)
        #expect(selected.exists == 2 && selected.uidValidity == a1!.uidValidity && selected.highestModSeq != nil)

        // Bodies come back byte for byte, streamed.
        var bodies: [UInt32: [UInt8]] = [:]
        var currentUID: UInt32 = 0
        var current: [UInt8] = []
        try c.fetch(UIDSet(1...UIDSet.star), items: [.uid, .flags, .body()]) { event in
            switch event {
            case .fetchAttribute(.uid(let u)): currentUID = u
            case .bodyStart: current = []
            case .bodyBytes(let b): current += b
            case .fetchEnd: bodies[currentUID] = current
            default: break
            }
        }
        #expect(bodies[a1!.uid] == m1 && bodies[a2!.uid] == m2)

        // STORE with UNCHANGEDSINCE: a stale mod-sequence is reported as MODIFIED, not applied.
        let info = try c.fetchInfo(UIDSet(a1!.uid), items: [.uid, .flags, .modSeq]).messages
        #expect(info.first?.flags?.contains(.seen) == true)
        let modseq = info.first!.modSeq!
        let stored = try c.store(UIDSet(a1!.uid), StoreAction(.add, [.flagged]), unchangedSince: modseq)
        #expect(stored.modified == nil && stored.messages.first?.flags?.contains(.flagged) == true)
        let stale = try c.store(UIDSet(a1!.uid), StoreAction(.add, [.answered]), unchangedSince: modseq)
        #expect(stale.modified?.contains(a1!.uid) == true)

        // CHANGEDSINCE: only what changed after a mod-sequence.
        let mark = try c.status(box, [.highestModSeq]).highestModSeq!
        try c.store(UIDSet(a1!.uid), StoreAction(.add, [.draft], silent: true))
        let changed = try c.fetchInfo(UIDSet(1...UIDSet.star), changedSince: mark)
        #expect(changed.messages.map(\.uid) == [a1!.uid])

    }

    @Test func refusalNamesCommandAndServerWords() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        defer { c.logout() }
        do {
            _ = try c.select(MailboxName("Does/Not/Exist"))
            Issue.record("selected a missing mailbox")
        } catch let e as IMAPError {
            #expect(e.kind == .unavailable)
            #expect(
                e.description.hasPrefix(
                    "imap 127.0.0.1:\(server.imapsPort): SELECT Does/Not/Exist refused: Mailbox doesn't exist: Does/Not/Exist"))
        }
        try c.noop()  // the session is still usable
    }

    @Test func moveExpungeCreateDelete() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        defer { c.logout() }
        let from = try Self.freshMailbox(c, "from"), to = try Self.freshMailbox(c, "to")
        let u1 = try c.append(to: from, message: Self.message("m1"))!.uid
        let u2 = try c.append(to: from, message: Self.message("m2"))!.uid
        let u3 = try c.append(to: from, message: Self.message("m3"))!.uid
        _ = try c.select(from)
        let moved = try c.move(UIDSet(u1), to: to).pairs
        #expect(moved.count == 1 && moved[0].source == u1)
        try c.delete(UIDSet(u2))
        let left = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid)
        #expect(left == [u3])
        #expect(try c.status(to, [.messages]).messages == 1)
        try c.deleteMailbox(to)
        #expect(try c.list().contains { $0.mailbox == to } == false)
    }

    /// CONDSTORE: the server reports the mod-sequence of each of our own changes (silent STOREs, UID
    /// EXPUNGE, UID MOVE), and a change by another session during our commands is flagged as foreign.
    @Test func ownChangesReportTheirModSeqs() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        defer { c.logout() }
        try c.enable([.qresync, .condstore])
        let box = try Self.freshMailbox(c, "modseq"), to = try Self.freshMailbox(c, "modseq-to")
        let uids = try (1...5).map { try c.append(to: box, message: Self.message("q\($0)"))!.uid }
        let before = try c.select(box).highestModSeq!.value
        let stored = try c.storeSilently([
            (UIDSet(uids[0]), StoreAction(.add, [.flagged])),
            (UIDSet(uids: [uids[0], uids[1]]), StoreAction(.add, [.seen]))
        ])
        #expect(stored.modSeqs.sorted() == [before + 1, before + 2, before + 2] && !stored.foreignSeen, "\(stored)")
        let deleted = try c.delete(UIDSet(uids[2]))
        #expect(deleted.modSeqs == [before + 3] && deleted.completions == [before + 4] && !deleted.foreignSeen, "\(deleted)")
        let moved = try c.move(UIDSet(uids[3]), to: to)
        #expect(moved.changes.completions == [before + 5] && !moved.changes.foreignSeen, "\(moved.changes)")
        #expect(try c.status(to, [.messages]).messages == 1)

        // Another session changes a message; our next command hears of it: foreign.
        let other = try IMAPConnection.open(Self.settings(server))
        defer { other.logout() }
        _ = try other.select(box)
        try other.store(UIDSet(uids[4]), StoreAction(.add, [.answered], silent: true))
        let next = try c.storeSilently([(UIDSet(uids[1]), StoreAction(.add, [.flagged]))])
        #expect(next.foreignSeen && next.modSeqs == [before + 7], "\(next)")
    }

    /// STOREs go out in rounds in which no UID appears twice (each value given is then reported).
    @Test func storeRounds() {
        #expect(IMAPConnection.rounds([[1, 2], [3], [2, 4], [5], [4]]) == [[0, 1, 3], [2], [4]])
        #expect(IMAPConnection.rounds([]) == [])
    }

    @Test func examineExpungeAndMoveWithoutTheMoveExtension() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        defer { c.logout() }
        let from = try Self.freshMailbox(c, "nomove"), to = try Self.freshMailbox(c, "nomove-to")
        let date = InternalDate(year: 2001, month: 2, day: 3, hour: 4, minute: 5, second: 6, zoneMinutes: -300)!
        let u1 = try c.append(to: from, flags: [.draft, .keyword("$Label1")], date: date, message: Self.message("x1"))!.uid
        let u2 = try c.append(to: from, message: Self.message("x2"))!.uid
        let u3 = try c.append(to: from, message: Self.message("x3"))!.uid

        let examined = try c.select(from, readOnly: true)
        #expect(examined.readOnly && examined.exists == 3)
        let info = try c.fetchInfo(UIDSet(u1), items: [.uid, .flags, .internalDate, .rfc822Size]).messages[0]
        #expect(info.internalDate?.epochSeconds == date.epochSeconds)  // Dovecot keeps the instant, not the zone
        #expect(info.flags?.contains(.keyword("$Label1")) == true && info.flags?.contains(.draft) == true)
        #expect(info.size == UInt64(Self.message("x1").count))

        _ = try c.select(from)
        // As on a server without MOVE: COPY + STORE \Deleted + UID EXPUNGE.
        c.capabilities.remove(.move)
        let moved = try c.move(UIDSet(u2), to: to).pairs
        #expect(moved.map(\.source) == [u2])
        try c.store(UIDSet(u3), StoreAction(.add, [.deleted], silent: true))
        #expect(try c.expungeAll() == 1)
        #expect(try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid) == [u1])
        #expect(try c.status(to, [.messages]).messages == 1)
    }

    @Test func tlsRefusalsAtTheClient() throws {
        let server = try TestServer.shared()
        var wrongCA = Self.settings(server)
        wrongCA.tls = TLSOptions(caFile: server.wrongCAFile)
        let e = #expect(throws: IMAPError.self, "accepted a certificate from an unknown CA") { _ = try IMAPConnection.open(wrongCA) }
        #expect(e?.kind == .security)
        #expect(
            e?.description
                == "certificate for 127.0.0.1 is not trusted: unable to get local issuer certificate; set ca-file or check the host")
        var otherName = Self.settings(server)
        otherName.host = "localhost"
        let other = #expect(throws: IMAPError.self, "accepted a certificate for another name") { _ = try IMAPConnection.open(otherName) }
        #expect(other?.description == "certificate for localhost is not trusted: hostname mismatch; set ca-file or check the host")
    }

    @Test func pipelinedFetches() throws {
        let server = try TestServer.shared()
        let c = try IMAPConnection.open(Self.settings(server))
        defer { c.logout() }
        let box = try Self.freshMailbox(c, "pipe")
        var uids: [UInt32] = []
        for i in 0..<30 { uids.append(try c.append(to: box, message: Self.message("p\(i)"))!.uid) }
        _ = try c.select(box)
        var seen: [UInt32] = []
        var collector = MessageInfoCollector()
        let done = try c.pipeline(
            uids.map { .uidFetch(UIDSet($0), [.uid, .flags]) }, window: 8,
            fetch: { if let m = collector.feed($0) { seen.append(m.uid) } })
        #expect(done.count == 30 && done.allSatisfy { $0.status == .ok })
        #expect(seen == uids)
    }

    @Test func idleSeesAnotherConnectionsAppend() throws {
        let server = try TestServer.shared()
        let idler = try IMAPConnection.open(Self.settings(server))
        let writer = try IMAPConnection.open(Self.settings(server))
        defer { idler.logout(); writer.logout() }
        let box = try Self.freshMailbox(writer, "idle")
        _ = try idler.select(box)
        let settings = Self.settings(server)
        let appender = startThread {
            // Another connection, so the IDLE connection only listens.
            if let other = try? IMAPConnection.open(settings) {
                usleep(500_000)
                _ = try? other.append(to: box, message: Self.message("idle"))
                other.logout()
            }
        }
        var seen: [IdleEvent] = []
        try idler.idle(seconds: 10) {
            seen.append($0); if case .untagged(.exists) = $0 { return true }; return false
        }
        appender.join()
        #expect(seen.contains(.untagged(.exists(1))))
    }

    /// A flag set by another client reaches an idler as an unsolicited FETCH (the watcher syncs on it).
    @Test func idleReportsAnotherClientsFlagChange() throws {
        let server = try TestServer.shared()
        let idler = try IMAPConnection.open(Self.settings(server))
        let writer = try IMAPConnection.open(Self.settings(server))
        defer { idler.logout(); writer.logout() }
        let box = try Self.freshMailbox(writer, "idleflag")
        let uid = try writer.append(to: box, message: Self.message("idleflag"))!.uid
        _ = try idler.select(box, readOnly: true)
        _ = try writer.select(box)
        let flagger = startThread {
            usleep(500_000)
            _ = try? writer.store(UIDSet(uid), StoreAction(.add, [.flagged], silent: true))
        }
        var seen: [IdleEvent] = []
        try idler.idle(seconds: 10) {
            seen.append($0); if case .fetch = $0 { return true }; return false
        }
        flagger.join()
        #expect(seen.contains { if case .fetch(let m) = $0 { m.flags?.contains(.flagged) == true } else { false } })
    }

    /// NOTIFY (Dovecot offers it with its mailbox list index): one connection, nothing selected, hears about
    /// new mail, flag changes and new mailboxes anywhere as STATUS and LIST responses.
    @Test func notifyReportsEveryMailboxOnOneConnection() throws {
        let server = try TestServer.start(listIndex: true)
        defer { server.stop() }
        let watcher = try IMAPConnection.open(Self.settings(server))
        let writer = try IMAPConnection.open(Self.settings(server))
        defer { watcher.logout(); writer.logout() }
        #expect(watcher.supportsNotify)
        try watcher.enable([.qresync, .condstore])
        let box = try Self.freshMailbox(writer, "notify")
        let uid = try writer.append(to: box, message: Self.message("notify"))!.uid
        try watcher.notify([NotifyEventGroup(.personal, [.messageNew, .messageExpunge, .flagChange, .mailboxName])])
        _ = try writer.select(box)
        let changer = startThread {
            usleep(300_000)
            _ = try? writer.store(UIDSet(uid), StoreAction(.add, [.flagged], silent: true))
            usleep(1_500_000)  // Dovecot reports changes close together as one STATUS
            _ = try? writer.append(to: box, message: Self.message("notify2"))
            _ = try? writer.create(MailboxName("notify-new"))
        }
        var statuses: [StatusResponse] = [], lists: [MailboxName] = []
        try watcher.idle(seconds: 10) { event in
            if case .untagged(.status(let s)) = event { statuses.append(s) }
            if case .untagged(.list(let l)) = event { lists.append(l.mailbox) }
            return !lists.isEmpty && statuses.contains { $0.messages == 2 }
        }
        changer.join()
        #expect(statuses.contains { $0.mailbox == box && $0.messages == nil && $0.highestModSeq != nil }, "flag change: \(statuses)")
        #expect(statuses.contains { $0.mailbox == box && $0.messages == 2 }, "new message: \(statuses)")
        #expect(lists == [MailboxName("notify-new")])
        try watcher.notify([])
    }

    @Test func qresyncReportsVanishedAfterAnotherConnectionExpunges() throws {
        let server = try TestServer.shared()
        let a = try IMAPConnection.open(Self.settings(server))
        let b = try IMAPConnection.open(Self.settings(server))
        defer { a.logout(); b.logout() }
        try a.enable([.qresync])
        let box = try Self.freshMailbox(a, "qresync")
        let uids = try (0..<4).map { try a.append(to: box, message: Self.message("q\($0)"))!.uid }
        let first = try a.select(box)
        let modseq = first.highestModSeq!
        _ = try a.select(MailboxName.inbox)

        _ = try b.select(box)
        try b.delete(UIDSet(uids[1]))
        try b.store(UIDSet(uids[2]), StoreAction(.add, [.flagged], silent: true))

        let again = try a.select(
            box,
            qresync: QResyncParameters(
                uidValidity: first.uidValidity, modSeq: modseq,
                knownUIDs: UIDSet(uids: uids)))
        #expect(again.vanished.elements == [uids[1]])
        #expect(again.changed.map(\.uid) == [uids[2]])
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// `ScriptedIMAPServer` scripted by whole lines, for cases no real server produces on demand (no STARTTLS).
/// `respond` gets each command line; nil: CAPABILITY is answered, anything else BAD.
func lineScriptedServer(greeting: String, respond: @escaping @Sendable (String) -> String? = { _ in nil }) throws -> ScriptedIMAPServer {
    try ScriptedIMAPServer(greeting: [.text(greeting)]) { r in
        if let reply = respond(r.lineText) { return [.text(reply)] }
        return [.text(r.verb == "CAPABILITY" ? "* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n\(r.tag) OK done\r\n" : "\(r.tag) BAD no\r\n")]
    }
}

final class LockedText: Sendable {
    let value = Mutex<String>("")
}
