import Testing
import MoCore
import MoTestSupport

/// mo-sync run as a user runs it against a `ScriptedIMAPServer`: a config in a temporary directory (Maildir
/// and state beside it), a short network timeout, and a hard bound on the run (SIGKILL, status 137: a hang).
struct ScriptedRun {
    let server: ScriptedIMAPServer
    let dir: TemporaryDirectory
    let config: String
    var maildir: String { dir.path + "/Mail" }
    var stateDirectory: String { dir.path + "/state" }

    init(
        _ server: ScriptedIMAPServer, timeout: String = "3s", tls: String = "none", password: String = "x",
        imap: String = "", account: String = "", general: String = ""
    ) throws {
        self.server = server
        do {
            dir = try TemporaryDirectory("mo-scripted")
            config = dir.path + "/config.toml"
            try writePrivateFile(
                config,
                """
                [general]
                state-dir = "\(dir.path)/state"
                \(general)
                [account.t]
                address = "me@example.com"
                maildir = "\(dir.path)/Mail"
                \(account)
                [account.t.imap]
                host = "127.0.0.1"
                port = \(server.port)
                tls = "\(tls)"
                user = "u"
                password-command = "echo \(password)"
                timeout = "\(timeout)"
                \(imap)
                """)
        } catch {
            server.stop()
            throw error
        }
    }

    /// Runs mo-sync; killed after `bound` seconds (a bound against hangs, not a benchmark).
    func sync(_ args: [String] = [], bound: Int = 60, env: [String: String] = [:]) throws -> ChildProcess.Result {
        try ChildProcess.run(
            ["timeout", "-s", "KILL", String(bound), TestPaths.binDirectory + "/mo-sync", "--config", config] + args,
            environment: env)
    }

    /// The message files of a folder (cur/ and new/), as paths relative to it.
    func files(_ folder: String) throws -> [String] {
        let r = try ChildProcess.run(["find", maildir + "/" + folder + "/cur", maildir + "/" + folder + "/new", "-type", "f"])
        return r.stdoutString.split(separator: "\n").map { String($0.dropFirst(maildir.count + folder.count + 2)) }.sorted()
    }

    /// The bodies of a folder's messages, sorted.
    func bodies(_ folder: String) throws -> [String] {
        try files(folder).map { try ChildProcess.run(["cat", maildir + "/" + folder + "/" + $0]).stdoutString }.sorted()
    }

    /// Every path in the temporary directory outside the Maildir root, the state directory and the config:
    /// must stay empty whatever the server says.
    func strayPaths() throws -> [String] {
        let r = try ChildProcess.run([
            "find", dir.path, "-mindepth", "1", "-not", "-path", maildir, "-not", "-path", maildir + "/*",
            "-not", "-path", stateDirectory, "-not", "-path", stateDirectory + "/*", "-not", "-path", config
        ])
        return r.stdoutString.split(separator: "\n").map(String.init)
    }

    /// Removes the directory and stops the server: a run owns the server it was made for.
    func remove() {
        dir.remove()
        server.stop()
    }
}

extension ChildProcess.Result {
    /// stderr's lines.
    var lines: [String] { stderrString.split(separator: "\n").map(String.init) }
}
