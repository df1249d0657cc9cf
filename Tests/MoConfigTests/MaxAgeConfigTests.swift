import MoCore
import MoTestSupport
import Testing
@testable import MoConfig

/// Issue #29: `max-age` and its companions in `[account.NAME.sync]`.
@Suite struct MaxAgeConfigTests {
    @Test(arguments: [
        ("365d", MaxAge.days(365)), ("12w", .days(84)), ("2y", .days(730)), ("2024-02-29", .since(year: 2024, month: 2, day: 29)),
        ("1d", .days(1))
    ])
    func agesRead(_ text: String, _ age: MaxAge) {
        #expect(MaxAge(text) == age)
        #expect(MaxAge(text).map { MaxAge($0.description) } == age)  // written back as read
    }

    @Test(arguments: ["", "0d", "-3d", "365", "d", "1m", "2023-02-29", "2024-13-01", "24-01-01", "1969-12-31", "365 d", "100001d"])
    func nonAgesRefused(_ text: String) {
        #expect(MaxAge(text) == nil)
    }

    @Test func theKeysRead() throws {
        let c = try loadConfig(
            minimalConfig() + """

                [account.work.sync]
                max-age = "365d"
                max-age-keeps = ["flagged"]
                expire-local = true
                [account.work.sync.max-age-folders]
                "Archive" = "30d"
                "INBOX" = "none"
                """)
        let s = c.accounts[0].sync
        #expect(s.maxAge(forFolder: "Sent") == .days(365))
        #expect(s.maxAge(forFolder: "Archive") == .days(30))
        #expect(s.maxAge(forFolder: "INBOX") == nil)
        #expect(s.maxAgeKeepsFlagged && !s.maxAgeKeepsUnread && s.expireLocal)
        #expect(SyncConfig().maxAge == nil && SyncConfig().maxAgeKeepsUnread && !SyncConfig().expireLocal)
    }

    @Test(arguments: [
        (
            "max-age = \"1 year\"",
            "/p/config.toml:8: account.work.sync.max-age: '1 year' is not an age such as \"365d\", \"12w\", \"2y\" or \"2024-01-01\""
        ),
        ("max-age-keeps = [\"starred\"]", "/p/config.toml:8: account.work.sync.max-age-keeps: 'starred' is not one of flagged, unread"),
        (
            "max-age-folders = { \"Archive\" = \"soon\" }",
            "/p/config.toml:8: account.work.sync.max-age-folders.Archive: 'soon' is not an age such as \"365d\", \"12w\", \"2y\" or \"2024-01-01\", or \"none\""
        ),
        ("expire-local = \"yes\"", "/p/config.toml:8: account.work.sync.expire-local: expected a boolean, found a string")
    ])
    func badValuesNameTheKey(_ line: String, _ message: String) {
        #expect(configError(minimalConfig() + "\n[account.work.sync]\n" + line) == message)
    }
}
