import ClientSettings
import IMAPClient
import MoConfig
import MoCore
import OAuth2
import SMTPClient

/// `mo-sync init --check`: for one account, connect to the IMAP server, log in and LIST; then open the
/// SMTP session (EHLO, TLS, AUTH) if there is an `[smtp]` table. One line per step goes to `report`; the
/// first failure ends the check and is returned (its kind decides the exit code).
public enum ServerCheck {
    public struct Line: Sendable, Equatable {
        public var text: String
        public var failed: Bool
    }

    /// `stateDirectory`: where an OAuth2 account's tokens are (`mo-sync login`).
    public static func run(_ account: Account, stateDirectory: String? = nil, report: (Line) -> Void) -> MoError? {
        let name = account.name
        let tokens = stateDirectory.flatMap { AccountSettings.tokenBroker(for: account, stateDirectory: $0) }
        func ok(_ s: String) { report(Line(text: "\(name): \(s)", failed: false)) }
        func failed(_ step: String, _ e: MoError) -> MoError {
            report(Line(text: "\(name): \(step): \(e.description)", failed: true))
            return e
        }
        if let imap = account.imap, let settings = AccountSettings.imap(account, tokens: tokens) {
            let endpoint = "imap \(imap.host):\(imap.port)"
            let connection: IMAPConnection
            do {
                connection = try IMAPConnection.open(settings)
            } catch {
                // The transport's failures name the connection; the rest happened after it was up.
                if case .network = error.reason { return failed(endpoint, error) }
                if case .authentication = error.reason {
                    ok("\(endpoint): connected, \(security(imap.tls, nil))")
                    return failed("login as \(imap.user)", error)
                }
                return failed(endpoint, error)
            }
            defer { connection.logout() }
            ok("\(endpoint): connected, \(security(imap.tls, connection.tlsVersion))")
            ok("login as \(imap.user): ok")
            do {
                let listed = try connection.list()
                let selectable = listed.filter(\.isSelectable)
                ok("LIST: \(selectable.count) folder\(selectable.count == 1 ? "" : "s")")
            } catch {
                return failed("LIST", error as? MoError ?? GenericError(.software, "\(error)"))
            }
        }
        if let settings = AccountSettings.smtp(account, tokens: tokens) {
            let endpoint = "smtp \(settings.host):\(settings.port)"
            let session = SMTPSession(settings: settings)
            do { try session.open() } catch {
                if error.code == .authentication || error.code == .credentials {
                    ok("\(endpoint): connected, \(security(account.smtp?.tls ?? .implicit, nil))")
                    return failed("smtp login as \(settings.user ?? account.address)", error)
                }
                return failed(endpoint, error)
            }
            defer { session.quit() }
            ok("\(endpoint): connected, \(security(account.smtp?.tls ?? .implicit, session.tlsVersion))")
            ok(settings.user == nil ? "smtp: no password-command, so no login" : "smtp login as \(settings.user!): ok")
        }
        return nil
    }

    static func security(_ mode: TLSMode, _ version: String?) -> String {
        let v = version.map { " (\($0))" } ?? ""
        switch mode {
        case .implicit: return "TLS" + v
        case .starttls: return "STARTTLS" + v
        case .none: return "no TLS (loopback)"
        }
    }
}
