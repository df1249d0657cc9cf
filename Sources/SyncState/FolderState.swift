import Maildir
import MoCore
import SyncEngine

/// What one folder pair remembers between runs.
public struct FolderState: Sendable, Equatable {
    /// The server's mailbox name in wire form (modified UTF-7).
    public var mailbox: String
    public var uidValidity: UInt32
    /// Every UID below this was seen by the last completed run (0: never synced).
    public var uidNext: UInt32
    /// CONDSTORE: changes up to this mod-sequence are reflected in `records` (0: unknown).
    public var highestModSeq: UInt64
    /// The modification times (ns) of the folder's cur/ and new/ when `records` last matched them exactly;
    /// nil when unknown. Equal times on the next run mean no file was added, removed or renamed locally.
    public var localStamp: LocalStamp?
    public var records: [SyncRecord]

    public init(
        mailbox: String, uidValidity: UInt32 = 0, uidNext: UInt32 = 0, highestModSeq: UInt64 = 0,
        records: [SyncRecord] = []
    ) {
        self.mailbox = mailbox
        self.uidValidity = uidValidity
        self.uidNext = uidNext
        self.highestModSeq = highestModSeq
        self.records = records
    }
}

/// cur/ and new/ modification times of a Maildir folder, in nanoseconds (when to trust them: `DirectoryStamp`).
public typealias LocalStamp = DirectoryStamp

/// A state or journal file that cannot be read as written, located by file and line; or a lock held.
public struct StateError: MoError, Equatable {
    public var file: String
    public var line: Int?
    public var problem: String
    public var kind: ErrorKind
    /// The errno of a failed system call, when the problem is one: a full disk leads the line.
    public var code: Int32?

    public init(file: String, line: Int? = nil, problem: String, kind: ErrorKind = .data, code: Int32? = nil) {
        self.file = file
        self.line = line
        self.problem = problem
        self.kind = kind
        self.code = code
    }

    /// A failed system call on `file`: "cannot OPERATION: reason", a local I/O error carrying the errno.
    public init(file: String, cannot operation: String, code: Int32) {
        self.init(file: file, problem: "cannot \(operation): \(errnoDescription(code))", kind: .localIO, code: code)
    }

    public var description: String {
        // Problems may quote bytes of a damaged file.
        diskFullLead(code) + escapedForMessage(line.map { "\(file):\($0): \(problem)" } ?? "\(file): \(problem)")
    }
}

/// Flags as a field: the letters, or "-" for none (a field is never empty).
enum FlagField {
    static func render(_ f: MaildirFlags) -> String { f.isEmpty ? "-" : f.letters }
    static func parse(_ s: Substring) -> MaildirFlags? { s == "-" ? [] : MaildirFlags(letters: String(s)) }
}
