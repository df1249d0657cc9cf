@testable import Maildir

struct MaildirKeywordsTests {
    @Test func parseAssignRender() {
        var k = MaildirKeywords(parsing: Array("0 $Label1\n2 work\nbad line\n30 out-of-range\n1 \n".utf8))
        #expect(k.letter(for: "$Label1") == MaildirFlags(letter: UInt8(ascii: "a")))
        #expect(k.letter(for: "WORK") == MaildirFlags(letter: UInt8(ascii: "c")))
        #expect(k.keyword(for: UInt8(ascii: "c")) == "work")
        #expect(k.keyword(for: UInt8(ascii: "b")) == nil)
        #expect(k.assignLetter(for: "urgent") == MaildirFlags(letter: UInt8(ascii: "b")))
        #expect(String(decoding: k.rendered, as: UTF8.self) == "0 $Label1\n1 urgent\n2 work\n")
    }

    @Test func atMost26() {
        var k = MaildirKeywords()
        for i in 0..<26 { #expect(k.assignLetter(for: "k\(i)") != nil) }
        #expect(k.assignLetter(for: "one-too-many") == nil)
        #expect(k.letter(for: "k25") == MaildirFlags(letter: UInt8(ascii: "z")))
    }

    /// Issue 17: a message moving between folders keeps its keywords, whatever letters they have there.
    /// Rows: source letters → target letters, the keywords the target table gains, the overflow.
    @Test(
        arguments: [
            ("Sa", "Sb", [String](), [String](), "known in the target under another letter"),
            ("Fc", "Fc", ["todo"], [], "new in the target: the first free letter"),
            ("Sab", "Sbc", ["=C3=A4pfel"], [], "one known, one new"),
            ("Rz", "R", [], [], "a letter with no keyword in the source carries no tag"),
            ("S", "S", [], [], "no keyword letters: nothing to do")
        ] as [(String, String, [String], [String], String)])
    func translate(from: String, to: String, gained: [String], overflow: [String], reason: String) {
        let source = MaildirKeywords(parsing: Array("0 work\n1 =C3=A4pfel\n2 todo\n".utf8))
        var target = MaildirKeywords(parsing: Array("0 other\n1 WORK\n".utf8))
        let before = target
        let t = MaildirKeywords.translate(MaildirFlags(letters: from)!, from: source, to: &target)
        #expect(t.flags == MaildirFlags(letters: to)!, "\(reason)")
        for k in gained { #expect(before.letter(for: k) == nil && target.letter(for: k) != nil, "\(reason)") }
        if gained.isEmpty { #expect(target == before, "\(reason)") }
        #expect(t.overflow == overflow, "\(reason)")
    }

    @Test func translateIntoAFullTableReportsTheOverflow() {
        let source = MaildirKeywords(parsing: Array("0 work\n1 keep\n".utf8))
        var target = MaildirKeywords()
        for i in 0..<25 { _ = target.assignLetter(for: "k\(i)") }
        _ = target.assignLetter(for: "keep")  // z
        let t = MaildirKeywords.translate(MaildirFlags(letters: "Sab")!, from: source, to: &target)
        #expect(t.flags == MaildirFlags(letters: "Sz")!)
        #expect(t.overflow == ["work"])
    }
}

struct MaildirKeywordsLockTests {
    /// One writer of a folder's table at a time (mo-sync for a folder's sync, mo-index while it adds
    /// letters); the second gets a busy error naming the folder, and the lock goes with its holder.
    @Test func oneWriterAtATime() throws {
        let dir = TempDirectory()
        var first: FileLock? = try MaildirKeywords.lock(folder: dir.path, wait: 0)
        #expect(throws: MaildirError.self) { _ = try MaildirKeywords.lock(folder: dir.path, wait: 0.1) }
        do {
            _ = try MaildirKeywords.lock(folder: dir.path, wait: 0)
        } catch {
            #expect(error.kind == .busy && "\(error)".contains("cannot change the keyword table of \(dir.path)"))
        }
        withExtendedLifetime(first) {}
        first = nil
        // A wait, not 0: a child another test spawns at this instant holds a copy of the released
        // descriptor until its exec closes it (O_CLOEXEC), which under load can take a moment.
        #expect(try MaildirKeywords.lock(folder: dir.path, wait: 2).path == dir.path + "/mo-keywords.lock")
    }

    /// Issue #14: mo-sync and the commands that write the table read it strictly; each damage names
    /// file:line (control bytes escaped), since skipping a line would hand its letter to another keyword.
    @Test(arguments: [
        ("0 work\n1 tod", "F:2: incomplete last line \"1 tod\" (the file was cut short)"),
        ("0 work\nbad line\n", "F:2: expected \"INDEX KEYWORD\", found \"bad line\""),
        ("0 work\n1 \n", "F:2: expected \"INDEX KEYWORD\", found \"1 \""),
        ("+1 work\n", "F:1: expected \"INDEX KEYWORD\", found \"+1 work\""),
        ("26 work\n", "F:1: keyword index 26 is not in 0…25 (letters a…z)"),
        ("0 work\n0 todo\n", "F:2: keyword index 0 given twice"),
        ("0 w\u{1B}[2J\n\n", "F:2: expected \"INDEX KEYWORD\", found \"\""),
        ("\u{1B}]0;x\u{07}\n", "F:1: expected \"INDEX KEYWORD\", found \"\\u{1B}]0;x\\u{7}\"")
    ])
    func strictParseNamesFileAndLine(text: String, message: String) {
        #expect { try MaildirKeywords.parse(Array(text.utf8), file: "F") } throws: { error in
            (error as? MaildirError)?.description == message && (error as? MaildirError)?.kind == .data
        }
    }

    @Test func strictParseAcceptsWhatDovecotWrites() throws {
        let bytes = Array("0 $Label1\n1 work\n3 Work\n".utf8)  // another case of a keyword: its first letter kept
        #expect(try MaildirKeywords.parse(bytes, file: "F") == MaildirKeywords(parsing: bytes))
        #expect(try MaildirKeywords.parse([], file: "F") == MaildirKeywords())
    }
}
