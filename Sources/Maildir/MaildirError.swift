#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A failed file operation in a Maildir, naming the path and the system's reason, e.g.
/// `disk full: cannot write /home/u/Mail/INBOX/tmp/1700000000.M1P2Q3R….host: No space left on device`.
public struct MaildirError: MoError, Equatable {
    /// What was attempted: "cannot write", "cannot rename", ...
    public let operation: String
    public let path: String
    /// The errno value, or nil when the failure is not a system call's.
    public let code: Int32?
    /// Extra words when `code` is nil.
    public let detail: String?

    public init(_ operation: String, _ path: String, code: Int32) {
        self.operation = operation; self.path = path; self.code = code; self.detail = nil
    }

    public init(_ operation: String, _ path: String, detail: String, kind: ErrorKind = .localIO) {
        self.operation = operation; self.path = path; self.code = nil; self.detail = detail; self.kind = kind
    }

    /// `.localIO`, or `.busy` for a folder another process holds (`MaildirKeywords.lock`).
    public private(set) var kind: ErrorKind = .localIO

    /// `disk full: ` leads when the disk (or the quota) is full, so the first line a user reads says so.
    public var description: String {
        let why = code.map(errnoDescription) ?? detail ?? "failed"
        // An empty operation: `path` is `FILE:LINE` of a damaged file and `detail` the problem.
        return diskFullLead(code) + (operation.isEmpty ? "" : operation + " ") + "\(path): \(why)"
    }
}

extension MaildirError {
    /// A directory of a Maildir that could not be opened or read (`MoCore.DirectoryReader`).
    init(_ e: DirectoryError) { self.init(e.operation, e.path, code: e.code) }
}

extension DirectoryReader {
    /// `init`, its error as a `MaildirError`.
    static func opening(_ path: String) throws(MaildirError) -> DirectoryReader {
        do { return try DirectoryReader(path) } catch { throw MaildirError(error) }
    }

    /// `forEach`, its error as a `MaildirError`.
    func each(_ body: (RawDirectoryEntry) -> Void) throws(MaildirError) {
        do { try forEach(body) } catch { throw MaildirError(error) }
    }

    /// `forEachName`, its error as a `MaildirError`.
    func eachName(_ body: (UnsafeBufferPointer<UInt8>, UInt8) -> Void) throws(MaildirError) {
        do { try forEachName(body) } catch { throw MaildirError(error) }
    }

    /// `entries`, its error as a `MaildirError`.
    func all() throws(MaildirError) -> [RawDirectoryEntry] {
        do { return try entries() } catch { throw MaildirError(error) }
    }
}
