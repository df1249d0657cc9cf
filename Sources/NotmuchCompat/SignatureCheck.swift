#if canImport(Glibc)
    import Glibc
#endif
import MailMessage
import MoCore

/// One signature's result as `notmuch show --verify` reports it (its `sigstatus` list; devel/schemata).
public struct SignatureStatus: Sendable, Equatable {
    /// "good", "bad" or "error" (notmuch's words: an error bit makes it "error", as GMime's status does).
    public var status: String
    public var fingerprint: String?
    public var created: Int64?
    public var expires: Int64?
    public var userid: String?
    public var email: String?
    /// For a signature that is not good: the signing key's 16-hex-digit id.
    public var keyid: String?
    /// notmuch's error names, in notmuch's order: key-revoked, key-expired, sig-expired, key-missing, …
    public var errors: [String] = []

    public init(status: String) { self.status = status }
}

/// PGP/MIME signatures (RFC 3156 `multipart/signed`, `application/pgp-signature`) checked by GnuPG
/// itself, as notmuch has GMime and GPGME do: the first part's bytes as they stand in the message, line
/// ends made CRLF, against the second part. gpg's `--status-fd` lines give the result:
///
/// | status line                                  | status | reported                                              |
/// |----------------------------------------------|--------|-------------------------------------------------------|
/// | `NEWSIG`                                     |        | a next signature starts                               |
/// | `GOODSIG keyid user`                         | good   | `userid`/`email` when `TRUST_FULLY`/`TRUST_ULTIMATE` follows |
/// | `VALIDSIG fpr day created expires …`         |        | `fingerprint`, `created`, `expires` (when > 0)        |
/// | `BADSIG keyid user`                          | bad    | `keyid`                                               |
/// | `EXPSIG` / `EXPKEYSIG` / `REVKEYSIG keyid …` | error  | `keyid`; sig-expired / key-expired / key-revoked      |
/// | `ERRSIG keyid pk hash class time rc …`       | error  | `keyid`; key-missing when rc is 9, else sys-error     |
///
/// gpg that cannot be run is one "error" signature with sys-error. The key ring is the user's
/// (`$GNUPGHOME`); nothing is imported or fetched (`--no-auto-key-retrieve`, whatever gpg.conf says: a
/// key server or WKD lookup would tell a stranger the message was read).
public enum SignatureCheck {
    public static func parse(statusLines text: String) -> [SignatureStatus] {
        var out: [(SignatureStatus, trusted: Bool)] = []
        func start(_ status: String, keyid: Substring?) {
            var s = SignatureStatus(status: status)
            s.keyid = keyid.map { String($0.suffix(16)) }
            out.append((s, false))
        }
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count >= 2, words[0] == "[GNUPG:]" else { continue }
            let args = Array(words.dropFirst(2))
            let last = out.indices.last
            switch words[1] {
            case "NEWSIG": continue  // the result line that follows starts the signature
            case "GOODSIG":
                start("good", keyid: nil)
                let user = args.dropFirst().joined(separator: " ")
                if !user.isEmpty { out[out.count - 1].0.userid = user }
            case "BADSIG": start("bad", keyid: args.first)
            case "EXPSIG", "EXPKEYSIG", "REVKEYSIG":
                start("error", keyid: args.first)
                out[out.count - 1].0.errors = [
                    words[1] == "EXPSIG" ? "sig-expired" : words[1] == "EXPKEYSIG" ? "key-expired" : "key-revoked"
                ]
            case "ERRSIG":
                start("error", keyid: args.first)
                out[out.count - 1].0.errors = [args.count > 5 && args[5] == "9" ? "key-missing" : "sys-error"]
            case "VALIDSIG":
                guard let last, args.count >= 4 else { continue }
                out[last].0.fingerprint = String(args[0])
                out[last].0.created = Int64(args[2])
                if let e = Int64(args[3]), e > 0 { out[last].0.expires = e }
            case "TRUST_FULLY", "TRUST_ULTIMATE":
                if let last { out[last].trusted = true }
            default: continue
            }
        }
        // A user id (and its address) only from a key of full validity, as GMime's valid_userid.
        return out.map { s, trusted in
            var s = s
            if trusted, s.status == "good", let user = s.userid { s.email = email(in: user) } else { s.userid = nil }
            return s
        }
    }

    /// The address in `Name <address>`, else the whole user id if it is one.
    static func email(in user: String) -> String? {
        if let open = user.lastIndex(of: "<"), let close = user.lastIndex(of: ">"), open < close {
            return String(user[user.index(after: open)..<close])
        }
        return user.contains("@") ? user : nil
    }

    /// The statuses of the signatures of `part` (a `multipart/signed` of `bytes`); nil for any other part.
    /// `environment`: added to gpg's (a test's own `GNUPGHOME`).
    public static func verify(
        _ part: MIMEPart, in bytes: [UInt8], gpg: String = "gpg", environment: [String: String] = [:]
    ) -> [SignatureStatus]? {
        guard part.contentType.type == "multipart", part.contentType.subtype == "signed", part.children.count == 2,
            part.contentType.parameters["protocol"]?.lowercased() == "application/pgp-signature"
        else { return nil }
        let signed = LineEndings.toCRLF(Array(bytes[part.children[0].range]))
        let signature = part.children[1].decodedBody(in: bytes)
        var failed = SignatureStatus(status: "error")
        failed.errors = ["sys-error"]
        // The signature goes through a private file, the signed data on standard input.
        var template = Array(((processEnvironment()["TMPDIR"] ?? "/tmp") + "/mo-signature-XXXXXX").utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { return [failed] }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let wrote = signature.withUnsafeBytes { writeAll(fd, $0) }
        close(fd)
        guard wrote == nil,
            let result = try? ChildProcess.run(
                [gpg, "--batch", "--no-tty", "--no-auto-key-retrieve", "--status-fd", "1", "--verify", path, "-"], input: signed,
                environment: environment)
        else { return [failed] }
        let statuses = parse(statusLines: result.stdoutString)
        return statuses.isEmpty ? [failed] : statuses
    }
}
