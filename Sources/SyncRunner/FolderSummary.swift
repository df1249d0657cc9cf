import MoCore

/// What one folder's sync did (or, with --dry-run, would do), for the one-line summary and --json.
public struct FolderSummary: Sendable, Equatable {
    public var folder: String
    public var new = 0
    public var uploaded = 0
    public var deletedLocal = 0
    public var deletedRemote = 0
    /// Messages counted in both `deletedLocal` and `deletedRemote` (marked deleted on both sides and
    /// expunged on both): the line counts messages, so each is one deletion there.
    public var deletedBoth = 0
    public var flagsDown = 0
    public var flagsUp = 0
    public var adopted = 0
    public var moved = 0
    /// Server messages the folder's window (`max-age`) left on the server this run, not fetched; and local
    /// copies it let go (`expire-local`). Neither is a deletion.
    public var outside = 0
    public var expired = 0
    /// Messages over `max-size` delivered as placeholders, and placeholders filled (flagged).
    public var placeholders = 0
    public var filled = 0
    /// Why the folder was left alone (mass-deletion guard, vanished state), if it was.
    public var stopped: String?
    /// The exit status a stop asks for (nil: a safety guard's, EX_DATAERR); `.temporary` for downloads that
    /// wait for the next run (the daily download allowance).
    public var stoppedKind: ErrorKind?
    /// Why the folder failed, if it did (the run goes on with other folders).
    public var error: String?
    /// The failure's kind, for the exit code (a full disk is EX_IOERR, not "try again").
    public var errorKind: ErrorKind?
    public var notes: [String] = []

    public init(folder: String) { self.folder = folder }

    /// This folder's summary with a second pass's over the same folder added (a run that woke snoozed
    /// messages syncs twice, `AccountSync.run`): counts summed, the later failure or stop kept.
    public mutating func add(_ o: FolderSummary) {
        new += o.new; uploaded += o.uploaded; deletedLocal += o.deletedLocal; deletedRemote += o.deletedRemote
        deletedBoth += o.deletedBoth; flagsDown += o.flagsDown; flagsUp += o.flagsUp; adopted += o.adopted; moved += o.moved
        outside += o.outside; expired += o.expired; placeholders += o.placeholders; filled += o.filled
        if o.stopped != nil { stopped = o.stopped; stoppedKind = o.stoppedKind }
        if o.error != nil { error = o.error; errorKind = o.errorKind }
        notes += o.notes.filter { !notes.contains($0) }
    }

    public var changed: Bool {
        new + uploaded + deletedLocal + deletedRemote + flagsDown + flagsUp + adopted + moved + outside + expired + placeholders + filled
            > 0
    }

    /// `INBOX: +12 new, -3 deleted, 40 flags ↓, 2 flags ↑, 1 moved`, or `INBOX: up to date`; escaped, since
    /// folder names and errors quote outside text.
    public var line: String { escapedForMessage(rawLine) }

    /// The notes as lines for a terminal (they quote server texts, file and mailbox names).
    public var noteLines: [String] { notes.map { escapedForMessage($0) } }

    private var rawLine: String {
        if let error { return "\(folder): failed: \(error)" }
        if let stopped, stoppedKind != .temporary { return "\(folder): stopped: \(stopped)" }
        var parts: [String] = []
        if new > 0 { parts.append("+\(new) new") }
        if uploaded > 0 { parts.append("\(uploaded) uploaded") }
        let deleted = deletedLocal + deletedRemote - deletedBoth
        if deleted > 0 { parts.append("-\(deleted) deleted") }
        if flagsDown > 0 { parts.append("\(flagsDown) flags ↓") }
        if flagsUp > 0 { parts.append("\(flagsUp) flags ↑") }
        if moved > 0 { parts.append("\(moved) moved") }
        if adopted > 0 { parts.append("\(adopted) paired") }
        if outside > 0 { parts.append("\(outside) outside the window") }
        if expired > 0 { parts.append("\(expired) let go (outside the window)") }
        if placeholders > 0 { parts.append("\(placeholders) as placeholders (over max-size)") }
        if filled > 0 { parts.append("\(filled) placeholders filled") }
        if let stopped { parts.append("stopped: \(stopped)") }  // downloads left for a later run: the rest was done
        return "\(folder): " + (parts.isEmpty ? "up to date" : parts.joined(separator: ", "))
    }

    /// The folder's element of `mo-sync --json` (docs/json.md): `stopped` and `error` only when set.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("folder", .string(folder)), ("new", .int(new)), ("uploaded", .int(uploaded)),
            ("deleted_local", .int(deletedLocal)), ("deleted_remote", .int(deletedRemote)),
            ("flags_down", .int(flagsDown)), ("flags_up", .int(flagsUp)), ("moved", .int(moved)), ("paired", .int(adopted)),
            ("outside", .int(outside)), ("expired", .int(expired)), ("placeholders", .int(placeholders)), ("filled", .int(filled))
        ]
        if let stopped { fields.append(("stopped", .string(stopped))) }
        if let error { fields.append(("error", .string(error))) }
        fields.append(("notes", .strings(notes)))
        return .object(fields)
    }
}

extension FolderSummary {
    /// This summary with `error` as the folder's failure.
    func failed(_ error: any MoError) -> FolderSummary {
        var s = self
        s.error = error.description
        s.errorKind = error.kind
        return s
    }

    /// `error` if it fails only the folder it met (a local file problem, damaged local data, a held lock),
    /// so the run goes on with the others; nil if it ends the run.
    static func confined(_ error: any Error) -> (any MoError)? {
        guard let e = error as? any MoError, e.kind == .localIO || e.kind == .data || e.kind == .busy else { return nil }
        return e
    }
}
