import Testing
import MoCore
@testable import MoConfig

/// mo.toml(5) lists exactly the keys the parser accepts, table by table.
@Suite struct ManualKeysTests {
    static let page = String(#filePath.split(separator: "/").dropLast(3).joined(separator: "/")).withLeadingSlash + "/docs/mo.toml.5"

    /// Section title → the keys documented under it as `.TP` / `.B key`.
    static func documentedKeys() throws -> [String: [String]] {
        guard case .success(let bytes) = readWholeFile(page) else { throw GenericError(.localIO, "cannot read \(page)") }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var keys: [String: [String]] = [:], section = ""
        for (i, line) in lines.enumerated() {
            if line.hasPrefix(".SS ") { section = String(line.dropFirst(4)).replacingAll("\"", with: ""); keys[section] = [] }
            if line == ".TP", i + 1 < lines.count, lines[i + 1].hasPrefix(".B "), !section.isEmpty {
                keys[section, default: []].append(String(lines[i + 1].dropFirst(3)).replacingAll("\\-", with: "-"))
            }
        }
        return keys
    }

    @Test func everyKeyAndNoOther() throws {
        let keys = try Self.documentedKeys()
        #expect(keys["[general]"] == ConfigSchema.generalKeys)
        #expect(keys["[account.NAME]"] == ConfigSchema.accountKeys)
        #expect(keys["[account.NAME.imap]"] == ConfigSchema.serverKeys)
        #expect(keys["[account.NAME.smtp]"] == ConfigSchema.smtpKeys.filter { !ConfigSchema.serverKeys.contains($0) })
        #expect(keys["[account.NAME.sync]"] == ConfigSchema.syncKeys)
        #expect(keys["[keywords]"] == [])  // every key is a keyword
        #expect(keys["[[tag-rule]]"] == ConfigSchema.tagRuleKeys)
        #expect(keys["[account.NAME.oauth2]"] == ConfigSchema.oauth2Keys)
        #expect(keys["[account.NAME.jmap]"] == ConfigSchema.jmapKeys)
        #expect(
            Set(keys.keys) == [
                "[general]", "[account.NAME]", "[account.NAME.imap]", "[account.NAME.smtp]",
                "[account.NAME.sync]", "[account.NAME.oauth2]", "[account.NAME.jmap]", "[keywords]", "[[tag-rule]]"
            ])
    }
}

extension String {
    var withLeadingSlash: String { hasPrefix("/") ? self : "/" + self }
    func replacingAll(_ target: String, with replacement: String) -> String {
        var out = "", rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
