import MoCore

/// Exit codes from sysexits.h, as sendmail, msmtp and mbsync's callers expect them.
/// Errors carry an `ErrorKind`; this is the only place a kind becomes a number.
public enum SysExit: Int32, Sendable {
    case ok = 0
    case usage = 64  // EX_USAGE: bad command line
    case dataError = 65  // EX_DATAERR: bad input data
    case noInput = 66  // EX_NOINPUT
    case unavailable = 69  // EX_UNAVAILABLE: a service or feature is not available
    case software = 70  // EX_SOFTWARE: internal error
    case osError = 71  // EX_OSERR
    case cannotCreate = 73  // EX_CANTCREAT: an output file cannot be created (e.g. it exists)
    case ioError = 74  // EX_IOERR: local I/O failed
    case tempFail = 75  // EX_TEMPFAIL: try again later (network, server busy, lock held)
    case protocolError = 76  // EX_PROTOCOL: the remote side broke the protocol
    case noPermission = 77  // EX_NOPERM: authentication failed, or TLS refused
    case config = 78  // EX_CONFIG: configuration error

    public init(_ kind: ErrorKind) {
        switch kind {
        case .config: self = .config
        case .usage: self = .usage
        case .data: self = .dataError
        case .temporary, .busy: self = .tempFail
        case .authentication, .security: self = .noPermission
        case .protocolViolation: self = .protocolError
        case .localIO: self = .ioError
        case .cannotCreate: self = .cannotCreate
        case .unavailable: self = .unavailable
        case .software: self = .software
        }
    }
}
