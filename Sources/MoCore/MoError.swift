/// What kind of failure an error is. Libraries classify; only the CLI edge turns a kind into an exit code
/// (see `MoCLI.SysExit`), so the same error reads the same everywhere and scripts can tell a temporary
/// failure from a permanent one.
public enum ErrorKind: String, Sendable, Equatable {
    /// The user's configuration is wrong (file, key, value).
    case config
    /// The command line is wrong.
    case usage
    /// Input data (a file, a message, a name) cannot be used as it is.
    case data
    /// Worth retrying later: network down, timeout, server busy (4xx).
    case temporary
    /// The server refused our credentials.
    case authentication
    /// The peer broke the protocol or sent something we refuse to process.
    case protocolViolation
    /// TLS could not be set up or the peer's certificate is not trusted.
    case security
    /// A local file operation failed (permissions, full disk, missing directory).
    case localIO
    /// A file we must create exists already (and is never overwritten), or cannot be made.
    case cannotCreate
    /// Another instance holds a lock we need.
    case busy
    /// A feature or service we need is not available (in this build, or on the server).
    case unavailable
    /// A bug or an impossible state; never the user's fault.
    case software
}

/// The common face of every error in the project: a kind, and a one-line message that names the thing
/// (file, key, mailbox, host) and, where possible, what to do.
public protocol MoError: Error, CustomStringConvertible, Sendable {
    var kind: ErrorKind { get }
}

/// A plain error for places where a dedicated type would add nothing.
public struct GenericError: MoError, Equatable {
    public let kind: ErrorKind
    public let message: String
    public init(_ kind: ErrorKind, _ message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}

/// A service that could not be reached, or broke off before it answered: an outage of the network or of
/// that service, which says nothing about the request. Temporary (exit 75); a queued message spends no
/// try on it (ActionJournal's `FailureClass.unreachable`). Thrown where a helper service stands between
/// mo and the mail server, such as an OAuth2 token endpoint.
public struct OutageError: MoError, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var kind: ErrorKind { .temporary }
    public var description: String { message }
}

/// An account's OAuth2 grant expired or was revoked: only a new `mo-sync login ACCOUNT` mends it, so no
/// program retries. The login layers (IMAP, SMTP) pass it through unwrapped, and every program prints the
/// one line `ACCOUNT: sign-in expired or was revoked; run mo-sync login ACCOUNT` (exit 77).
public struct SignInNeededError: MoError, Equatable {
    public let account: String
    public init(account: String) { self.account = account }
    public var kind: ErrorKind { .authentication }
    public var description: String { "sign-in expired or was revoked; run mo-sync login \(account)" }
}

/// "disk full: " for a full disk or quota (ENOSPC, EDQUOT), else "": it leads the line of every failed
/// write (Maildir files, sync state), so the first words a user reads say what to do.
public func diskFullLead(_ code: Int32?) -> String {
    #if canImport(Glibc)
        return code == ENOSPC || code == EDQUOT ? "disk full: " : ""
    #else
        return ""
    #endif
}

/// `strerror(errno)` as a Swift string.
public func errnoDescription(_ code: Int32) -> String {
    #if canImport(Glibc)
        return String(cString: strerror(code))
    #else
        return "errno \(code)"
    #endif
}

#if canImport(Glibc)
    import Glibc
#endif
