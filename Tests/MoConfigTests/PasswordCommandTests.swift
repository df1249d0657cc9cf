import MoCore
import Testing
@testable import MoConfig

@Suite struct PasswordCommandTests {
    @Test func firstLineOfStdout() throws {
        let secret = try PasswordCommand("printf 'hunter2 \\r\\nsecond line\\n'", account: "work").run()
        #expect(secret.reveal() == "hunter2 ")
    }

    @Test func environmentIsPassed() throws {
        let secret = try PasswordCommand("echo \"$MO_TEST_SECRET\"", account: "work").run(environment: ["MO_TEST_SECRET": "s3"])
        #expect(secret.reveal() == "s3")
    }

    @Test func nonZeroExitNamesStatusAndFirstStderrLine() {
        #expect(throws: PasswordCommandError(account: "work", problem: "password-command failed (exit 3): gpg: decryption failed")) {
            try PasswordCommand("echo topsecret; echo 'gpg: decryption failed' >&2; echo more >&2; exit 3", account: "work").run()
        }
        #expect(throws: PasswordCommandError(account: "work", problem: "password-command failed (exit 1)")) {
            try PasswordCommand("false", account: "work").run()
        }
    }

    @Test func emptyOutput() {
        for command in ["true", "echo", "printf '\\n\\nlater'"] {
            #expect(throws: PasswordCommandError(account: "work", problem: "password-command printed nothing")) {
                try PasswordCommand(command, account: "work").run()
            }
        }
    }

    @Test func errorDescriptionAndKind() throws {
        do {
            _ = try PasswordCommand("echo topsecret; exit 1", account: "work").run()
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "account work: password-command failed (exit 1)")
            #expect(!error.description.contains("topsecret"))
            #expect(error.kind == .config)
        }
    }

    @Test func secretNeverPrints() throws {
        let secret = try PasswordCommand("echo topsecret", account: "work").run()
        #expect(secret.reveal() == "topsecret")
        #expect("\(secret)" == "<redacted>")
        #expect(String(describing: secret) == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("topsecret"))
        #expect(!"\([secret])".contains("topsecret"))
    }
}
