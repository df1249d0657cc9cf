@testable import Maildir

@Suite struct MaildirScannerTests {
    @Test func scanReportsMessagesWithoutReadingThem() throws {
        let (t, folder) = try madeBox()
        let a = try folder.deliver(Array("12345".utf8))
        let b = try folder.deliver(Array("1234567890".utf8), to: .cur, flags: [.seen, .replied], uid: 17)
        t.write("box/cur/.dotfile:2,S", "hidden")
        t.write("box/new/.nfs000123", "hidden")
        t.write("box/tmp/1.M1P1.host", "in progress")
        t.write("box/cur/bad:2,SS", "x")
        t.write("box/cur/other:2,SF", "unsorted but fine")
        t.mkdir("box/cur/subdir")
        t.symlink("/etc/passwd", "box/cur/link:2,S")

        let scan = try MaildirScanner.scan(folder)
        let byName = Dictionary(uniqueKeysWithValues: scan.entries.map { ($0.filename, $0) })
        #expect(Set(byName.keys) == [lastComponent(a), lastComponent(b), "other:2,SF"])
        let ea = byName[lastComponent(a)]!
        #expect(ea.subdir == .new && ea.size == 5 && ea.flags.isEmpty && ea.uid == nil && ea.path == a)
        let eb = byName[lastComponent(b)]!
        #expect(eb.subdir == .cur && eb.size == 10 && eb.flags == [.seen, .replied] && eb.uid == 17 && eb.path == b)
        #expect(!eb.unique.contains(",U=") && !eb.unique.contains(":"))
        #expect(byName["other:2,SF"]!.flags.letters == "FS")
        var st = stat()
        #expect(stat(b, &st) == 0 && eb.mtimeSeconds == Int64(st.st_mtim.tv_sec))
        #expect(eb.mtimeSeconds > 1_600_000_000)
        #expect(
            scan.warnings.sorted()
                == [
                    "\(quotedForMessage(folder.directory(.cur) + "/link:2,S")): symbolic link; skipped",
                    "\(quotedForMessage(folder.directory(.cur) + "/subdir")): not a regular file; skipped",
                    "\(folder.directory(.cur)): maildir file name \"bad:2,SS\": flag \"S\" repeated; skipped"
                ].sorted())
    }

    @Test func nonUTF8NamesAreSkippedWithAWarning() throws {
        let (t, folder) = try madeBox()
        defer { withExtendedLifetime(t) {} }  // the folder is inside t
        // A file name with a raw 0xFF byte, made with the C API.
        var bytes = Array((folder.directory(.cur) + "/x").utf8).map { CChar(bitPattern: $0) }
        bytes += [CChar(bitPattern: 0xFF), 0]
        let fd = Glibc.open(bytes, O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0)
        Glibc.close(fd)
        let scan = try MaildirScanner.scan(folder)
        #expect(scan.entries.isEmpty)
        #expect(scan.warnings.count == 1 && scan.warnings[0].hasSuffix("file name is not valid UTF-8; skipped"))
    }

    /// `keep` sees every parsed name (bad names are still reported) and only the names it keeps are stat'ed
    /// and returned.
    /// Names judged by their bytes and names parsed first (mbsync's `,U=`) are offered alike: the unique
    /// part without the UID field, once each.
    @Test func keepFiltersAfterParsing() throws {
        let (t, folder) = try madeBox()
        let a = try folder.deliver(Array("a".utf8), to: .cur, flags: [.seen])
        _ = try folder.deliver(Array("b".utf8), to: .new)
        t.write("box/cur/bad:2,SS", "x")
        t.write("box/cur/100.M1.host,S=7,U=12:2,S", "x")
        var offered: [String] = []
        let scan = try MaildirScanner.scan(
            folder,
            keep: { unique, flags in
                offered.append(String(decoding: unique, as: UTF8.self))
                return flags == [.seen]
            })
        #expect(offered.count == 3 && offered.contains("100.M1.host,S=7"))
        #expect(Set(scan.entries.map(\.path)) == [a, folder.directory(.cur) + "/100.M1.host,S=7,U=12:2,S"])
        #expect(scan.warnings.count == 1 && scan.warnings[0].contains("bad:2,SS"))
    }

    /// `only` finds names by their unique part, whatever comma fields they carry (mbsync's `,U=` left out).
    @Test func onlyFindsNamesWithCommaFields() throws {
        let (t, folder) = try madeBox()
        t.write("box/cur/100.M1.host,S=7,U=12:2,S", "x")
        t.write("box/cur/100.M1.other:2,S", "x")
        t.write("box/new/200.M2.host,U=3", "x")
        t.write("box/cur/300.M3.host:2,", "x")
        let scan = try MaildirScanner.scan(folder, only: ["100.M1.host,S=7", "200.M2.host"])
        #expect(Set(scan.entries.map(\.filename)) == ["100.M1.host,S=7,U=12:2,S", "200.M2.host,U=3"])
    }

    /// `locate` finds files by the names mo-sync gives them, with no listing; any other name gives nil.
    @Test func locateFindsCanonicalNamesOnly() throws {
        let (t, folder) = try madeBox()
        defer { withExtendedLifetime(t) {} }  // the folder is inside t
        let a = try folder.deliver(Array("a".utf8), to: .cur, flags: [.seen, .flagged])
        let b = try folder.deliver(Array("bb".utf8), to: .new)
        let ua = try MaildirFilename(parsing: lastComponent(a)).unique, ub = try MaildirFilename(parsing: lastComponent(b)).unique
        let sf: MaildirFlags = [.seen, .flagged], none: MaildirFlags = [], seen: MaildirFlags = [.seen]
        let found = try #require(MaildirScanner.locate(folder, [(ua, sf), (ub, none)]))
        #expect(found.map(\.path) == [a, b] && found[1].size == 2 && found[0].flags == sf)
        #expect(MaildirScanner.locate(folder, [(ua, seen)]) == nil)  // other letters on disk
        #expect(MaildirScanner.locate(folder, [("nothing.here", none)]) == nil)
    }

    @Test func scanOfMissingFolderThrows() {
        #expect(throws: MaildirError.self) { try MaildirScanner.scan(MaildirFolder(path: "/nonexistent/mo-test")) }
    }

    @Test func listVerbatim() throws {
        let t = TempDirectory()
        t.maildir("INBOX")
        t.maildir("Lists/dev")  // Lists is only a hierarchy level
        t.maildir("Work")
        t.maildir("Work/Projects")  // a folder inside a folder
        t.maildir("Entwürfe")
        t.maildir(".notmuch/xapian")  // dot-directories are never entered
        t.mkdir("Empty/level")
        t.mkdir("half/cur")  // cur/ without new/: not a folder
        t.symlink("/etc", "etc-link")
        t.symlink(t.path + "/Work", "work-link")
        let listing = try MaildirScanner.listFolders(root: t.path, layout: .verbatim)
        #expect(listing.folders == ["Entwürfe", "INBOX", "Lists/dev", "Work", "Work/Projects"])
        #expect(
            listing.warnings.sorted() == [
                "\(quotedForMessage(t.path + "/etc-link")): symbolic link not followed",
                "\(quotedForMessage(t.path + "/work-link")): symbolic link not followed"
            ])
        // Every listed folder maps back to a mailbox name.
        let mapper = FolderNameMapper(layout: .verbatim)
        #expect(
            try listing.folders.map { try mapper.mailboxName(forLocalPath: $0, delimiter: "/") }
                == ["Entw&APw-rfe", "INBOX", "Lists/dev", "Work", "Work/Projects"])
    }

    @Test func listMaildirPlusPlus() throws {
        let t = TempDirectory()
        t.maildir("")
        t.maildir(".Lists.dev")
        t.maildir(".Sent")
        t.mkdir(".notmuch")
        t.mkdir("plain/cur"); t.mkdir("plain/new")  // not dotted: not a maildir++ folder
        let listing = try MaildirScanner.listFolders(root: t.path + "/", layout: .maildirPlusPlus)
        #expect(listing.folders == ["", ".Lists.dev", ".Sent"])
        #expect(listing.warnings.isEmpty)
        let mapper = FolderNameMapper(layout: .maildirPlusPlus)
        #expect(
            try listing.folders.map { try mapper.mailboxName(forLocalPath: $0, delimiter: ".") }
                == ["INBOX", "Lists.dev", "Sent"])
    }

    @Test func scanManyFiles() throws {
        let t = TempDirectory()
        let folder = MaildirFolder(path: t.path + "/big")
        try folder.create()
        for i in 0..<2000 {
            let fd = Glibc.open(folder.directory(.cur) + "/\(i).M1P1.host,U=\(i + 1):2,S", O_WRONLY | O_CREAT, 0o600)
            Glibc.close(fd)
        }
        let clock = ContinuousClock()
        var scan: MaildirScan? = nil
        let elapsed = try clock.measure { scan = try MaildirScanner.scan(folder) }
        #expect(scan!.entries.count == 2000 && scan!.warnings.isEmpty)
        #expect(Set(scan!.entries.compactMap(\.uid)).count == 2000)
        #expect(elapsed < .seconds(2))
    }
}
