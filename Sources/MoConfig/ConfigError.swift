import MoCore

/// A configuration problem, located as precisely as known.
///
/// `description` is `FILE:LINE: KEY: PROBLEM`; parts that are unknown are left out
/// (`FILE: PROBLEM` for a whole-file problem, `FILE:LINE:COL: PROBLEM` for TOML syntax, just `PROBLEM`
/// when there is no file). Scripts and tests rely on this exact shape.
public struct ConfigError: MoError, Equatable {
    public var file: String?
    public var line: Int?
    public var column: Int?
    /// The full dotted key (`account.work.imap.port`), quoted TOML-style where needed.
    public var key: String?
    public var problem: String

    public init(file: String? = nil, line: Int? = nil, column: Int? = nil, key: String? = nil, problem: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.problem = problem
    }

    public var kind: ErrorKind { .config }

    public var description: String {
        let location = [file, line.map(String.init), column.map(String.init)].compactMap { $0 }
        let parts = (location.isEmpty ? [] : [location.joined(separator: ":")]) + [key, problem].compactMap { $0 }
        // Keys and problems may quote bytes of the file.
        return escapedForMessage(parts.joined(separator: ": "))
    }
}
