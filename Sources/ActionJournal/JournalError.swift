import MoCore

/// A problem with the action journal or its outbox, located as precisely as known:
/// `FILE:LINE: PROBLEM`, `FILE: PROBLEM`, or just `PROBLEM`.
public struct JournalError: MoError, Equatable {
    public var file: String?
    public var line: Int?
    public var problem: String
    public let kind: ErrorKind

    public init(file: String? = nil, line: Int? = nil, problem: String, kind: ErrorKind) {
        self.file = file
        self.line = line
        self.problem = problem
        self.kind = kind
    }

    public var description: String {
        // Problems may quote bytes of a damaged journal or a server's reply.
        guard let file else { return escapedForMessage(problem) }
        return escapedForMessage(line.map { "\(file):\($0): \(problem)" } ?? "\(file): \(problem)")
    }
}
