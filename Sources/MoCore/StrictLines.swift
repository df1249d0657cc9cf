/// The lines of a small state file read strictly (a keyword table, the local tags): every line ends with
/// LF, and a last line without one is an error, never a line. Such files are written whole and renamed
/// into place, so a torn last line means the file was cut short (a full disk, a copy interrupted); reading
/// it as a line would take half an entry for a whole one. One reader, so each file's parser states only
/// what its lines mean.
public enum StrictLines {
    /// A problem on line `line` (1-based) of the file; a line handler throws it with `line` 0 and the
    /// reader fills the number in.
    public struct Problem: Error, Sendable {
        public var line: Int
        public var problem: String
        public init(_ problem: String, line: Int = 0) {
            self.problem = problem
            self.line = line
        }
    }

    /// Calls `body` with each line, its LF left out, in order; stops at the first problem.
    public static func forEach(
        _ bytes: [UInt8], _ body: (ArraySlice<UInt8>) throws(Problem) -> Void
    ) throws(Problem) {
        var start = 0, number = 0
        while start < bytes.count {
            number += 1
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw Problem(
                    "incomplete last line \(quotedForMessage(bytes: bytes[start...].prefix(80))) (the file was cut short)",
                    line: number)
            }
            do {
                try body(bytes[start..<end])
            } catch {
                throw Problem(error.problem, line: number)
            }
            start = end + 1
        }
    }
}
