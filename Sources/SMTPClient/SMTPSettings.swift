import MoCore

/// How to reach and log in to one submission server.
public struct SMTPSettings: Sendable {
    /// Seconds to wait at each step. Defaults follow RFC 5321 §4.5.3.2.
    public struct Timeouts: Sendable, Equatable {
        /// TCP connect and TLS handshake.
        public var connect: Double
        /// Greeting and every command's reply (§4.5.3.2: 5 minutes for greeting, MAIL and RCPT).
        public var command: Double
        /// Each write of message data (§4.5.3.2.5: 3 minutes per data block).
        public var dataBlock: Double
        /// The reply to the final `.` (§4.5.3.2.6: 10 minutes; the server may be filtering the message).
        public var dataFinal: Double

        public init(connect: Double = 30, command: Double = 300, dataBlock: Double = 180, dataFinal: Double = 600) {
            self.connect = connect
            self.command = command
            self.dataBlock = dataBlock
            self.dataFinal = dataFinal
        }
    }

    public var host: String
    public var port: Int
    public var security: TLSMode
    /// Login name; nil sends without AUTH.
    public var user: String?
    /// The password or OAuth token, fetched only when AUTH needs it (a password-command runs late).
    public var secret: SMTPSecret?
    /// OAuth2 only: a new token after the server refused the one given (its argument), asked once per login.
    public var renewSecret: (@Sendable (String) throws -> String)?
    public var authMethod: AuthMethod
    /// Extra trusted CAs (PEM); system CAs are always trusted.
    public var caFile: String?
    /// The name sent with EHLO; should be this host's fully qualified name (RFC 5321 §4.1.1.1).
    public var heloName: String
    public var timeouts: Timeouts
    /// Called with every protocol line, secrets redacted (`--debug`).
    public var trace: SMTPTrace?

    public init(
        host: String, port: Int, security: TLSMode, user: String? = nil, secret: SMTPSecret? = nil,
        authMethod: AuthMethod = .auto, caFile: String? = nil, heloName: String = "localhost",
        timeouts: Timeouts = Timeouts(), trace: SMTPTrace? = nil
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.user = user
        self.secret = secret
        self.authMethod = authMethod
        self.caFile = caFile
        self.heloName = heloName
        self.timeouts = timeouts
        self.trace = trace
    }
}

/// A password or token, or a way to get one when it is needed.
public struct SMTPSecret: Sendable {
    private let provide: @Sendable () throws -> String

    /// A closure run once per AUTH; an error it throws fails the send (a `MoError` keeps its kind).
    public init(_ provide: @escaping @Sendable () throws -> String) { self.provide = provide }

    public static func value(_ secret: String) -> SMTPSecret { SMTPSecret { secret } }

    func get() throws -> String { try provide() }
}

/// One line of the protocol as it went over the wire.
public enum SMTPTraceEvent: Sendable, Equatable {
    case connected(String)
    case sent(String)
    case received(String)
    /// Message data, summarised: its bytes never reach the trace.
    case data(bytes: Int)
    case tlsStarted(String)

    /// A line for `--debug` output: `-> EHLO x`, `<- 250 ok`.
    public var line: String {
        switch self {
        case .connected(let to): return "-- connected to \(to)"
        case .sent(let text): return "-> \(text)"
        case .received(let text): return "<- \(text)"
        case .data(let n): return "-> <\(n) bytes of message data>"
        case .tlsStarted(let version): return "-- TLS started (\(version))"
        }
    }
}

/// Receives trace events. Called on the sending thread.
public typealias SMTPTrace = @Sendable (SMTPTraceEvent) -> Void
