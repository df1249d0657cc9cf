#if canImport(Glibc)
import Glibc
#endif
import MoCore

/// A message being written into `tmp/`. Not shared between threads; one writer at a time.
public final class PendingDelivery {
    public let folder: MaildirFolder
    /// The unique part chosen for this message (used for the final name unless it collides).
    public let unique: String
    /// The file in `tmp/` being written.
    public let tmpPath: String
    private var fd: Int32
    private var finished = false

    init(folder: MaildirFolder, unique: String, tmpPath: String, fd: Int32) {
        self.folder = folder; self.unique = unique; self.tmpPath = tmpPath; self.fd = fd
    }

    deinit { abort() }

    /// Appends bytes to the message.
    public func write(_ bytes: [UInt8]) throws(MaildirError) {
        let e: Int32? = bytes.withUnsafeBytes { raw in
            guard !finished, fd >= 0 else { return -1 }
            return raw.isEmpty ? nil : writeAll(fd, raw)
        }
        if e == -1 { throw MaildirError("cannot write", tmpPath, detail: "delivery already finished") }
        if let e { throw MaildirError("cannot write", tmpPath, code: e) }
    }

    /// Appends bytes to the message.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(MaildirError) {
        guard !finished, fd >= 0 else { throw MaildirError("cannot write", tmpPath, detail: "delivery already finished") }
        if bytes.isEmpty { return }
        if let e = writeAll(fd, bytes) { throw MaildirError("cannot write", tmpPath, code: e) }
    }

    /// Makes the message durable and visible in `new/` or `cur/`; returns its final path.
    ///
    /// Steps: fsync and close the tmp file; link it to the final name (a new unique part if that name
    /// exists: never overwrite; rename without replacing where hard links are unsupported); fsync the
    /// target directory; unlink the tmp name. If the directory sync fails the final name is removed
    /// again and the error thrown, so a failure report never leaves a copy behind that a retry would
    /// duplicate. After success, a failing tmp unlink is ignored (a stale tmp file is harmless and
    /// reporting failure would cause a duplicate delivery).
    public func commit(to subdir: MaildirSubdir = .new, flags: MaildirFlags = [],
                       uid: UInt32? = nil) throws(MaildirError) -> String {
        guard !finished, fd >= 0 else { throw MaildirError("cannot deliver", tmpPath, detail: "delivery already finished") }
        if let e = fsyncRetrying(fd) { throw MaildirError("cannot sync", tmpPath, code: e) }
        let closed = Glibc.close(fd)
        fd = -1
        if closed != 0 && errno != EINTR { throw MaildirError("cannot write", tmpPath, code: errno) }

        let targetDir = folder.directory(subdir)
        var candidate = unique
        var finalPath = ""
        var linked = false
        var delivered = false
        for attempt in 0..<8 {
            if attempt > 0 { candidate = MaildirUniqueName.generate(separator: folder.separator) }
            let name: MaildirFilename
            do {
                name = try MaildirFilename(unique: candidate, flags: flags, uid: uid,
                                           hasInfo: subdir == .cur, separator: folder.separator)
            } catch {
                throw MaildirError("cannot deliver", tmpPath, detail: error.description)
            }
            finalPath = targetDir + "/" + name.rendered
            if Glibc.link(tmpPath, finalPath) == 0 { linked = true; delivered = true; break }
            let e = errno
            if e == EEXIST { continue }
            guard linkUnsupported(e) else { throw MaildirError("cannot link \(tmpPath) to", finalPath, code: e) }
            switch renameNoReplace(tmpPath, finalPath) {
            case nil: delivered = true
            case EEXIST?: continue
            case let e?: throw MaildirError("cannot rename \(tmpPath) to", finalPath, code: e)
            }
            break
        }
        guard delivered else { throw MaildirError("cannot deliver", targetDir, detail: "unique names kept colliding") }
        do {
            try fsyncDirectory(targetDir)
        } catch {
            Glibc.unlink(finalPath)
            throw error
        }
        finished = true
        if linked { Glibc.unlink(tmpPath) }
        return finalPath
    }

    /// Discards the message: closes and unlinks the tmp file. Harmless after `commit`.
    public func abort() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
        if !finished { Glibc.unlink(tmpPath); finished = true }
    }
}
