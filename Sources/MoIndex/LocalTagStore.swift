#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Tags that could not be written into a message file: its folder's `dovecot-keywords` table already holds
/// 26 keywords, the most a Maildir folder can (`MaildirTags.apply`'s overflow). They stay on this machine
/// only, in the file `local-tags` in the state directory (without a configuration, beside an index given
/// with `--index-dir`) — never inside the index: the index is derived data and may be deleted, these are not. The update adds them to the messages' `K` terms.
///
/// Format: notmuch's dump lines (`NotmuchDump`: `+TAG +TAG -- id:MESSAGE-ID`), one per message, sorted by
/// id, which `notmuch restore` and `mo-index restore` also read. Blank and `#` lines are allowed (the file
/// is hand-editable). Any other line that does not parse, or a last line without its line end, is an error
/// naming `file:line` (`load`): a writer that skipped it would drop its tags when it saves the store. Only
/// `mo-index update`, which never writes the store, reads it leniently (such lines skipped).
public struct LocalTagStore: Sendable, Equatable {
    public static let fileName = "local-tags"
    public private(set) var tagsByID: [String: Set<String>] = [:]

    public init() {}

    /// The store of the index at `indexPath`: a sibling file.
    public static func path(forIndex indexPath: String) -> String {
        var parts = indexPath.split(separator: "/", omittingEmptySubsequences: false)
        while parts.count > 1, parts.last == "" { parts.removeLast() }
        parts.removeLast()
        return parts.joined(separator: "/") + "/" + fileName
    }

    public init(parsing bytes: [UInt8]) {
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let entry = try? NotmuchDump.parse(line) else { continue }
            add(entry.add.filter { !$0.isEmpty }, to: entry.messageID)
        }
    }

    public var rendered: [UInt8] {
        Array(tagsByID.keys.sorted().map { NotmuchDump.render(tags: Array(tagsByID[$0]!), messageID: $0) + "\n" }.joined().utf8)
    }

    public func tags(of id: String) -> Set<String> { tagsByID[id] ?? [] }

    public mutating func add(_ tags: [String], to id: String) {
        guard !tags.isEmpty else { return }
        tagsByID[id, default: []].formUnion(tags)
    }

    public mutating func remove(_ tags: [String], from id: String) {
        guard var set = tagsByID[id] else { return }
        set.subtract(tags)
        tagsByID[id] = set.isEmpty ? nil : set
    }

    /// Parses the store strictly (see the type's comment); errors are `FILE:LINE: PROBLEM`, kind `.data`.
    public static func parse(_ bytes: [UInt8], file: String) throws(GenericError) -> LocalTagStore {
        var store = LocalTagStore()
        do throws(StrictLines.Problem) {
            try StrictLines.forEach(bytes) { bytes throws(StrictLines.Problem) in
                let line = String(decoding: bytes, as: UTF8.self)
                do throws(NotmuchDump.ParseError) {
                    guard let entry = try NotmuchDump.parse(Substring(line)) else { return }
                    store.add(entry.add.filter { !$0.isEmpty }, to: entry.messageID)
                } catch {
                    throw .init(error.reason)
                }
            }
        } catch {
            throw GenericError(.data, escapedForMessage("\(file):\(error.line): \(error.problem)"))
        }
        return store
    }

    /// Reads the store (`parse`, or `init(parsing:)` when `lenient`); an absent file is an empty store.
    public static func load(_ path: String, lenient: Bool = false) throws -> LocalTagStore {
        let bytes = try fileBytes(path)
        return lenient ? LocalTagStore(parsing: bytes) : try parse(bytes, file: path)
    }

    /// The store file's bytes, as written; an absent file has none.
    public static func fileBytes(_ path: String) throws -> [UInt8] {
        switch readWholeFile(path) {
        case .success(let bytes): return bytes
        case .failure(let e) where e.code == ENOENT: return []
        case .failure(let e): throw GenericError(.localIO, "cannot read \(quotedForMessage(path)): \(e)")
        }
    }

    /// Writes the store atomically (write, fsync, rename).
    public func save(_ path: String) throws {
        if case .failure(let e) = replaceFileAtomically(path, rendered) {
            throw GenericError(.localIO, "cannot write \(quotedForMessage(path)): \(e)")
        }
    }
}
