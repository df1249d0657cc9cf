#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program and collects its output.
///
/// Children are spawned with an empty signal mask and default signal actions: a thread started by Swift
/// (or by Foundation's `Process`) may block SIGTERM, and a child inheriting that mask could not be stopped.
/// Used for `password-command` and for the test servers.
public struct ChildProcess: Sendable {
    public struct Result: Sendable, Equatable {
        public var status: Int32  // exit status, or 128 + signal number
        public var stdout: [UInt8]
        public var stderr: [UInt8]
        public var stdoutString: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrString: String { String(decoding: stderr, as: UTF8.self) }
    }

    public struct SpawnError: MoError {
        public let program: String
        public let code: Int32
        public var kind: ErrorKind { .localIO }
        public var description: String { "cannot run \(program): \(errnoDescription(code))" }
    }

    /// Runs `argv` (argv[0] is looked up in PATH), feeding `input` on stdin, and waits for it to end.
    /// `environment` entries are added to (or replace) the current environment.
    public static func run(_ argv: [String], input: [UInt8] = [], environment: [String: String] = [:]) throws -> Result {
        precondition(!argv.isEmpty)
        var inPipe: [Int32] = [-1, -1], outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        for i in 0..<3 {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw SpawnError(program: argv[0], code: errno) }
            // Close-on-exec so other children never hold our ends open.
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC); _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            if i == 0 { inPipe = fds } else if i == 1 { outPipe = fds } else { errPipe = fds }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        var pid: pid_t = 0
        let rc = spawn(&pid, argv, environment, &actions)
        Glibc.close(inPipe[0]); Glibc.close(outPipe[1]); Glibc.close(errPipe[1])
        if rc != 0 {
            Glibc.close(inPipe[1]); Glibc.close(outPipe[0]); Glibc.close(errPipe[0])
            throw SpawnError(program: argv[0], code: rc)
        }
        let (out, err) = pump(input: input, stdinFD: inPipe[1], stdoutFD: outPipe[0], stderrFD: errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: code, stdout: out, stderr: err)
    }

    /// Starts `argv` with stdin, stdout and stderr on /dev/null and returns at once (for a caller that
    /// waits or kills it itself). `newSession`: in a session of its own (setsid), so it outlives the
    /// caller's terminal and process group (mo-sendmail's waiter, after neomutt's sendmail call ends).
    public static func startDetached(_ argv: [String], environment: [String: String] = [:], newSession: Bool = false) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var pid: pid_t = 0
        let rc = spawn(&pid, argv, environment, &actions, extraFlags: newSession ? 0x80 : 0)  // POSIX_SPAWN_SETSID (glibc), not imported
        guard rc == 0 else { throw SpawnError(program: argv[0], code: rc) }
        return pid
    }

    /// The running program's own path (`/proc/self/exe`), for starting itself or a sibling program; the
    /// name it was started as when that cannot be read.
    public static func ownExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlink("/proc/self/exe", &buffer, 4096)
        return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    /// posix_spawnp with an empty signal mask and default signal actions, `environment` added to ours.
    private static func spawn(
        _ pid: inout pid_t, _ argv: [String], _ environment: [String: String],
        _ actions: inout posix_spawn_file_actions_t, extraFlags: Int16 = 0
    ) -> Int32 {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(); sigemptyset(&empty)
        var all = sigset_t(); sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | extraFlags)
        var env = processEnvironment()
        for (k, v) in environment { env[k] = v }
        let envStrings = env.map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        let rc = withCStrings(argv) { cArgv in
            withCStrings(envStrings) { cEnv in posix_spawnp(&child, argv[0], &actions, &attr, cArgv, cEnv) }
        }
        pid = child
        return rc
    }

    /// Writes `input` and drains both output pipes with poll, so neither side can deadlock on a full pipe.
    private static func pump(input: [UInt8], stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32) -> ([UInt8], [UInt8]) {
        var out: [UInt8] = [], err: [UInt8] = []
        var written = 0
        var inFD = stdinFD
        if input.isEmpty { Glibc.close(inFD); inFD = -1 }
        var outOpen = true, errOpen = true
        var buffer = [UInt8](repeating: 0, count: 65536)
        // A child that exits early must not kill us with SIGPIPE when we write its stdin.
        signal(SIGPIPE, SIG_IGN)
        while outOpen || errOpen || inFD >= 0 {
            var fds: [pollfd] = []
            if outOpen { fds.append(pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if errOpen { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
            if inFD >= 0 { fds.append(pollfd(fd: inFD, events: Int16(POLLOUT), revents: 0)) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for p in fds where p.revents != 0 {
                if p.fd == inFD {
                    let n = input.withUnsafeBytes { raw in
                        Glibc.write(inFD, raw.baseAddress! + written, input.count - written)
                    }
                    if n > 0 { written += n }
                    if n < 0 && errno != EINTR && errno != EAGAIN || written == input.count {
                        Glibc.close(inFD); inFD = -1
                    }
                } else {
                    let n = Glibc.read(p.fd, &buffer, buffer.count)
                    if n > 0 {
                        if p.fd == stdoutFD { out.append(contentsOf: buffer[0..<n]) } else { err.append(contentsOf: buffer[0..<n]) }
                    } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                        if p.fd == stdoutFD { outOpen = false; Glibc.close(stdoutFD) } else { errOpen = false; Glibc.close(stderrFD) }
                    }
                }
            }
        }
        return (out, err)
    }
}

/// The process environment as a dictionary.
public func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
        let s = String(cString: entry)
        if let eq = s.firstIndex(of: "=") {
            result[String(s[..<eq])] = String(s[s.index(after: eq)...])
        }
        p += 1
    }
    return result
}

/// Calls `body` with a NULL-terminated C array of the strings, valid only during the call.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
