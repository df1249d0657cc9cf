import MoCore

/// `AccountSync` for a JMAP account (docs/jmap.md).
extension AccountSync {
    func runJMAP() throws -> [FolderSummary] {
        throw GenericError(.unavailable, "account \(account.name): syncing a JMAP account is not built yet (docs/jmap.md)")
    }
}
