@testable import SyncRunner

/// The store seam is real: the sync core (`PreparedFolder`'s prepare and finish, the planner, the journal,
/// the Maildir side) syncs a folder against a server that is not IMAP, an in-memory `ServerStore`, and
/// asks of it only what `ServerStore` declares. The second kind of store (Gmail mode, JMAP) will come in
/// the same way.
@Suite struct MemoryStoreTests {
    /// One folder of messages in memory; ids are UIDs, counted from 1 and never reused.
    final class MemoryStore: ServerStore {
        struct Message { var bytes: [UInt8]; var flags: Set<Flag> }
        var messages: [UInt32: Message] = [:]
        var nextUID: UInt32 = 1
        let uidValidity: UInt32 = 42
        /// What the core asked, in order (one word per call).
        var calls: [String] = []
        var openFolder: MailboxName?
        let endpoint = "memory"
        func reportsChangesSince(in folder: MailboxName) -> Bool { false }
        func knowsVanishedSince(in folder: MailboxName) -> Bool { false }
        func sharesIDs(_ folder: MailboxName) -> Bool { false }
        func returnsUnderNewID(_ folder: MailboxName) -> Bool { false }
        let idsSpanFolders = false
        let neverStored: MaildirFlags = []
        let movesNameNewIDs = true

        func add(_ bytes: [UInt8], _ flags: Set<Flag> = []) {
            messages[nextUID] = Message(bytes: bytes, flags: flags)
            nextUID += 1
        }

        func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
            calls.append("open")
            openFolder = folder
            var listing = ServerListing(mailbox: folder)
            listing.uidValidity = uidValidity
            listing.uidNext = nextUID
            listing.exists = UInt32(messages.count)
            return listing
        }

        func beginOpen(_ folder: MailboxName, since: ListingMark?) throws -> PendingListing {
            let listing = try open(folder, since: since)
            return PendingListing { listing }
        }

        func listAll(_ each: (MessageInfo) throws -> Void) throws {
            calls.append("listAll")
            for (uid, m) in messages.sorted(by: { $0.key < $1.key }) {
                var info = MessageInfo(sequenceNumber: uid)
                info.uid = uid
                info.flags = Array(m.flags)
                try each(info)
            }
        }

        func ids(from first: UInt32) throws -> [UInt32] { messages.keys.filter { $0 >= first }.sorted() }
        func ids(arrivedBefore day: InternalDate) throws -> UIDSet { UIDSet([]) }
        func sizes(of ids: [UInt32]) throws -> [UInt32: Int] { [:] }
        func headers(of ids: [UInt32]) throws -> [UInt32: [UInt8]] { [:] }

        func keys(of ids: [UInt32], hashingSizes: Set<Int>) throws -> [UInt32: MessageKey] {
            calls.append("keys")
            var out: [UInt32: MessageKey] = [:]
            for id in ids { if let m = messages[id] { out[id] = MessageKeys.key(wire: m.bytes) } }
            return out
        }

        func bodies(of ids: [UInt32], _ each: (BodyEvent) throws -> Void) throws {
            calls.append("bodies")
            for id in ids {
                guard let m = messages[id] else { continue }
                try each(.messageStart)
                try each(.bodyStart)
                try each(.bytes(m.bytes))
                try each(.bodyEnd)
                try each(.messageEnd(id: id))
            }
        }

        func upload(
            to folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
            body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
        ) throws -> (uidValidity: UInt32, uid: UInt32)? {
            calls.append("upload")
            var bytes: [UInt8] = []
            try body { bytes += $0 }
            #expect(bytes.count == size)
            add(bytes, Set(flags))
            return (uidValidity, nextUID - 1)
        }

        func setFlags(_ changes: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges {
            calls.append("setFlags")
            for c in changes {
                for uid in c.uids.elements where messages[uid] != nil {
                    switch c.action.mode {
                    case .add: messages[uid]!.flags.formUnion(c.action.flags)
                    case .remove: messages[uid]!.flags.subtract(c.action.flags)
                    case .replace: messages[uid]!.flags = Set(c.action.flags)
                    }
                }
            }
            return OwnChanges()
        }

        func delete(_ ids: UIDSet) throws -> OwnChanges {
            calls.append("delete")
            for uid in ids.elements { messages[uid] = nil }
            return OwnChanges()
        }

        func move(_ ids: UIDSet, to folder: MailboxName) throws -> (
            pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges
        ) {
            Issue.record("one folder: nothing moves")
            return ([], OwnChanges())
        }

        func canClaim(_ listing: ServerListing) -> Bool { false }
        func claim(_ claims: [(id: UInt32, action: StoreAction)], since listing: ServerListing) throws -> (
            lost: Set<UInt32>, changes: OwnChanges
        ) { ([], OwnChanges()) }

        func createFolder(_ folder: MailboxName) throws { Issue.record("the folder exists") }
        func deleteFolder(_ folder: MailboxName) throws { Issue.record("nothing is deleted") }
    }

    static func message(_ id: String) -> [UInt8] {
        Array("Message-ID: <\(id)@memory.test>\r\nSubject: \(id)\r\n\r\nbody of \(id)\r\n".utf8)
    }

    /// One run of the core over `store`: prepare, then finish when something changed.
    static func sync(_ folder: MaildirFolder, _ state: String, _ store: MemoryStore) throws -> FolderSummary {
        let sync = FolderSync(
            mailbox: .inbox, folder: folder,
            store: FolderStateStore(accountDirectory: state, key: "INBOX"),
            policy: SyncPolicy(), dryRun: false, displayName: "INBOX", verbose: { _ in })
        let prepared = PreparedFolder(sync)
        guard case .listed = try prepared.prepare(on: store) else { return prepared.summary }
        return try prepared.finish(on: store)
    }

    @Test func theCoreSyncsAStoreThatIsNotIMAP() throws {
        let dir = try TemporaryDirectory("mo-memory-store")
        defer { dir.remove() }
        let folder = MaildirFolder(path: dir.path + "/mail")
        let state = dir.path + "/state"
        #expect(mkdir(state, 0o700) == 0)
        let store = MemoryStore()
        store.add(Self.message("one"), [.seen])
        store.add(Self.message("two"))

        // First run: both messages come down, with their flags.
        let first = try Self.sync(folder, state, store)
        #expect(first.new == 2, "\(first.line)")
        var files = try MaildirScanner.scan(folder).entries
        #expect(files.count == 2)
        #expect(files.filter { $0.flags == [.seen] }.count == 1)

        // Both sides change: a local file marked flagged, a new local file, a new server message.
        let unflagged = try #require(files.first { $0.flags.isEmpty })
        _ = try folder.setFlags(path: unflagged.path, flags: [.flagged], moveToCur: true)
        _ = try folder.deliver(Array("Message-ID: <three@memory.test>\nSubject: three\n\nlocal\n".utf8))
        store.add(Self.message("four"), [.flagged])
        store.calls = []
        let second = try Self.sync(folder, state, store)
        #expect(second.new == 1 && second.uploaded == 1 && second.flagsUp == 1, "\(second.line)")
        #expect(store.messages[2]?.flags == [.flagged])
        #expect(
            store.messages.values.contains { $0.bytes == Array("Message-ID: <three@memory.test>\r\nSubject: three\r\n\r\nlocal\r\n".utf8) })
        files = try MaildirScanner.scan(folder).entries
        #expect(files.count == 4)
        #expect(Set(store.calls).isSubset(of: ["open", "listAll", "keys", "bodies", "setFlags", "upload"]), "\(store.calls)")

        // A message deleted on the server goes locally; then nothing is left to do.
        _ = try store.delete(UIDSet(1))
        let third = try Self.sync(folder, state, store)
        #expect(third.deletedLocal == 1, "\(third.line)")
        #expect(try MaildirScanner.scan(folder).entries.count == 3)
        store.calls = []
        let fourth = try Self.sync(folder, state, store)
        #expect(!fourth.changed, "\(fourth.line)")
        #expect(!store.calls.contains("bodies") && !store.calls.contains("upload") && !store.calls.contains("setFlags"))
    }
}
