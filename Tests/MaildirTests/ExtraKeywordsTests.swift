import Testing
import MoCore
import MoTestSupport
@testable import Maildir

#if canImport(Glibc)
    import Glibc
#endif

/// `mo-keywords`: the byte format, strict and lenient reading, the invariant that a keyword with a letter is
/// not kept here, and the save that announces the change by cur/'s time.
@Suite struct ExtraKeywordsTests {
    @Test func renderedBytesAndBack() throws {
        var e = ExtraKeywords()
        e.set(["travel/2024", "project-x"], for: "1700000000.M1P2.host")
        e.set(["a b", "ünï", "x%y"], for: "odd name\t1")
        e.set([], for: "none")
        let text = String(decoding: e.rendered, as: UTF8.self)
        #expect(
            text == "# mo-keywords 1\n1700000000.M1P2.host\tproject-x travel/2024\nodd%20name%091\ta%20b x%25y %C3%BCn%C3%AF\n")
        #expect(try ExtraKeywords.parse(e.rendered, file: "F") == e)
    }

    @Test(arguments: [
        ("# mo-keywords 1\nno-tab\n", "F:2: expected \"UNIQUE<TAB>KEYWORD …\""),
        ("u\ta  b\n", "F:1: expected"),
        ("u\t\n", "F:1: expected"),
        ("u\tk\nu\tj\n", "F:2: the message \"u\" is given twice"),
        ("u\tk%zz\n", "F:1: expected"),
        ("a/b\tk\n", "F:1: expected"),
        ("u\tk", "F:1:")
    ])
    func strictParseNamesTheLine(_ text: String, _ message: String) {
        let error = #expect(throws: MaildirError.self) { try ExtraKeywords.parse(Array(text.utf8), file: "F") }
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
        // Lenient: the good lines stand.
        let lenient = try? ExtraKeywords.parse(Array(("ok\tk\n" + text).utf8), file: "F", lenient: true)
        #expect(lenient?.keywords(of: "ok") == ["k"])
    }

    @Test func saveIsAtomicAndMovesCurTime() throws {
        let dir = TempDirectory()
        let folder = MaildirFolder(path: dir.path + "/INBOX")
        try folder.create()
        var e = ExtraKeywords()
        e.set(["k27"], for: "u1")
        let before = directoryModificationTime(folder.path + "/cur")!
        usleep(20_000)
        try e.save(folder: folder.path)
        #expect(directoryModificationTime(folder.path + "/cur")! > before)
        #expect(try ExtraKeywords.load(folder: folder.path) == e)
        #expect(access(folder.path + "/mo-keywords.new", F_OK) != 0)
        // Empty: the file goes.
        try ExtraKeywords().save(folder: folder.path)
        #expect(access(folder.path + "/mo-keywords", F_OK) != 0)
        #expect(try ExtraKeywords.load(folder: folder.path).isEmpty)
    }
}
