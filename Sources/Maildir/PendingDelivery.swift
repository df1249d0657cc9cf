#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A message being written into `tmp/`. Not shared between threads; one writer at a time.
public final class PendingDelivery {
    public let folder: MaildirFolder
    /// The unique part of the final name: chosen with the tmp name, changed only by `renewUnique` and
    /// `addField`.
    public private(set) var unique: String
    /// Comma fields the final name carries after the generated part (`addField`), kept by `renewUnique`.
    private var fields = ""
    /// The file in `tmp/` being written.
    public let tmpPath: String
    private var fd: Int32
    private var finished = false
    private var sealed = false
    /// The final name is a hard link (the tmp name still exists until `finish`).
    private var linked = false

    init(folder: MaildirFolder, unique: String, tmpPath: String, fd: Int32) {
        self.folder = folder; self.unique = unique; self.tmpPath = tmpPath; self.fd = fd
    }

    deinit { abort() }

    /// Appends bytes to the message.
    public func write(_ bytes: [UInt8]) throws(MaildirError) {
        let e: Int32? = bytes.withUnsafeBytes { raw in
            guard !finished, fd >= 0 else { return -1 }
            return raw.isEmpty ? nil : WriteFault.check(raw.count) ?? writeAll(fd, raw)
        }
        if e == -1 { throw MaildirError("cannot write", tmpPath, detail: "delivery already finished") }
        if let e { throw MaildirError("cannot write", tmpPath, code: e) }
    }

    /// Appends bytes to the message.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(MaildirError) {
        guard !finished, fd >= 0 else { throw MaildirError("cannot write", tmpPath, detail: "delivery already finished") }
        if bytes.isEmpty { return }
        if let e = WriteFault.check(bytes.count) ?? writeAll(fd, bytes) { throw MaildirError("cannot write", tmpPath, code: e) }
    }

    /// Makes the message durable and visible in `new/` or `cur/`; returns its final path.
    ///
    /// Steps: `seal` (fsync and close the tmp file); `link` to the final name; fsync the target
    /// directory; `finish` (unlink the tmp name). If the directory sync fails the final name is removed
    /// again and the error thrown, so a failure report never leaves a copy behind that a retry would
    /// duplicate. A sync's fetch batch (`PreparedFolder.deliver`) runs the same steps for many messages with
    /// one directory sync.
    public func commit(
        to subdir: MaildirSubdir = .new, flags: MaildirFlags = [],
        uid: UInt32? = nil
    ) throws(MaildirError) -> String {
        try seal()
        let finalPath = try link(to: subdir, flags: flags, uid: uid)
        do {
            try fsyncDirectory(folder.directory(subdir))
        } catch {
            unlinkFinal()
            throw error
        }
        finish()
        return finalPath
    }

    /// Asks the kernel to start writing the body out now, so that the `seal` of a batch finds most of
    /// its data already on the way (Linux `sync_file_range`; a no-op where it fails).
    public func startWriteback() {
        if fd >= 0 && !sealed { Maildir.startWriteback(fd) }
    }

    /// Makes the body durable: fsync and close the tmp file. Idempotent.
    public func seal() throws(MaildirError) {
        if sealed { return }
        guard !finished, fd >= 0 else { throw MaildirError("cannot deliver", tmpPath, detail: "delivery already finished") }
        if let e = fsyncRetrying(fd) { throw MaildirError("cannot sync", tmpPath, code: e) }
        let closed = Glibc.close(fd)
        fd = -1
        if closed != 0 && errno != EINTR { throw MaildirError("cannot write", tmpPath, code: errno) }
        sealed = true
    }

    /// The final path once linked.
    public private(set) var finalPath: String?

    /// Links the sealed file to its final name in `subdir` (a new unique part if that name exists: never
    /// overwrite). The caller must fsync the directory before relying on the name, and remove it again
    /// (`unlinkFinal`) if that fails. A caller that announced `unique` beforehand uses `linkExactly`.
    public func link(to subdir: MaildirSubdir, flags: MaildirFlags = [], uid: UInt32? = nil) throws(MaildirError) -> String {
        for _ in 0..<8 {
            if let path = try linkExactly(to: subdir, flags: flags, uid: uid) { return path }
            renewUnique()
        }
        throw MaildirError("cannot deliver", folder.directory(subdir), detail: "unique names kept colliding")
    }

    /// Links the sealed file to its final name in `subdir` under exactly `unique` (rename without
    /// replacing where hard links are unsupported); nil, and nothing changed, when that name exists.
    /// The same obligations as `link` follow.
    public func linkExactly(to subdir: MaildirSubdir, flags: MaildirFlags = [], uid: UInt32? = nil) throws(MaildirError) -> String? {
        guard sealed, !finished, finalPath == nil else {
            throw MaildirError("cannot deliver", tmpPath, detail: sealed ? "delivery already finished" : "not sealed")
        }
        let name: MaildirFilename
        do {
            name = try MaildirFilename(unique: unique, flags: flags, uid: uid, hasInfo: subdir == .cur, separator: folder.separator)
        } catch {
            throw MaildirError("cannot deliver", tmpPath, detail: error.description)
        }
        let path = folder.directory(subdir) + "/" + name.rendered
        if Glibc.link(tmpPath, path) == 0 { linked = true; finalPath = path; return path }
        let e = errno
        if e == EEXIST { return nil }
        guard linkUnsupported(e) else { throw MaildirError("cannot link \(tmpPath) to", path, code: e) }
        switch renameNoReplace(tmpPath, path) {
        case nil: finalPath = path; return path
        case EEXIST?: return nil
        case let e?: throw MaildirError("cannot rename \(tmpPath) to", path, code: e)
        }
    }

    /// Chooses a fresh unique part for the final name (the tmp name stays): for a name found taken, before
    /// it is announced or linked.
    public func renewUnique() {
        unique = MaildirUniqueName.generate(separator: folder.separator) + fields
    }

    /// Adds a `,NAME=value` field to the unique part (`MaildirFilename.field`), before the name is announced
    /// or linked: facts about the message that stay with its file through every rename and move (Gmail
    /// mode's thread id, `,G=`). `name` is letters other than U (mbsync's UID field); `value` digits.
    public func addField(_ name: String, _ value: String) {
        precondition(finalPath == nil && name != "U" && !name.isEmpty && name.allSatisfy(\.isLetter) && value.allSatisfy(\.isNumber))
        fields += "," + name + "=" + value
        unique += "," + name + "=" + value
    }

    /// Takes the final name back (its directory could not be synced). With a hard link the tmp name
    /// still holds the body; after a rename fallback the body goes with it, as a failed delivery should.
    public func unlinkFinal() {
        if let finalPath { Glibc.unlink(finalPath); self.finalPath = nil }
        if !linked { finished = true }
    }

    /// Ends a delivery whose directory was synced: drops the tmp name. A failing unlink is ignored (a
    /// stale tmp file is harmless; reporting failure would cause a duplicate delivery).
    public func finish() {
        guard finalPath != nil else { return }
        finished = true
        if linked { Glibc.unlink(tmpPath) }
    }

    /// Discards the message: closes and unlinks the tmp file. Harmless after `commit`.
    public func abort() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
        if !finished { Glibc.unlink(tmpPath); finished = true }
    }
}
