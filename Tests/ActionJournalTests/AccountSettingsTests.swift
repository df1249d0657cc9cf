import Testing
@testable import ClientSettings
import MoConfig
import MoCore

@Suite struct AccountSettingsTests {
    /// The connections of one run share one answer of the password command.
    @Test func memoFetchesOnce() throws {
        let memo = SecretMemo()
        var calls = 0
        for _ in 0..<3 {
            #expect(
                try memo.value {
                    calls += 1; return Secret("pw")
                } == "pw")
        }
        #expect(calls == 1)
    }

    /// The one mapping from config to IMAP settings: the sync path used to send an empty password when the
    /// account had no password-command; now every program gets the config error naming the account.
    @Test func noPasswordCommandIsAConfigErrorNotAnEmptyPassword() {
        let c = IMAPConfig(host: "127.0.0.1", user: "me", passwordCommand: nil)
        for memo in [nil, SecretMemo()] {
            let settings = AccountSettings.imap(c, account: "work", memo: memo)
            #expect {
                try settings.secret()
            } throws: { error in
                (error as? MoError)?.kind == .config && "\(error)".contains("account work: imap has no password-command")
            }
        }
    }
}
