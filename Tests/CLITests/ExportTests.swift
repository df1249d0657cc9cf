import Foundation
import Testing
import MoCore
import MoTestSupport

/// `mo-index export`: the fixtures (plus a message whose body lines start with From and >From) exported
/// as mboxrd and read back with Python's mailbox module are the original files, byte for byte: every
/// indexed message once.
@Suite struct ExportTests {
    /// The fixtures with `text` added as INBOX/cur/`name`, indexed (see `IndexCLITests.setUp`).
    static func indexed(adding text: String, as name: String) throws -> (TemporaryDirectory, [String]) {
        let (dir, loc) = try IndexCLITests.setUp()
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path + "/mail/INBOX/cur/" + name))
            #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
            return (dir, loc)
        } catch {
            dir.remove()
            throw error
        }
    }

    /// `--format json`: every message once, with the documented fields, its text and its attachments.
    @Test func jsonHasHeadersTextAndAttachments() throws {
        let withAttachment =
            "From: Ann <ann@example.com>\nTo: bob@example.com\nSubject: =?utf-8?q?Pl=C3=A4ne?=\n"
            + "Message-ID: <att@example.com>\nDate: Tue, 24 Nov 2026 10:00:00 +0000\nMIME-Version: 1.0\n"
            + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nSee the plan.\n"
            + "--b\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=plan.pdf\n"
            + "Content-Transfer-Encoding: base64\n\nJVBERi0x\n--b--\n"
        let (dir, loc) = try Self.indexed(adding: withAttachment, as: "2001.att.host:2,S")
        defer { dir.remove() }
        let count = try IndexCLITests.run(loc + ["count", "*"]).stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)
        let r = try IndexCLITests.run(loc + ["export", "--format", "json", "*"])
        #expect(r.status == 0, "\(r.stderrString)")
        let d = try JSONOutputTests.parse(r, "export --format json")
        if let d { try JSONOutputTests.expectDocumented(d, "export --format json") }
        let messages = d?["messages"] as? [[String: Any]] ?? []
        #expect(String(messages.count) == count)
        let m = try #require(messages.first { $0["id"] as? String == "att@example.com" })
        #expect(m["subject"] as? String == "Pläne")
        #expect((m["text"] as? String)?.contains("See the plan.") == true)
        #expect((m["attachments"] as? [[String: Any]])?.first?["filename"] as? String == "plan.pdf")
        #expect((m["from"] as? [[String: Any]])?.first?["address"] as? String == "ann@example.com")
        #expect((m["headers"] as? [[String]])?.contains(["Subject", "Pläne"]) == true)
    }

    @Test func mboxRoundTripsByteForByte() throws {
        let tricky =
            "From: Quoter <q@example.com>\nSubject: From lines\nMessage-ID: <from-lines@example.com>\n"
            + "Date: Tue, 24 Nov 2026 10:00:00 +0000\n\nFrom the start.\n>From quoted.\n>>From twice.\nFrom\nlast"
        let (dir, loc) = try Self.indexed(adding: tricky, as: "2000.tricky.host:2,S")
        defer { dir.remove() }
        let inbox = dir.path + "/mail/INBOX/cur/"

        let mbox = dir.path + "/all.mbox"
        let r = try IndexCLITests.run(loc + ["export", "-o", mbox, "*"])
        #expect(r.status == 0, "\(r.stderrString)")
        let check = """
            import glob, mailbox, re, sys
            box = mailbox.mbox(sys.argv[1])
            unquote = lambda b: re.sub(rb'(?m)^>(>*From )', rb'\\1', b)
            got = sorted(unquote(box.get_bytes(k)) for k in box.keys())
            want = []
            for f in glob.glob(sys.argv[2] + '*'):
                b = open(f, 'rb').read()
                want.append(b if b.endswith(b'\\n') else b + b'\\n')   # mbox ends every message with a newline
            # Files with one Message-ID are one message: each exported message is one of its files.
            print(len(got), len(set(got)), all(g in want for g in got))
            """
        let p = try ChildProcess.run(["python3", "-c", check, mbox, inbox])
        let words = p.stdoutString.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let count = try IndexCLITests.run(loc + ["count", "*"]).stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            words.count == 3 && words[0] == count && words[1] == count && words[2] == "True",
            "\(p.stdoutString)\(p.stderrString) count \(count)")
        #expect(String(decoding: FileManager.default.contents(atPath: mbox) ?? Data(), as: UTF8.self).contains("\n>>From quoted.\n"))

        // A query narrows it; standard output works too.
        let one = try IndexCLITests.run(loc + ["export", "id:from-lines@example.com"])
        #expect(one.stdoutString.hasPrefix("From q@example.com Tue Nov 24 10:00:00 2026\nFrom: Quoter"), "\(one.stdoutString)")
    }
}
