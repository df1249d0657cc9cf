import MoCore

/// A `password-command`: a shell command whose first line of output is the password (or OAuth token).
public struct PasswordCommand: Sendable, Equatable {
    /// Shell text, run as `/bin/sh -c COMMAND`.
    public var command: String
    /// The account it belongs to, for messages.
    public var account: String

    public init(_ command: String, account: String) {
        self.command = command
        self.account = account
    }

    /// Runs the command and returns the first line of its stdout (without the line end).
    /// `environment` entries are added to the inherited environment.
    /// Throws `PasswordCommandError` on a non-zero exit or empty output; the output never appears in it.
    public func run(environment: [String: String] = [:]) throws(PasswordCommandError) -> Secret {
        let result: ChildProcess.Result
        do {
            result = try ChildProcess.run(["/bin/sh", "-c", command], environment: environment)
        } catch {
            throw PasswordCommandError(account: account, problem: "cannot run password-command: \(error)")
        }
        guard result.status == 0 else {
            let detail = PasswordCommand.firstLine(result.stderr)
            let limited = detail.count > 200 ? String(detail.prefix(200)) + "…" : detail
            throw PasswordCommandError(
                account: account,
                problem: "password-command failed (exit \(result.status))" + (limited.isEmpty ? "" : ": \(limited)"))
        }
        let secret = PasswordCommand.firstLine(result.stdout)
        guard !secret.isEmpty else {
            throw PasswordCommandError(account: account, problem: "password-command printed nothing")
        }
        return Secret(secret)
    }

    /// Text up to the first LF, without a trailing CR. Spaces are kept: they may be part of a password.
    static func firstLine(_ bytes: [UInt8]) -> String {
        var line = bytes.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        return String(decoding: line, as: UTF8.self)
    }
}

/// A `password-command` did not produce a password. Kind `.config`: the fix is in the user's setup.
public struct PasswordCommandError: MoError, Equatable {
    public var account: String
    public var problem: String

    public var kind: ErrorKind { .config }
    /// `account NAME: PROBLEM`
    public var description: String { "account \(account): \(problem)" }
}
