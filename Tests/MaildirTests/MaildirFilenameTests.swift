@testable import Maildir

/// One line summing up a parse: the parts and the re-rendered name, or the exact error message.
private func summary(_ name: String, separator: Character = ":") -> String {
    do {
        let f = try MaildirFilename(parsing: name, separator: separator)
        return "unique=\(f.unique) uid=\(f.uid.map(String.init) ?? "-") flags=\(f.flags.letters) -> \(f.rendered)"
    } catch {
        return "error: \(error.description)"
    }
}

@Suite struct MaildirFilenameTests {
    static let cases: [(String, String)] = [
        // Plain names.
        ("1700000000.M1P2Q3.host", "unique=1700000000.M1P2Q3.host uid=- flags= -> 1700000000.M1P2Q3.host"),
        ("1700000000.M1P2Q3.host:2,", "unique=1700000000.M1P2Q3.host uid=- flags= -> 1700000000.M1P2Q3.host:2,"),
        ("1700000000.M1P2Q3.host:2,S", "unique=1700000000.M1P2Q3.host uid=- flags=S -> 1700000000.M1P2Q3.host:2,S"),
        ("a:2,DFPRST", "unique=a uid=- flags=DFPRST -> a:2,DFPRST"),
        ("a:2,FSab", "unique=a uid=- flags=FSab -> a:2,FSab"),
        ("a:2,Xz", "unique=a uid=- flags=Xz -> a:2,Xz"),
        // Out-of-order flags: accepted, rendered sorted.
        ("a:2,SF", "unique=a uid=- flags=FS -> a:2,FS"),
        ("a:2,aS", "unique=a uid=- flags=Sa -> a:2,Sa"),
        ("a:2,zaT", "unique=a uid=- flags=Taz -> a:2,Taz"),
        // mbsync UIDs.
        ("1.M1P1.host,U=123:2,S", "unique=1.M1P1.host uid=123 flags=S -> 1.M1P1.host,U=123:2,S"),
        ("1.M1P1.host,U=4294967295", "unique=1.M1P1.host uid=4294967295 flags= -> 1.M1P1.host,U=4294967295"),
        ("1.host,S=1234,U=7,W=1300:2,RS", "unique=1.host,S=1234,W=1300 uid=7 flags=RS -> 1.host,S=1234,U=7,W=1300:2,RS"),
        ("1.host,U=0:2,", "unique=1.host uid=0 flags= -> 1.host,U=0:2,"),
        ("U=5:2,S", "unique=U=5 uid=- flags=S -> U=5:2,S"),
        ("1.host,XU=5", "unique=1.host,XU=5 uid=- flags= -> 1.host,XU=5"),
        ("Entwürfe-ünïcode:2,S", "unique=Entwürfe-ünïcode uid=- flags=S -> Entwürfe-ünïcode:2,S"),
        // Refused.
        ("", #"error: maildir file name "": empty name"#),
        (".hidden:2,S", #"error: maildir file name ".hidden:2,S": starts with ".""#),
        (".", #"error: maildir file name ".": starts with ".""#),
        ("..", #"error: maildir file name "..": starts with ".""#),
        ("../../etc/passwd", #"error: maildir file name "../../etc/passwd": contains "/""#),
        ("a/b:2,S", #"error: maildir file name "a/b:2,S": contains "/""#),
        ("a\u{0}b", #"error: maildir file name "a\u{0}b": contains NUL"#),
        ("a:1,S", #"error: maildir file name "a:1,S": unsupported info "1,S" (only "2," is supported)"#),
        ("a:3,x", #"error: maildir file name "a:3,x": unsupported info "3,x" (only "2," is supported)"#),
        ("a:", #"error: maildir file name "a:": unsupported info "" (only "2," is supported)"#),
        ("a:2", #"error: maildir file name "a:2": unsupported info "2" (only "2," is supported)"#),
        ("a:2,S:2,S", #"error: maildir file name "a:2,S:2,S": more than one ":" info separator"#),
        ("a:2,S1", #"error: maildir file name "a:2,S1": non-letter "1" in flags"#),
        ("a:2,S,", #"error: maildir file name "a:2,S,": non-letter "," in flags"#),
        ("a:2,S\n", #"error: maildir file name "a:2,S\u{A}": non-letter "\u{A}" in flags"#),
        ("a:2,Sä", #"error: maildir file name "a:2,Sä": non-letter "ä" in flags"#),
        ("a:2,SS", #"error: maildir file name "a:2,SS": flag "S" repeated"#),
        ("a:2,FSF", #"error: maildir file name "a:2,FSF": flag "F" repeated"#),
        (":2,S", #"error: maildir file name ":2,S": empty unique part"#),
        (",U=5:2,S", #"error: maildir file name ",U=5:2,S": empty unique part apart from the ",U=" field"#),
        ("a,U=1,U=2:2,S", #"error: maildir file name "a,U=1,U=2:2,S": more than one ",U=" field"#),
        ("a,U=:2,S", #"error: maildir file name "a,U=:2,S": malformed ",U=" field"#),
        ("a,U=12x:2,S", #"error: maildir file name "a,U=12x:2,S": malformed ",U=12x" field"#),
        ("a,U=007", #"error: maildir file name "a,U=007": malformed ",U=007" field"#),
        ("a,U=4294967296", #"error: maildir file name "a,U=4294967296": malformed ",U=4294967296" field"#)
    ]

    @Test(arguments: cases)
    func parse(_ name: String, _ expected: String) {
        #expect(summary(name) == expected)
    }

    /// The byte reading the scan uses for most names gives what the full parser gives, or leaves the name
    /// to it: never a name the parser refuses, never a name with a UID field.
    @Test(arguments: cases)
    func plainPartsAgreeWithTheParser(_ name: String, _ expected: String) {
        var bytes = name
        let plain = bytes.withUTF8 { b in
            MaildirFilename.plainParts(b, separator: UInt8(ascii: ":")).map { (String(decoding: $0.unique, as: UTF8.self), $0.flags) }
        }
        guard let plain else { return }
        let full = try? MaildirFilename(parsing: name)
        #expect(full?.unique == plain.0 && full?.flags == plain.1 && full?.uid == nil, "\(name)")
    }

    @Test func plainPartsReadPlainNames() {
        var plainCount = 0
        for (name, _) in Self.cases {
            var bytes = name
            if bytes.withUTF8({ MaildirFilename.plainParts($0, separator: UInt8(ascii: ":")) }) != nil { plainCount += 1 }
        }
        #expect(plainCount == 12)
    }

    @Test func errorsAreDataErrors() {
        #expect(throws: MaildirFilenameError(filename: "a:2,SS", reason: "flag \"S\" repeated")) {
            try MaildirFilename(parsing: "a:2,SS")
        }
        #expect(MaildirFilenameError(filename: "x", reason: "y").kind == .data)
    }

    @Test func otherSeparators() {
        #expect(summary("a!2,S", separator: "!") == "unique=a uid=- flags=S -> a!2,S")
        #expect(summary("a;2,RS", separator: ";") == "unique=a uid=- flags=RS -> a;2,RS")
        // With "!" as separator, ":" is an ordinary unique-part byte.
        #expect(summary("a:b!2,S", separator: "!") == "unique=a:b uid=- flags=S -> a:b!2,S")
        #expect(summary("a", separator: "/") == #"error: maildir file name "a": unusable info separator "/""#)
    }

    @Test func canonicalFlag() throws {
        #expect(try MaildirFilename(parsing: "a:2,FS").isCanonical)
        #expect(try !MaildirFilename(parsing: "a:2,SF").isCanonical)
    }

    @Test func changingFlagsAndUID() throws {
        let f = try MaildirFilename(parsing: "1.host,U=5,S=100:2,S")
        #expect(f.withFlags([.seen, .flagged, .replied]).rendered == "1.host,U=5,S=100:2,FRS")
        #expect(f.withFlags([]).rendered == "1.host,U=5,S=100:2,")
        #expect(f.withUID(77).rendered == "1.host,U=77,S=100:2,S")
        #expect(f.withUID(nil).rendered == "1.host,S=100:2,S")
        #expect(f.withUID(nil).withUID(9).rendered == "1.host,U=9,S=100:2,S")
        let plain = try MaildirFilename(parsing: "1.host")
        #expect(plain.withUID(3).rendered == "1.host,U=3")
        #expect(plain.withUID(3).withUID(4).rendered == "1.host,U=4")
        #expect(plain.withFlags(MaildirFlags(letters: "Sa")!).rendered == "1.host:2,Sa")
        #expect(try MaildirFilename(parsing: plain.withUID(3).withFlags(.seen).rendered).uid == 3)
    }

    @Test func newNames() throws {
        #expect(try MaildirFilename(unique: "1.M2P3.h", flags: .seen, uid: 9, hasInfo: true).rendered == "1.M2P3.h,U=9:2,S")
        #expect(throws: MaildirFilenameError.self) { try MaildirFilename(unique: "1.h:2,S") }
        #expect(throws: MaildirFilenameError.self) { try MaildirFilename(unique: "1.h,U=4") }
        #expect(throws: MaildirFilenameError.self) { try MaildirFilename(unique: ".x") }
    }

    @Test func flagsValue() {
        var f: MaildirFlags = [.trashed, .seen, .draft]
        #expect(f.letters == "DST")
        #expect(f.isSeen && f.isDraft && f.isTrashed && !f.isFlagged && !f.isReplied && !f.isPassed)
        f.insert(MaildirFlags(letter: UInt8(ascii: "k"))!)
        f.insert(MaildirFlags(letter: UInt8(ascii: "b"))!)
        #expect(f.letters == "DSTbk")
        #expect(f.keywords == "bk")
        #expect(MaildirFlags(letters: "SS") == nil)
        #expect(MaildirFlags(letters: "S1") == nil)
        #expect(MaildirFlags(letters: "zA")?.letters == "Az")
        #expect(MaildirFlags(letter: UInt8(ascii: "1")) == nil)
    }
}
