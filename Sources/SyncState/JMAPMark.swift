import MoCore

/// `<state>/<account>/jmap-mark`: what the last run of a JMAP account that committed every folder saw, so
/// the next can tell "nothing changed" from one request (docs/jmap.md):
///
///     mo-jmap-mark 1
///     mailboxes 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
///     counts 1795306901 17 61 INBOX=20 Sent=4 Drafts=0 Archive=34 Trash=2 Junk=0
///     own 16
///
/// - `mailboxes DIGEST`: what the folders were placed by (`JMAPMailboxMap.digest`: every mailbox's id, name,
///   parent and role). Another digest means a mailbox was renamed, moved, made or given a role: every
///   message is placed again.
/// - `counts EPOCH MARK UIDNEXT VIEW=N…`: each folder's messages at mark `MARK` (`JMAPIDs`) and the ids'
///   next number then, written only after a
///   run that changed nothing on the server; when the account's state is still that mark's, each folder is
///   as counted, and nothing else need be asked.
///
/// - `own K`: the folders committed mark K, and the states from K to MARK are that run's own keyword changes
///   (each `Email/set` started where the one before ended): a folder at K is at MARK.
///
/// Replaced whole (write, fsync, rename). A file that does not read as written reads as none: the next run
/// then lists every message, which is slower, never wrong.
public struct JMAPMark: Sendable, Equatable {
    public static let fileName = "jmap-mark"
    public var mailboxState: String
    public var counts: Counts?
    /// The views' mark that equals `counts.mark`: the states between are the last run's own keyword changes,
    /// which its views' files already have.
    public var ownFrom: UInt64?

    /// Each folder's messages at a mark, and the ids' next number then.
    public struct Counts: Sendable, Equatable {
        public var epoch: UInt32
        public var mark: UInt64
        public var uidNext: UInt32
        public var views: [String: UInt32]
        public init(epoch: UInt32, mark: UInt64, uidNext: UInt32, views: [String: UInt32]) {
            self.epoch = epoch
            self.mark = mark
            self.uidNext = uidNext
            self.views = views
        }
    }

    public init(mailboxState: String, counts: Counts? = nil) {
        self.mailboxState = mailboxState
        self.counts = counts
    }

    var text: String {
        var t = "mo-jmap-mark 1\nmailboxes \(PercentEscape.escape(mailboxState))\n"
        if let c = counts {
            t +=
                "counts \(c.epoch) \(c.mark) \(c.uidNext)" + c.views.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
                + "\n"
            if let ownFrom { t += "own \(ownFrom)\n" }
        }
        return t
    }

    public static func load(in directory: String) -> JMAPMark? {
        guard case .success(let bytes) = readWholeFile(directory + "/" + fileName) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count >= 2, lines[0] == "mo-jmap-mark 1", lines[1].hasPrefix("mailboxes "),
            let state = PercentEscape.unescape(lines[1].dropFirst("mailboxes ".count))
        else { return nil }
        var mark = JMAPMark(mailboxState: state)
        if lines.count >= 3 {
            let f = lines[2].split(separator: " ")
            guard f.count >= 4, f[0] == "counts", let epoch = UInt32(f[1]), let k = UInt64(f[2]), let next = UInt32(f[3]) else {
                return nil
            }
            var views: [String: UInt32] = [:]
            for pair in f.dropFirst(4) {
                let kv = pair.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, let n = UInt32(kv[1]), views[String(kv[0])] == nil else { return nil }
                views[String(kv[0])] = n
            }
            mark.counts = Counts(epoch: epoch, mark: k, uidNext: next, views: views)
            if lines.count >= 4 {
                let o = lines[3].split(separator: " ")
                guard o.count == 2, o[0] == "own", let from = UInt64(o[1]), from < k else { return nil }
                mark.ownFrom = from
            }
        }
        return mark
    }

    /// Writes it atomically, when it changed.
    public func save(in directory: String) throws(StateError) {
        let path = directory + "/" + Self.fileName
        let bytes = Array(text.utf8)
        if case .success(let old) = readWholeFile(path), old == bytes { return }
        if case .failure(let e) = replaceFileAtomically(path, bytes) { throw StateError(file: path, cannot: "write", code: e.code) }
    }
}
