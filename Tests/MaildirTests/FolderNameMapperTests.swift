@testable import Maildir

private let V = FolderNameMapper(layout: .verbatim)
private let P = FolderNameMapper(layout: .maildirPlusPlus)

/// `path` or `path | warning`, or the exact error message.
private func summary(_ m: FolderNameMapper, _ name: String, _ d: Character?) -> String {
    do {
        let r = try m.localPath(forMailbox: name, delimiter: d)
        return r.warning.map { "\(r.path) | \($0)" } ?? r.path
    } catch {
        return "error: \(error.description)"
    }
}

struct MappingCase: Sendable, CustomTestStringConvertible {
    let layout: MaildirLayout
    let name: String
    let delimiter: Character?
    let expected: String
    /// The name the path maps back to; nil: the same name.
    let back: String?
    init(_ layout: MaildirLayout, _ name: String, _ delimiter: Character?, _ expected: String, back: String? = nil) {
        self.layout = layout; self.name = name; self.delimiter = delimiter; self.expected = expected; self.back = back
    }
    var testDescription: String { "\(layout.rawValue) \(quotedForMessage(name)) delim \(delimiter.map(String.init) ?? "nil")" }
}

@Suite struct FolderNameMapperTests {
    static let cases: [MappingCase] = [
        // verbatim
        .init(.verbatim, "INBOX", "/", "INBOX"),
        .init(.verbatim, "inbox", "/", "INBOX", back: "INBOX"),
        .init(.verbatim, "InBoX", nil, "INBOX", back: "INBOX"),
        .init(.verbatim, "INBOX/x", "/", "INBOX/x"),
        .init(.verbatim, "Lists/dev", "/", "Lists/dev"),
        .init(.verbatim, "Lists.dev", ".", "Lists/dev"),
        .init(.verbatim, "Lists.dev", "/", "Lists.dev"),
        .init(.verbatim, "Lists/dev", nil, "Lists%2Fdev | mailbox \"Lists/dev\": escaped as Lists%2Fdev"),
        .init(.verbatim, "a/b", ".", "a%2Fb | mailbox \"a/b\": escaped as a%2Fb"),
        .init(.verbatim, "Entw&APw-rfe", "/", "Entwürfe"),
        .init(.verbatim, "~peter/mail/&U,BTFw-/&ZeVnLIqe-", "/", "~peter/mail/台北/日本語"),
        .init(.verbatim, "&2D3eAA- Fun", "/", "😀 Fun"),
        .init(.verbatim, "Tom &- Jerry", "/", "Tom & Jerry"),
        .init(.verbatim, "50%", "/", "50%25"),
        .init(.verbatim, "a/cur", "/", "a/%63ur | mailbox \"a/cur\": escaped as a/%63ur"),
        .init(.verbatim, "new/tmp", "/", "%6Eew/%74mp | mailbox \"new/tmp\": escaped as %6Eew/%74mp"),
        .init(.verbatim, "Cur", "/", "Cur"),
        .init(.verbatim, ".hidden", "/", "%2Ehidden | mailbox \".hidden\": escaped as %2Ehidden"),
        .init(.verbatim, "a/../b", "/", "a/%2E%2E/b | mailbox \"a/../b\": escaped as a/%2E%2E/b"),
        .init(.verbatim, "./x", "/", "%2E/x | mailbox \"./x\": escaped as %2E/x"),
        .init(.verbatim, "...", "/", "%2E.. | mailbox \"...\": escaped as %2E.."),
        .init(.verbatim, "tab&AAk-x", "/", "tab%09x | mailbox \"tab&AAk-x\": escaped as tab%09x"),
        .init(.verbatim, "nul&AAA-x", "/", "nul%00x | mailbox \"nul&AAA-x\": escaped as nul%00x"),
        // hostile, refused
        .init(.verbatim, "..", "/", #"error: mailbox "..": refused: climbs above the account root"#),
        .init(.verbatim, "../../etc", "/", #"error: mailbox "../../etc": refused: climbs above the account root"#),
        .init(.verbatim, "a/../../b", "/", #"error: mailbox "a/../../b": refused: climbs above the account root"#),
        .init(.verbatim, "..", nil, #"error: mailbox "..": refused: climbs above the account root"#),
        .init(.verbatim, "/abs", "/", #"error: mailbox "/abs": refused: empty hierarchy level (leading, trailing or doubled delimiter)"#),
        .init(.verbatim, "a//b", "/", #"error: mailbox "a//b": refused: empty hierarchy level (leading, trailing or doubled delimiter)"#),
        .init(.verbatim, "a/", "/", #"error: mailbox "a/": refused: empty hierarchy level (leading, trailing or doubled delimiter)"#),
        .init(.verbatim, "", "/", #"error: mailbox "": refused: empty name"#),
        .init(.verbatim, "a\u{0}b", "/", #"error: mailbox "a\u{0}b": refused: invalid modified UTF-7: raw control character at offset 1"#),
        .init(.verbatim, "a\nb", "/", #"error: mailbox "a\u{A}b": refused: invalid modified UTF-7: raw control character at offset 1"#),
        .init(.verbatim, "Entwürfe", "/", #"error: mailbox "Entwürfe": refused: invalid modified UTF-7: raw non-ASCII byte at offset 4"#),
        .init(.verbatim, "&Jjo", "/", #"error: mailbox "&Jjo": refused: invalid modified UTF-7: unterminated "&" at offset 0"#),
        .init(
            .verbatim, "&AC4ALg-", "/",
            #"error: mailbox "&AC4ALg-": refused: invalid modified UTF-7: printable ASCII "." encoded in base64 at offset 0"#),
        .init(.verbatim, "a", "\n", #"error: mailbox "a": refused: unusable hierarchy delimiter "\u{A}""#),
        // maildir++
        .init(.maildirPlusPlus, "INBOX", ".", ""),
        .init(.maildirPlusPlus, "inbox", "/", "", back: "INBOX"),
        .init(.maildirPlusPlus, "Lists/dev", "/", ".Lists.dev"),
        .init(.maildirPlusPlus, "Lists.dev", ".", ".Lists.dev"),
        .init(.maildirPlusPlus, "INBOX/x", "/", ".INBOX.x"),
        .init(.maildirPlusPlus, "INBOX.x", ".", ".INBOX.x"),
        .init(.maildirPlusPlus, "v1.2/notes", "/", ".v1%2E2.notes"),
        .init(.maildirPlusPlus, "Entw&APw-rfe", nil, ".Entwürfe"),
        .init(.maildirPlusPlus, "cur", "/", ".cur"),
        .init(.maildirPlusPlus, "a/../b", "/", ".a.%2E%2E.b | mailbox \"a/../b\": escaped as .a.%2E%2E.b"),
        .init(.maildirPlusPlus, "a/b", nil, ".a%2Fb | mailbox \"a/b\": escaped as .a%2Fb"),
        .init(.maildirPlusPlus, "../../etc", "/", #"error: mailbox "../../etc": refused: climbs above the account root"#),
        .init(
            .maildirPlusPlus, "a..b", ".",
            #"error: mailbox "a..b": refused: empty hierarchy level (leading, trailing or doubled delimiter)"#)
    ]

    @Test(arguments: cases)
    func mapsAndRoundTrips(_ c: MappingCase) throws {
        let mapper = FolderNameMapper(layout: c.layout)
        #expect(summary(mapper, c.name, c.delimiter) == c.expected)
        guard !c.expected.hasPrefix("error: ") else { return }
        let path = try mapper.localPath(forMailbox: c.name, delimiter: c.delimiter).path
        #expect(FolderNameMapper.isInside(root: "/m", relative: path))
        #expect(try mapper.mailboxName(forLocalPath: path, delimiter: c.delimiter) == (c.back ?? c.name))
    }

    static let reverseCases: [(MaildirLayout, String, Character?, String)] = [
        (.verbatim, "Lists/dev", ".", "Lists.dev"),
        (.verbatim, "Lists/dev", "/", "Lists/dev"),
        (.verbatim, "Entwürfe/Ü", "/", "Entw&APw-rfe/&ANw-"),
        (.verbatim, "a%2Eb", ".", #"error: folder "a%2Eb": no mailbox name: contains the server's hierarchy delimiter ".""#),
        (.verbatim, "Lists.dev", ".", #"error: folder "Lists.dev": no mailbox name: contains the server's hierarchy delimiter ".""#),
        (.verbatim, "Lists/dev", nil, #"error: folder "Lists/dev": no mailbox name: the server has no hierarchy delimiter"#),
        (.verbatim, "50%off", "/", #"error: folder "50%off": no mailbox name: malformed %-escape"#),
        (.verbatim, "a%2e", "/", #"error: folder "a%2e": no mailbox name: malformed %-escape"#),
        (.verbatim, "%FF", "/", #"error: folder "%FF": no mailbox name: %-escapes do not form UTF-8"#),
        (.verbatim, "inbox", "/", #"error: folder "inbox": no mailbox name: not in canonical form (mailbox "inbox" maps to "INBOX")"#),
        (.verbatim, "%41", "/", #"error: folder "%41": no mailbox name: not in canonical form (mailbox "A" maps to "A")"#),
        (.verbatim, "%2E%2E", "/", #"error: folder "%2E%2E": no mailbox name: climbs above the account root"#),
        (.verbatim, "", "/", #"error: folder "": no mailbox name: the account root is not a mailbox in the verbatim layout"#),
        (.verbatim, "a//b", "/", #"error: folder "a//b": no mailbox name: empty level"#),
        (.maildirPlusPlus, "", ".", "INBOX"),
        (.maildirPlusPlus, ".Lists.dev", "/", "Lists/dev"),
        (.maildirPlusPlus, ".Lists.dev", nil, #"error: folder ".Lists.dev": no mailbox name: the server has no hierarchy delimiter"#),
        (.maildirPlusPlus, "Lists", "/", #"error: folder "Lists": no mailbox name: a maildir++ folder name must start with ".""#),
        (.maildirPlusPlus, ".a%2Fb", "/", #"error: folder ".a%2Fb": no mailbox name: contains the server's hierarchy delimiter "/""#),
        (.maildirPlusPlus, ".INBOX", "/", #"error: folder ".INBOX": no mailbox name: not in canonical form (mailbox "INBOX" maps to "")"#)
    ]

    @Test(arguments: reverseCases)
    func reverse(_ layout: MaildirLayout, _ path: String, _ d: Character?, _ expected: String) {
        let result: String
        do { result = try FolderNameMapper(layout: layout).mailboxName(forLocalPath: path, delimiter: d) } catch {
            result = "error: \(error.description)"
        }
        #expect(result == expected)
    }

    // MARK: - Long names (issue #14): shortened, never refused for their length alone

    static let x300 = String(repeating: "x", count: 300)
    static let x300Folder = String(repeating: "x", count: 160) + "%%0d4e2ca9e9cbced7a7a5380eb29e1a37"

    @Test func longLevelIsShortenedAndReadBackThroughItsMailbox() throws {
        let name = "Lists/" + Self.x300 + "/sub"
        let m = try V.localPath(forMailbox: name, delimiter: "/")
        #expect(m.path == "Lists/" + Self.x300Folder + "/sub")
        #expect(m.warning == "mailbox \"\(name)\": a level longer than 255 bytes is shortened as \(m.path)")
        // Back: the shortened level is read from the mailbox of the folder that ends there.
        let known = ["Lists/" + Self.x300Folder: "Lists/" + Self.x300]
        #expect(try V.mailboxName(forLocalPath: m.path, delimiter: "/", fullName: { known[$0] }) == name)
        #expect(throws: FolderNameError(folder: m.path, reason: "a shortened level, and no record of its mailbox")) {
            try V.mailboxName(forLocalPath: m.path, delimiter: "/")
        }
        // A record that does not map to this folder is not taken.
        #expect(throws: FolderNameError.self) {
            try V.mailboxName(forLocalPath: m.path, delimiter: "/", fullName: { _ in "Lists/" + Self.x300 + "y" })
        }
    }

    @Test func legalLongAndDeepNamesMap() throws {
        // 255 bytes fit as they are; 250 "%" escape to 750 bytes and are shortened.
        let x255 = String(repeating: "x", count: 255)
        #expect(try V.localPath(forMailbox: x255, delimiter: "/").path == x255)
        let percent = try V.localPath(forMailbox: String(repeating: "%", count: 250), delimiter: "/").path
        #expect(percent.hasPrefix(String(repeating: "%25", count: 53) + "%%") && percent.utf8.count == 193)
        let deep = Array(repeating: "a", count: 100).joined(separator: "/")
        #expect(try V.localPath(forMailbox: deep, delimiter: "/").path == deep)
        // maildir++: the folder is one name, shortened as a whole and read back through its mailbox.
        let plus = try P.localPath(forMailbox: deep, delimiter: "/").path
        #expect(plus == "." + Array(repeating: "a", count: 100).joined(separator: "."))
        let deeper = Array(repeating: "x", count: 128).joined(separator: "/")
        let shortened = try P.localPath(forMailbox: deeper, delimiter: "/").path
        #expect(shortened == String(repeating: ".x", count: 80) + "%%8a6f36de5ebca67f3ae3f8a605bedf89")
        #expect(try P.mailboxName(forLocalPath: shortened, delimiter: "/", fullName: { $0 == shortened ? deeper : nil }) == deeper)
    }

    @Test func pathPastPATHMAXIsRefusedNamingTheMailbox() {
        let root = "/home/u/Mail"
        let budget = FolderNameMapper.pathBudget(root: root)
        #expect(budget == 4096 - 1 - root.utf8.count - 1 - 5 - 255)
        let mapper = FolderNameMapper(layout: .verbatim, pathBudget: budget)
        let level = String(repeating: "d", count: 39)
        let deep = Array(repeating: level, count: 100).joined(separator: "/")  // 3999 bytes: Dovecot takes it
        let (mapping, warnings) = mapper.mapAll([("INBOX", "/"), (deep, "/")])
        #expect(mapping == ["INBOX": "INBOX"])
        #expect(
            warnings == [
                "mailbox \(quotedForMessage(deep)): refused: its folder path would be 3999 bytes; "
                    + "the path limit (PATH_MAX 4096) leaves \(budget) under the Maildir root"
            ])
    }

    @Test func batchRefusesCollisions() {
        let (mapping, warnings) = V.mapAll([
            ("INBOX", "/"), ("inbox", "/"), ("Work", "/"), ("Work", "/"),
            ("a.b", "/"), ("Lists/dev", "/"), ("Lists.dev", "."),
            ("../x", "/"), ("a/../b", "/")
        ])
        #expect(mapping == ["Work": "Work", "a.b": "a.b", "a/../b": "a/%2E%2E/b"])
        #expect(
            warnings == [
                #"mailbox "../x": refused: climbs above the account root"#,
                #"mailbox "a/../b": escaped as a/%2E%2E/b"#,
                #"mailboxes "INBOX" and "inbox" all map to folder "INBOX"; refused"#,
                #"mailboxes "Lists/dev" and "Lists.dev" all map to folder "Lists/dev"; refused"#
            ])
    }

    @Test func batchCollisionOfThreeAndNormalization() {
        // NFC "é" and NFD "e + U+0301" are different names but equivalent paths.
        let nfc = ModifiedUTF7.encode("caf\u{E9}"), nfd = ModifiedUTF7.encode("cafe\u{301}")
        #expect(nfc != nfd)
        let (mapping, warnings) = P.mapAll([("INBOX", "/"), ("Inbox", "/"), ("iNBOX", "/"), (nfc, "/"), (nfd, "/")])
        #expect(mapping.isEmpty)
        #expect(
            warnings == [
                #"mailboxes "INBOX", "Inbox" and "iNBOX" all map to folder ""; refused"#,
                "mailboxes \(quotedForMessage(nfc)) and \(quotedForMessage(nfd)) all map to folder \".café\"; refused"
            ])
    }

    @Test func combiningMarkCannotHideDelimiter() throws {
        // "/" followed by a combining mark is one Character but must still split.
        let name = ModifiedUTF7.encode("a/\u{301}..")
        #expect(try V.localPath(forMailbox: name, delimiter: "/").path == "a/\u{301}..")
        #expect(throws: FolderNameError.self) { try V.localPath(forMailbox: ModifiedUTF7.encode("../\u{301}"), delimiter: "/") }
    }

    @Test(arguments: [
        ("", true), ("INBOX", true), ("a/b", true), (".Lists.dev", true), ("a/%2E%2E/b", true),
        ("..", false), ("../x", false), ("a/../b", false), ("a/./b", false), ("/etc", false),
        ("a//b", false), ("a/", false), ("a\u{0}b", false)
    ])
    func isInside(_ relative: String, _ inside: Bool) {
        #expect(FolderNameMapper.isInside(root: "/home/u/Mail", relative: relative) == inside)
        #expect((FolderNameMapper.absolutePath(root: "/home/u/Mail", relative: relative) != nil) == inside)
    }
}
