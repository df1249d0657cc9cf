import MoCore

/// A failure of the transport (name resolution, TCP, TLS), with the host and port it concerns.
/// Messages are written for the user: they say what failed and, where there is one, what to do.
public struct NetError: MoError, Equatable {
    public enum Code: String, Sendable, Equatable {
        case resolve  // the name did not resolve
        case connect  // TCP connect failed (refused, unreachable)
        case timeout  // connect, handshake, read or write took too long
        case closed  // the peer closed the connection
        case io  // a read or write failed
        case untrustedCertificate
        case tlsHandshake
        case tlsSetup  // local TLS setup (e.g. the CA file) failed
        case startTLSUnavailable
    }

    public let code: Code
    public let host: String
    public let port: Int
    public let detail: String

    public init(_ code: Code, host: String, port: Int, detail: String) {
        self.code = code
        self.host = host
        self.port = port
        self.detail = detail
    }

    public var kind: ErrorKind {
        switch code {
        case .resolve, .connect, .timeout, .closed, .io: .temporary
        case .untrustedCertificate, .tlsHandshake, .startTLSUnavailable: .security
        case .tlsSetup: .config
        }
    }

    public var description: String {
        let endpoint = "\(host):\(port)"
        switch code {
        case .resolve: return "cannot resolve \(host): \(detail)"
        case .connect: return "cannot connect to \(endpoint): \(detail)"
        case .timeout: return "\(endpoint): timed out \(detail)"
        case .closed: return "\(endpoint): connection closed by the server\(detail.isEmpty ? "" : " " + detail)"
        case .io: return "\(endpoint): \(detail)"
        case .untrustedCertificate:
            return "certificate for \(host) is not trusted: \(detail); set ca-file or check the host"
        case .tlsHandshake: return "TLS handshake with \(endpoint) failed: \(detail)"
        case .tlsSetup: return detail
        case .startTLSUnavailable:
            return "\(endpoint) does not offer STARTTLS; refusing to continue without TLS (\(detail))"
        }
    }
}
