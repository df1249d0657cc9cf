extension Config {
    /// The accounts named on a command line, in that order; all accounts when `names` is empty.
    public func selectAccounts(_ names: [String]) throws(ConfigError) -> [Account] {
        if names.isEmpty { return accounts }
        var selected: [Account] = []
        for name in names {
            guard let account = account(named: name) else {
                let known = accounts.map(\.name).joined(separator: ", ")
                throw ConfigError(file: path, problem: "no account named '\(name)' (accounts: \(known))")
            }
            if !selected.contains(where: { $0.name == name }) { selected.append(account) }
        }
        return selected
    }
}
