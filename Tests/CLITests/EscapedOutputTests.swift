import Testing
import MoCore
import MoTestSupport

/// A server's text reaches the terminal escaped (issue #14): mo-sync against a scripted server whose NO to
/// SELECT carries ESC[2J and an OSC title string.
struct EscapedOutputTests {
    @Test func imapRefusalTextIsPrintedEscaped() throws {
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX")]) { r in
            r.verb == "SELECT" || r.verb == "EXAMINE" ? [.text("\(r.tag) NO \u{1B}[2J\u{1B}]0;pwned\u{7}mailbox gone\r\n")] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status != 0)
        #expect(!r.stderr.contains(0x1B) && !r.stderr.contains(0x07), "raw escapes reached the terminal: \(r.stderrString)")
        #expect(r.stderrString.contains("refused: \\u{1B}[2J\\u{1B}]0;pwned\\u{7}mailbox gone"), "\(r.stderrString)")
    }
}
