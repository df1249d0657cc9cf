#if canImport(Glibc)
    import Glibc
#endif

/// Linux inotify on a set of directories, reduced to what a "something changed, look again" watcher needs:
/// add directories, wait (poll, never spin) until events are readable, and drain them as a count. Names are
/// not reported: the caller rescans, which is the only way to be right after a queue overflow anyway.
///
/// Watched: entries created, written and closed, renamed in or out, deleted (`IN_CREATE`, `IN_CLOSE_WRITE`,
/// `IN_MOVED_FROM`, `IN_MOVED_TO`, `IN_DELETE`). A directory that is deleted drops out of the set by itself
/// (the kernel's `IN_IGNORED`); adding a directory twice keeps one watch.
///
/// Thread-safe: each call is one system call on the descriptor (`add` may run while another thread waits).
public final class DirectoryWatch: @unchecked Sendable {
    private let fd: Int32

    public init() throws {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw GenericError(.localIO, "inotify_init1: \(errnoDescription(errno))") }
    }

    deinit { Glibc.close(fd) }

    static let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_ONLYDIR)

    /// Watches `directory`; a failure names the reason, e.g. it is gone or the user's watch limit
    /// (fs.inotify.max_user_watches) is reached.
    @discardableResult
    public func add(_ directory: String) -> Result<Void, GenericError> {
        if inotify_add_watch(fd, directory, Self.mask) >= 0 { return .success(()) }
        return .failure(GenericError(.localIO, "cannot watch \(directory): \(errnoDescription(errno))"))
    }

    /// Waits up to `seconds` for events; true when some are ready to drain.
    public func wait(seconds: Double) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(0, min(seconds, 3600)) * 1000)
        return poll(&p, 1, ms) > 0 && p.revents & Int16(POLLIN) != 0
    }

    /// What `drain` read: the number of events, and whether the kernel's queue overflowed (events lost).
    public struct Batch: Sendable, Equatable {
        public var events = 0
        public var overflowed = false
        public init(events: Int = 0, overflowed: Bool = false) {
            self.events = events
            self.overflowed = overflowed
        }
    }

    /// Reads every queued event without blocking. `IN_IGNORED` (a watch that ended) does not count.
    public func drain() -> Batch {
        var batch = Batch()
        // Large enough for many events per read; an event is 16 bytes plus a name of at most NAME_MAX + 1.
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return batch }
            var offset = 0
            buffer.withUnsafeBytes { raw in
                while offset + MemoryLayout<inotify_event>.size <= n {
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { batch.overflowed = true }
                    if mask & UInt32(IN_IGNORED) == 0 { batch.events += 1 }
                    offset += MemoryLayout<inotify_event>.size + Int(length)
                }
            }
        }
    }
}
