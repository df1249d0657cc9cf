#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// Issue 15: on a fresh machine the README's commands take a new user from `make install` through
/// `mo-sync init` to neomutt. The README's own shell blocks (Install, then Getting started) run as one
/// `sh -e` script, in order, for a new user: an empty HOME, no XDG variables, the system PATH. Only what
/// ties them to this machine is substituted: the debug build instead of a release one (as InstallTests),
/// the private Dovecot and Postfix named with init's flags, a password file instead of `pass`. The
/// last command, `neomutt`, runs on a tmux terminal and must show the seeded INBOX. The script, its log
/// and each screen are saved under `.build/artifacts/readme-walk/`.
@Suite(.serialized) struct ReadmeWalkTests {
    static let toolsInstalled = ["/usr/bin/neomutt", "/usr/bin/tmux", "/usr/bin/make"].allSatisfy { (path: String) in
        access(path, X_OK) == 0
    }

    @Test(.enabled(if: toolsInstalled || getenv("MO_CI") != nil, "neomutt, tmux or make is not installed; CI installs them"))
    func fromInstallToNeomutt() throws {
        guard Self.toolsInstalled else { Issue.record("neomutt, tmux or make is missing (apt-get install neomutt tmux make)"); return }
        guard case .success(let bytes) = readWholeFile(TestPaths.projectRoot + "/README.md") else { Issue.record("no README.md"); return }
        let readme = String(decoding: bytes, as: UTF8.self)
        let install = Self.shellBlocks(readme, section: "Install"), started = Self.shellBlocks(readme, section: "Getting started")
        try #require(
            install.count == 1 && started.count == 2, "README: \(install.count) Install and \(started.count) Getting-started blocks")

        // The server the README's address logs in to (init writes no user: the address is the login).
        let address = "me@example.org"
        let work = try TemporaryDirectory("mo-readme")
        defer { work.remove() }
        try #require(makeDirectories(work.path + "/seed/INBOX/cur") == nil && makeDirectories(work.path + "/home") == nil)
        for i in 1...3 {
            try writePrivateFile(
                work.path + "/seed/INBOX/cur/readme-\(i)",
                "From: Alice Example <alice@mo.test>\nTo: \(address)\nSubject: readme-\(i)\n"
                    + "Message-ID: <readme-\(i)@mo.test>\nDate: Tue, 24 Nov 2026 10:0\(i):00 +0000\n\nbody of readme-\(i)\n")
        }
        let servers = try MailServers.start(seed: [work.path + "/seed"], user: address)
        defer { servers.stop() }
        let home = work.path + "/home"

        // The README's commands, with these lines changed (each must be found exactly once).
        var substitutions: [(readme: String, here: String, used: Int)] = [
            ("sudo apt-get install ", "", 0),  // the machine has the packages
            // The debug build the tests run, taken as it is (SOURCES empty: never rebuilt, even after an edit).
            ("make install PREFIX=$HOME/.local ", "make install PREFIX=$HOME/.local CONFIG=debug SOURCES= ", 0),
            (
                "mo-sync init \(address) ",
                "mo-sync init --imap 127.0.0.1:\(servers.dovecot.imapPort) --smtp 127.0.0.1:\(servers.submissionPort)"
                    + " --ca-file \(servers.dovecot.caFile) --password-command 'cat ~/.mo-password' \(address) ", 0
            ),
            ("pass insert email/\(address) ", "printf '%s\\n' '\(servers.dovecot.password)' > ~/.mo-password ", 0)
        ]
        func substituted(_ block: String) -> String {
            block.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                guard let i = substitutions.firstIndex(where: { line.hasPrefix($0.readme) }) else { return String(line) }
                substitutions[i].used += 1
                let rest = line.dropFirst(substitutions[i].readme.count)
                return substitutions[i].here.isEmpty ? "" : substitutions[i].here + rest
            }.joined(separator: "\n")
        }
        var lines = (substituted(install[0]) + "\n" + substituted(started[0]) + "\n" + substituted(started[1])).split(separator: "\n")
        try #require(lines.last == "neomutt", "the README's last command: \(lines.last ?? "none")")
        lines.removeLast()
        for s in substitutions { #expect(s.used == 1, "README line starting '\(s.readme)' found \(s.used) times") }
        let script = """
            set -e
            cd '\(TestPaths.projectRoot)'
            {
            set -x
            \(lines.joined(separator: "\n"))
            } > ~/readme.log 2>&1
            neomutt

            """
        try writePrivateFile(home + "/readme.sh", script)

        let token = "readme" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let session = NeomuttSession(socket: "mo-\(token)", artifacts: TestPaths.projectRoot + "/.build/artifacts/readme-walk")
        defer { session.stop() }
        try? writePrivateFile(session.artifacts + "/readme.sh", script)
        func log() -> String {
            let text = (try? readWholeFile(home + "/readme.log").get()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            try? writePrivateFile(session.artifacts + "/readme.log", text)
            return text
        }
        // A new user's environment: nothing of this process's (env -i), the system PATH.
        try session.start(
            "env -i HOME=\(home) PATH=/usr/local/bin:/usr/bin:/bin TERM=xterm LANG=C.UTF-8 sh \(home)/readme.sh; echo $? > \(home)/exit")
        // Up to 2 minutes for the commands (a loaded CI machine); a failed command or a neomuttrc error ends it sooner.
        let deadline = monotonicSeconds() + 120
        var shown = false
        repeat {
            shown = session.wait(for: "readme-3", timeout: 1, step: "01-inbox")
        } while !shown && monotonicSeconds() < deadline && !session.screen.contains("Press any key") && access(home + "/exit", F_OK) != 0
        #expect(shown, "neomutt: \(session.screen)\nthe commands: \(log().suffix(3000))")
        guard shown else { return }
        let screen = session.screen
        #expect(screen.contains("readme-1") && screen.contains("readme-2") && screen.contains("NeoMutt: =INBOX [Msgs:3 "), "\(screen)")
        #expect(!screen.contains("Error in") && !screen.contains("Warning in"), "\(screen)")
        let commands = log()
        #expect(
            commands.contains("example: ok\n") && commands.contains("INBOX: +3 new") && commands.contains("mo-index: 3 new"), "\(commands)")

        session.keys("q")
        #expect(session.waitExit(home + "/exit"), "neomutt did not quit: \(session.screen)")
        let status = (try? readWholeFile(home + "/exit").get()).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(status == "0\n", "exit status \(status)")
    }

    /// The bodies of the ```sh blocks of README's `## section`, in order.
    static func shellBlocks(_ readme: String, section: String) -> [String] {
        var blocks: [String] = [], current: [Substring]?, inSection = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inSection = line == "## " + section; continue }
            guard inSection else { continue }
            if current == nil, line == "```sh" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n")); current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }
}
