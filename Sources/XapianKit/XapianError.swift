import CXapian
import MoCore

/// A failure reported by Xapian (or by the C++ runtime under it), e.g.
/// `xapian: DatabaseLockError: Unable to get write lock on /home/u/.local/share/mo/index: already locked`.
public struct XapianError: MoError, Equatable {
    /// Xapian's class name for the error ("DatabaseLockError", "QueryParserError", ...), or "std::bad_alloc",
    /// "std::exception", "unknown" for other C++ exceptions.
    public let type: String
    /// Xapian's message, with its context and system error text when it gives them.
    public let message: String

    public var kind: ErrorKind {
        switch type {
        case "DatabaseLockError":
            return .busy
        case "DatabaseOpeningError", "DatabaseNotFoundError", "DatabaseVersionError", "DatabaseCorruptError",
            "DatabaseCreateError", "DatabaseError":
            // Plain DatabaseError is what Xapian throws for failed reads and writes (e.g. a full disk).
            return .localIO
        case "DatabaseModifiedError":
            // A reader fell behind a writer: reopen and retry.
            return .temporary
        case "QueryParserError", "WildcardError":
            return .usage
        default:
            return .software
        }
    }

    public var description: String { "xapian: \(type): \(message)" }
}

typealias XapianErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<mo_xapian_error>?>

/// Runs one shim call and throws the error it reports. The shim sets the error exactly when it fails, so
/// the error, not the return value, decides.
@inline(__always)
func xapianCall<R>(_ body: (XapianErrorOut) -> R) throws(XapianError) -> R {
    var error: UnsafeMutablePointer<mo_xapian_error>? = nil
    let result = body(&error)
    if let error { throw XapianError(taking: error) }
    return result
}

/// Runs a shim call that returns a new handle; a NULL without an error cannot happen, but is not trusted.
@inline(__always)
func xapianCreate(_ body: (XapianErrorOut) -> OpaquePointer?) throws(XapianError) -> OpaquePointer {
    guard let handle = try xapianCall(body) else {
        throw XapianError(type: "unknown", message: "the shim returned no handle and no error")
    }
    return handle
}

/// For creations that fail only when memory runs out, which Swift itself treats as fatal.
func xapianMustCreate(_ what: String, _ body: (XapianErrorOut) -> OpaquePointer?) -> OpaquePointer {
    do {
        return try xapianCreate(body)
    } catch {
        fatalError("cannot create Xapian \(what): \(error)")
    }
}

extension XapianError {
    /// Takes over and frees an error from the C shim.
    init(taking error: UnsafeMutablePointer<mo_xapian_error>) {
        self.init(
            type: error.pointee.type.map { String(cString: $0) } ?? "unknown",
            message: error.pointee.message.map { String(cString: $0) } ?? "")
        mo_xapian_error_free(error)
    }
}
