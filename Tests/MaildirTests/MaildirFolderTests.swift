@testable import Maildir

@Suite struct MaildirFolderTests {
    @Test func createMakesPrivateSubdirectories() throws {
        let t = TempDirectory()
        let folder = MaildirFolder(path: t.path + "/Lists/dev/")
        #expect(!folder.exists)
        try folder.create()
        try folder.create()  // idempotent
        #expect(folder.exists)
        #expect(folder.path == t.path + "/Lists/dev")
        for sub in ["cur", "new", "tmp"] {
            var st = stat()
            #expect(stat(folder.directory(sub), &st) == 0)
            #expect(st.st_mode & 0o777 == 0o700)
        }
        t.write("file", "x")
        #expect(throws: MaildirError.self) { try MaildirFolder(path: t.path + "/file").create() }
    }

    @Test func deliverToNewAndCur() throws {
        let t = TempDirectory()
        let folder = MaildirFolder(path: t.path + "/INBOX")
        try folder.create()
        let p1 = try folder.deliver(Array("Subject: one\r\n\r\nbody\r\n".utf8))
        #expect(p1.hasPrefix(folder.directory(.new) + "/"))
        #expect(!lastComponent(p1).contains(":"))
        #expect(t.read(p1) == "Subject: one\r\n\r\nbody\r\n")
        let p2 = try folder.deliver(Array("two".utf8), to: .cur, flags: [.seen, .flagged], uid: 42)
        #expect(p2.hasPrefix(folder.directory(.cur) + "/"))
        let name = try MaildirFilename(parsing: lastComponent(p2))
        #expect(name.flags == [.seen, .flagged] && name.uid == 42 && name.rendered.hasSuffix(",U=42:2,FS"))
        let p3 = try folder.deliver([], to: .cur)
        #expect(lastComponent(p3).hasSuffix(":2,"))
        #expect(t.list("INBOX/tmp").isEmpty)
        #expect(t.list("INBOX/new").count == 1 && t.list("INBOX/cur").count == 2)
    }

    @Test func streamedDelivery() throws {
        let (t, folder) = try madeBox()
        let pending = try folder.beginDelivery()
        #expect(t.list("box/tmp") == [pending.unique])
        var expected = ""
        for i in 0..<1000 {
            let chunk = "line \(i) " + String(repeating: "x", count: 100) + "\n"
            expected += chunk
            try pending.write(Array(chunk.utf8))
        }
        let path = try pending.commit(to: .new)
        #expect(lastComponent(path) == pending.unique)
        #expect(t.read(path) == expected)
        #expect(t.list("box/tmp").isEmpty)
        #expect(throws: MaildirError.self) { try pending.write([1]) }
        #expect(throws: MaildirError.self) { _ = try pending.commit() }
        pending.abort()  // harmless after commit
        #expect(t.read(path) == expected)
    }

    /// A field added to the unique part (Gmail's thread id) is in the final name, survives a renewed unique
    /// part, and is read back from the name whatever follows it.
    @Test func aFieldStaysInTheUniquePart() throws {
        let (t, folder) = try madeBox()
        let pending = try folder.beginDelivery()
        try pending.write(Array("Subject: x\n\nx\n".utf8))
        pending.addField("G", "1234567890123456789")
        pending.renewUnique()
        #expect(pending.unique.hasSuffix(",G=1234567890123456789"))
        let path = try pending.commit(to: .cur, flags: [.seen])
        let name = try MaildirFilename(parsing: lastComponent(path))
        #expect(name.unique == pending.unique && name.flags == [.seen])
        #expect(MaildirFilename.field("G", of: lastComponent(path)[...]) == "1234567890123456789")
        #expect(MaildirFilename.field("G", of: "1.M2P3.host,U=4,G=99:2,S") == "99")
        #expect(MaildirFilename.field("G", of: "1.M2P3.host,G=99!2,S") == "99")
        #expect(MaildirFilename.field("G", of: "G=99.host:2,S") == nil)  // the generated part is no field
        #expect(MaildirFilename.field("G", of: "1.host,G=:2,") == nil)
        #expect(t.list("box/tmp").isEmpty)
    }

    @Test func abortedAndAbandonedDeliveriesLeaveNothing() throws {
        let (t, folder) = try madeBox()
        let pending = try folder.beginDelivery()
        try pending.write(Array("partial".utf8))
        pending.abort()
        do {
            let abandoned = try folder.beginDelivery()
            try abandoned.write(Array("partial".utf8))
        }
        #expect(t.list("box/tmp").isEmpty && t.list("box/new").isEmpty && t.list("box/cur").isEmpty)
    }

    @Test func deliveryNeverOverwrites() throws {
        let (t, folder) = try madeBox()
        let pending = try folder.beginDelivery()
        try pending.write(Array("new message".utf8))
        // Someone else already holds the name this delivery would use.
        let first = pending.unique
        t.write("box/new/" + first, "precious")
        let path = try pending.commit()
        #expect(lastComponent(path) != first && lastComponent(path) == pending.unique)
        #expect(t.read(folder.directory(.new) + "/" + first) == "precious")
        #expect(t.read(path) == "new message")
        #expect(t.list("box/new").count == 2 && t.list("box/tmp").isEmpty)
    }

    /// `linkExactly` never picks another name: a taken one gives nil and changes nothing, so a caller that
    /// announced the name can renew it, announce again, and retry.
    @Test func linkExactlyLeavesATakenNameAlone() throws {
        let (t, folder) = try madeBox()
        let pending = try folder.beginDelivery()
        try pending.write(Array("new message".utf8))
        try pending.seal()
        let first = pending.unique
        t.write("box/new/" + first, "precious")
        #expect(try pending.linkExactly(to: .new) == nil)
        #expect(pending.unique == first && pending.finalPath == nil && t.list("box/new") == [first])
        pending.renewUnique()
        let path = try #require(try pending.linkExactly(to: .new))
        #expect(lastComponent(path) == pending.unique && pending.unique != first)
        pending.finish()
        #expect(t.read(path) == "new message" && t.read(folder.directory(.new) + "/" + first) == "precious")
        #expect(t.list("box/tmp").isEmpty)
    }

    /// The steps a batch of deliveries runs one at a time (seal all, link all, sync the directory once).
    @Test func deliveryInSteps() throws {
        let (t, folder) = try madeBox()
        let a = try folder.beginDelivery(), b = try folder.beginDelivery()
        try a.write(Array("first".utf8)); try b.write(Array("second".utf8))
        a.startWriteback()
        #expect(throws: MaildirError.self) { _ = try a.link(to: .new) }  // not sealed yet
        try a.seal(); try b.seal(); try a.seal()
        let pa = try a.link(to: .cur, flags: [.seen])
        let pb = try b.link(to: .cur)
        #expect(throws: MaildirError.self) { _ = try a.link(to: .cur) }  // linked once only
        try folder.syncDirectory(.cur)
        a.finish()
        // A directory that could not be synced takes its name back; the tmp copy goes with abort.
        b.unlinkFinal()
        b.abort()
        #expect(t.read(pa) == "first" && lastComponent(pa).hasSuffix(":2,S"))
        #expect(t.list("box/cur") == [lastComponent(pa)] && !t.list("box/cur").contains(lastComponent(pb)))
        #expect(t.list("box/tmp").isEmpty && t.list("box/new").isEmpty)
    }

    @Test func missingTmpIsRecreated() throws {
        let t = TempDirectory()
        t.mkdir("box/cur"); t.mkdir("box/new")
        let path = try MaildirFolder(path: t.path + "/box").deliver(Array("x".utf8))
        #expect(t.read(path) == "x")
        #expect(throws: MaildirError.self) { try MaildirFolder(path: t.path + "/nothing").deliver([1]) }
    }

    @Test func flagChangesAreRenames() throws {
        let (t, folder) = try madeBox()
        let p = try folder.deliver(Array("m".utf8), to: .cur, flags: [.seen])
        let p2 = try folder.setFlags(path: p, flags: [.seen, .replied, MaildirFlags(letter: UInt8(ascii: "a"))!])
        #expect(lastComponent(p2).hasSuffix(":2,RSa"))
        #expect(t.read(p2) == "m" && t.read(p) == nil)
        #expect(try folder.setFlags(path: p2, flags: [.seen, .replied, MaildirFlags(letter: UInt8(ascii: "a"))!]) == p2)
        let p3 = try folder.setUID(path: p2, uid: 9)
        #expect(lastComponent(p3).hasSuffix(",U=9:2,RSa"))
        let p4 = try folder.setFlags(path: p3, flags: [])
        #expect(lastComponent(p4).hasSuffix(",U=9:2,"))
        #expect(t.list("box/cur").count == 1)
    }

    @Test func newToCur() throws {
        let (t, folder) = try madeBox()
        let p = try folder.deliver(Array("m".utf8))
        // Flags set but left in new/ (info added because there are flags).
        let inNew = try folder.setFlags(path: p, flags: [.flagged])
        #expect(inNew == p + ":2,F")
        let inCur = try folder.setFlags(path: inNew, flags: [.seen], moveToCur: true)
        #expect(inCur == folder.directory(.cur) + "/" + lastComponent(p) + ":2,S")
        #expect(t.list("box/new").isEmpty && t.read(inCur) == "m")
        // Even with no flags, a name in cur/ carries info.
        let q = try folder.deliver(Array("q".utf8))
        #expect(try folder.setFlags(path: q, flags: [], moveToCur: true).hasSuffix(":2,"))
    }

    @Test func flagChangeNeverOverwrites() throws {
        let (t, folder) = try madeBox()
        t.write("box/cur/dup.host:2,S", "first")
        t.write("box/cur/dup.host:2,FS", "second")
        #expect {
            _ = try folder.setFlags(path: folder.directory(.cur) + "/dup.host:2,S", flags: [.seen, .flagged])
        } throws: { error in
            (error as? MaildirError)?.code == EEXIST && (error as? MaildirError)?.kind == .localIO
        }
        #expect(t.read(folder.directory(.cur) + "/dup.host:2,S") == "first")
        #expect(t.read(folder.directory(.cur) + "/dup.host:2,FS") == "second")
    }

    @Test func refusesPathsOutsideTheFolder() throws {
        let (t, folder) = try madeBox()
        t.write("other", "x")
        #expect(throws: MaildirError.self) { _ = try folder.setFlags(path: t.path + "/other", flags: [.seen]) }
        #expect(throws: MaildirError.self) { try folder.remove(path: t.path + "/other") }
        #expect(throws: MaildirFilenameError.self) { try folder.remove(path: folder.directory(.cur) + "/../../other") }
        #expect(t.read(t.path + "/other") == "x")
    }

    @Test func remove() throws {
        let (t, folder) = try madeBox()
        let p = try folder.deliver(Array("m".utf8), to: .cur, flags: [.trashed])
        try folder.remove(path: p)
        #expect(t.list("box/cur").isEmpty)
        #expect {
            try folder.remove(path: p)
        } throws: { error in
            (error as? MaildirError)?.description == "cannot remove \(p): No such file or directory"
        }
    }

    @Test func errorMessages() {
        #expect(
            MaildirError("cannot write", "/m/tmp/1.x", code: ENOSPC).description
                == "disk full: cannot write /m/tmp/1.x: No space left on device")
        #expect(MaildirError("cannot sync", "/m/tmp/1.x", code: EDQUOT).description.hasPrefix("disk full: cannot sync /m/tmp/1.x: "))
        #expect(MaildirError("cannot write", "/m/tmp/1.x", code: EACCES).description == "cannot write /m/tmp/1.x: Permission denied")
        #expect(MaildirError("cannot write", "/m/tmp/1.x", code: ENOSPC).kind == .localIO)
        #expect(
            MaildirError("cannot deliver", "/m/new", detail: "unique names kept colliding").description
                == "cannot deliver /m/new: unique names kept colliding")
    }

    @Test func concurrentDeliveriesGetDistinctFiles() async throws {
        let (t, folder) = try madeBox()
        let paths = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<200 {
                group.addTask { try folder.deliver(Array("message \(i)".utf8)) }
            }
            var all: [String] = []
            for try await p in group { all.append(p) }
            return all
        }
        #expect(Set(paths).count == 200)
        #expect(t.list("box/new").count == 200)
    }
}

@Suite struct MaildirUniqueNameTests {
    @Test func formatAndUniqueness() throws {
        var seen = Set<String>()
        for _ in 0..<10_000 { seen.insert(MaildirUniqueName.generate()) }
        #expect(seen.count == 10_000)
        let name = MaildirUniqueName.generate()
        let parts = name.split(separator: ".", maxSplits: 2)
        #expect(parts.count == 3)
        #expect(Int(parts[0]) != nil)
        let middle = parts[1]
        #expect(middle.hasPrefix("M") && middle.contains("P\(getpid())Q") && middle.contains("R"))
        #expect(middle.split(separator: "R").last!.count == 16)
        // A valid file-name unique part with no info and no UID.
        let parsed = try MaildirFilename(parsing: name)
        #expect(parsed.unique == name && !parsed.hasInfo && parsed.uid == nil)
    }

    @Test func hostnameEscaping() {
        #expect(MaildirUniqueName.sanitizedHostname("mail.example.org") == "mail.example.org")
        #expect(MaildirUniqueName.sanitizedHostname("a/b:c") == "a\\057b\\072c")
        #expect(MaildirUniqueName.sanitizedHostname("a,U=1!x", separator: "!") == "a\\054U=1\\041x")
    }

    /// Issue #14: a folder whose path, cur/, new/ or tmp/ is there but no directory is damaged, not absent
    /// (a sync must not read it as deleted); one line names the path.
    @Test func damageNamesWhatStandsInPlaceOfADirectory() throws {
        let t = TempDirectory()
        let folder = MaildirFolder(path: t.path + "/Archive")
        #expect(folder.damage == nil, "absent is not damaged")
        try folder.create()
        #expect(folder.damage == nil)
        #expect(rmdir(folder.directory("tmp")) == 0 && mkfifo(folder.directory("tmp"), 0o600) == 0)
        #expect(folder.damage == "\"\(t.path)/Archive/tmp\": a FIFO where a directory of the Maildir folder should be")
        #expect(rmdir(folder.directory("cur")) == 0 && symlink("/nonexistent", folder.directory("cur")) == 0)
        #expect(folder.damage == "\"\(t.path)/Archive/cur\": a dangling symbolic link where a directory of the Maildir folder should be")
        let file = MaildirFolder(path: t.path + "/file")
        let fd = open(file.path, O_WRONLY | O_CREAT, 0o600)
        close(fd)
        #expect(file.damage == "\"\(t.path)/file\": a regular file where a directory of the Maildir folder should be")
        #expect(
            MaildirFolder(path: t.path + "/file/Sub").damage
                == "\"\(t.path)/file/Sub\": a file stands where one of its parent directories should be")
    }
}
