import Testing
import MoCore
import MoTestSupport

/// The man pages are one set: the same header form, naming the version the programs report.
@Suite struct ManPageTests {
    @Test(arguments: ["mo-sync.1", "mo-index.1", "mo-sendmail.1", "mo.toml.5"])
    func headerNamesTheRelease(file: String) throws {
        let path = TestPaths.projectRoot + "/docs/\(file)"
        let page = String(file.split(separator: ".").dropLast().joined(separator: ".")), section = file.split(separator: ".").last!
        guard case .success(let bytes) = readWholeFile(path) else { Issue.record("cannot read \(path)"); return }
        let first = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        #expect(first == ".TH \(page.uppercased()) \(section) \"2026\" \"mo \(MoVersion.string)\" \"Magnum Opus\"", "\(first)")
    }

    /// Every long option `--help` shows is in the man page, and the man page shows no other (besides
    /// options of other programs it quotes, and --help/--version, which every program has).
    @Test(
        arguments: [
            // systemctl's, in EXAMPLES; mo-index tags's, in FILES
            ("mo-sync", [[], ["sync"], ["status"], ["fetch"], ["init"], ["login"]], ["--user", "--now", "--unsynced"]),
            (
                "mo-index",
                [
                    [], ["update"], ["query"], ["thread"], ["count"], ["address"], ["flag"], ["tag"], ["tags"], ["move"], ["export"],
                    ["dump"], ["restore"], ["compact"], ["snooze"], ["snoozed"], ["undo"], ["history"]
                ], ["--name", "--duplicate", "--batch", "--query"]  // notmuch's, under `notmuch`
            ),
            ("mo-sendmail", [[]], ["--watch"])  // mo-sync's
        ] as [(String, [[String]], [String])])
    func optionsMatchHelp(program: String, commands: [[String]], quoted: [String]) throws {
        func longOptions(_ text: String) -> Set<String> {
            var found = Set<String>()
            var rest = Substring(text)
            while let r = rest.firstRange(of: "--") {
                let name = rest[r.upperBound...].prefix { $0.isLetter || $0 == "-" }
                if let first = name.first, first.isLetter { found.insert("--" + name) }
                rest = rest[r.upperBound...]
            }
            return found
        }
        var help = ""
        for c in commands {
            help += try ChildProcess.run([TestPaths.binDirectory + "/" + program] + c + ["--help"]).stdoutString
        }
        guard case .success(let bytes) = readWholeFile(TestPaths.projectRoot + "/docs/\(program).1") else {
            Issue.record("no man page for \(program)"); return
        }
        var page = "", escaped = false
        for ch in String(decoding: bytes, as: UTF8.self) {  // groff's \- is a plain -
            if escaped { escaped = false; if ch != "-" { page.append("\\") }; page.append(ch); continue }
            if ch == "\\" { escaped = true } else { page.append(ch) }
        }
        let inHelp = longOptions(help).subtracting(["--help", "--version"])
        let inPage = longOptions(page).subtracting(quoted).subtracting(["--help", "--version"])
        #expect(inHelp.subtracting(inPage).isEmpty, "\(program): in --help, not in the man page: \(inHelp.subtracting(inPage).sorted())")
        #expect(inPage.subtracting(inHelp).isEmpty, "\(program): in the man page, not in --help: \(inPage.subtracting(inHelp).sorted())")
    }
}
