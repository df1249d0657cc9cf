import Testing
import MoCore
import MoTestSupport

/// The built executables, run as a user runs them: exit codes, first lines of help, error lines.
struct CLITests {
    static func run(_ tool: String, _ args: [String], env: [String: String] = [:]) throws -> ChildProcess.Result {
        try ChildProcess.run([TestPaths.binDirectory + "/" + tool] + args, environment: env)
    }

    @Test(arguments: ["mo-sync", "mo-index", "mo-sendmail"])
    func versionNamesTheTool(tool: String) throws {
        let r = try Self.run(tool, ["--version"])
        #expect(r.status == 0)
        #expect(r.stdoutString == "\(tool) \(MoVersion.string)\n")
    }

    @Test(arguments: ["mo-sync", "mo-index", "mo-sendmail"])
    func helpTeaches(tool: String) throws {
        let r = try Self.run(tool, ["--help"])
        #expect(r.status == 0)
        #expect(r.stdoutString.contains("mo-"))
        #expect(r.stdoutString.lowercased().contains("usage"))
    }

    @Test func missingConfigIsExitCode78WithOneLine() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let r = try Self.run("mo-sync", [], env: ["XDG_CONFIG_HOME": dir.path, "MO_CONFIG": ""])
        #expect(r.status == 78)
        #expect(
            r.stderrString == "mo-sync: no config file at \(dir.path)/mo/config.toml "
                + "(mo-sync init ADDRESS writes one; or pass --config FILE or set MO_CONFIG)\n")
    }

    /// A bad config file (a wrong type, named by line and key) or an unknown account: exit 78 and one line
    /// naming the file.
    @Test(arguments: [
        ("\nport = \"993\"", [], ":7: account.work.imap.port: expected an integer, found a string"),
        ("", ["home"], ": no account named 'home' (accounts: work)")
    ])
    func configErrorsNameTheFile(extra: String, args: [String], error: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.path + "/config.toml"
        try writePrivateFile(file, minimalConfig() + extra)
        let r = try Self.run("mo-sync", ["--config", file] + args)
        #expect(r.status == 78)
        #expect(r.stderrString == "mo-sync: \(file)\(error)\n")
    }

    /// mo-sync reads plain invocations without ArgumentParser (`SyncRun.init?(fastArguments:)`): each pair is
    /// a form it reads and one only ArgumentParser takes (`--config=FILE`), with the same answer.
    @Test(arguments: [
        (["--config", "F"], ["--config=F"]),
        (["sync", "--config", "F", "home"], ["sync", "--config=F", "home"]),
        (["-q", "--dry-run", "--config", "F", "work"], ["--quiet", "--dry-run", "--config=F", "work"]),
        (["--json", "--config", "F", "home", "work"], ["--json", "--config=F", "home", "work"])
    ])
    func theFastReadingAnswersAsArgumentParser(fast: [String], full: [String]) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.path + "/config.toml"
        try writePrivateFile(file, minimalConfig() + "\nport = \"993\"")
        func run(_ args: [String]) throws -> ChildProcess.Result {
            try Self.run("mo-sync", args.map { $0 == "F" ? file : $0.replacingOccurrences(of: "=F", with: "=" + file) })
        }
        let a = try run(fast), b = try run(full)
        #expect(a.status == 78 && a.status == b.status && a.stderrString == b.stderrString && a.stdoutString == b.stdoutString)
    }

    @Test func badUsageIsExitCode64() throws {
        let r = try Self.run("mo-sync", ["--no-such-flag"])
        #expect(r.status == 64)
        #expect(r.stderrString.contains("--no-such-flag"))
        let both = try Self.run("mo-sync", ["--quiet", "--verbose"])
        #expect(both.status == 64)
    }

    @Test func indexTakesAMaildirWithoutConfig() throws {
        let r = try Self.run("mo-index", ["--maildir", "/nonexistent", "--config", "x", "update"])
        #expect(r.status == 64)
    }
}
