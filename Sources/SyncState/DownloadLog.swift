#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// `<state>/<account>/downloads`: the bytes of message bodies this account downloaded, per hour, over the
/// last 24 hours, so a daily allowance (`daily-download`; Gmail's IMAP allowance is 2,500 MB a day, and an
/// account past it is refused for a day) holds across runs. One `HOUR BYTES` line per hour with downloads
/// (HOUR: seconds since 1970 / 3600), oldest first:
///
///     493301 1048576
///     493302 734003200
///
/// The account lock makes mo-sync its one writer. A run adds what it is about to fetch before it fetches,
/// so a run killed mid-FETCH has counted it (the count errs high, never low). An unreadable or damaged
/// file reads as no downloads: the allowance is a courtesy to the server, and the server's own refusal
/// (`OVERQUOTA`) still stops the run.
public struct DownloadLog: Sendable, Equatable {
    public static let fileName = "downloads"
    public private(set) var byHour: [Int: Int] = [:]

    public init() {}

    /// Bytes in the 24 hours up to `now` (seconds since 1970), counted by whole hours: the 25 hours that
    /// reach into it, so a download is never forgotten before a full day has passed.
    public func last24Hours(now: Int) -> Int {
        let hour = now / 3600
        return byHour.filter { $0.key > hour - 25 && $0.key <= hour }.values.reduce(0, +)
    }

    /// Adds `bytes` at `now`, and forgets hours older than a day.
    public mutating func add(_ bytes: Int, now: Int) {
        let hour = now / 3600
        byHour = byHour.filter { $0.key > hour - 25 }
        byHour[hour, default: 0] += bytes
    }

    public static func load(in directory: String) -> DownloadLog {
        var log = DownloadLog()
        guard case .success(let bytes) = readWholeFile(directory + "/" + fileName) else { return log }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 2, let hour = Int(f[0]), let n = Int(f[1]), n >= 0 else { continue }
            log.byHour[hour, default: 0] += n
        }
        return log
    }

    /// Writes it atomically (write, fsync, rename).
    public func save(in directory: String) throws(StateError) {
        let path = directory + "/" + Self.fileName
        let text = byHour.keys.sorted().map { "\($0) \(byHour[$0]!)\n" }.joined()
        if case .failure(let e) = replaceFileAtomically(path, Array(text.utf8)) {
            throw StateError(file: path, cannot: "write", code: e.code)
        }
    }
}
