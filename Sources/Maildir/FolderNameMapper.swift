import MoCore

/// Maps IMAP mailbox names (wire form: modified UTF-7, with the server's hierarchy delimiter) to
/// folder paths relative to the account root, and back. Pure: no file system access.
///
/// Layouts:
/// - verbatim: `INBOX` → `INBOX`, `Lists/dev` (or `Lists.dev` with delimiter `.`) → `Lists/dev`;
/// - maildir++: `INBOX` → `""` (the root), `Lists/dev` → `.Lists.dev`, `INBOX/x` → `.INBOX.x`.
/// Names are decoded to UTF-8 on disk (`Entw&APw-rfe` → `Entwürfe`). `INBOX` is case-insensitive
/// (RFC 3501) as a whole name only; `inbox/x` stays `inbox/x`.
///
/// Escape set (`%XX`, uppercase hex, reversible; every produced component is checked on the way back):
/// - always: `%` (the escape character itself), `/` inside a component (a delimiter other than `/`),
///   C0 control characters and DEL (NUL included);
/// - verbatim: a leading `.` (dotfiles are ignored by scanners), every dot of a `.` or `..`
///   component, and the first letter of a component named `cur`, `new` or `tmp` (`%63ur`, `%6Eew`,
///   `%74mp`: they would collide with the Maildir subdirectories);
/// - maildir++: every `.` (it is the level separator there).
///
/// Long names: a component longer than 255 bytes (NAME_MAX) after escaping (a maildir++ folder is one
/// component) is shortened to a prefix, `%%` and a hash of the whole component (`BoundedName`), with a
/// warning. Shorter components are untouched, so folders that always fitted keep their paths. A
/// shortened level cannot be read back by itself: `mailboxName` asks its caller for the full name.
///
/// Refused (never escaped): invalid modified UTF-7, an empty name, empty levels (`a//b`, `/abs`, `a/`),
/// `..` levels that climb above the root when read as a path (`..`, `../../etc`, `a/../../b`; a name
/// that tries to leave the root is hostile, not merely odd), a path longer than `pathBudget` (with the
/// root, a message file's path would pass PATH_MAX), and unusable delimiters. Harmless dot levels
/// (`a/../b`) are escaped, with a warning.
///
/// All work is done on UTF-8 bytes, never on `Character`s: a combining mark after `/` must not hide
/// the `/` from the checks.
public struct FolderNameMapper: Sendable {
    public let layout: MaildirLayout
    /// The longest folder path (bytes, relative to the root) this mapper produces; see `pathBudget(root:)`.
    public let pathBudget: Int

    public init(layout: MaildirLayout, pathBudget: Int = .max) { self.layout = layout; self.pathBudget = pathBudget }

    /// The room a folder path has under `root`: PATH_MAX (4096, with its NUL) less the root, the
    /// `/cur/` around it and a message file name of up to NAME_MAX.
    public static func pathBudget(root: String) -> Int { 4096 - 1 - root.utf8.count - "/".count - "/cur/".count - 255 }

    /// Components and maildir++ folder names longer than this are shortened (`BoundedName`).
    static let componentLimit = 255

    /// A mailbox's folder path and, when the name had to be escaped visibly, a warning naming it.
    public struct Mapping: Sendable, Equatable {
        /// Relative to the account root; `""` is the root itself (INBOX in maildir++).
        public let path: String
        /// E.g. `mailbox "a/../b": escaped as a/%2E%2E/b`.
        public let warning: String?
    }

    /// The folder path for a wire-form mailbox name. `delimiter` is the server's hierarchy delimiter
    /// from LIST (nil: flat namespace).
    public func localPath(forMailbox name: String, delimiter: Character?) throws(FolderNameError) -> Mapping {
        func refuse(_ reason: String) -> FolderNameError { FolderNameError(mailbox: name, reason: reason) }
        let decoded: String
        do { decoded = try ModifiedUTF7.decode(name) } catch { throw refuse("invalid modified UTF-7: \(error.reason)") }
        let bytes = Array(decoded.utf8)
        guard !bytes.isEmpty else { throw refuse("empty name") }
        if Self.isInbox(bytes) { return Mapping(path: layout == .verbatim ? "INBOX" : "", warning: nil) }

        let delim: UInt8?
        do { delim = try Self.delimiterByte(delimiter) } catch { throw refuse(error.reason) }
        let components = delim.map { d in bytes.split(separator: d, omittingEmptySubsequences: false) } ?? [bytes[...]]
        if components.contains(where: \.isEmpty) {
            throw refuse("empty hierarchy level (leading, trailing or doubled delimiter)")
        }
        var depth = 0
        for c in components {
            if c.elementsEqual("..".utf8) { depth -= 1 } else if !c.elementsEqual(".".utf8) { depth += 1 }
            if depth < 0 { throw refuse("climbs above the account root") }
        }

        var notable = false
        var escaped: [[UInt8]] = []
        for c in components {
            let e = escape(Array(c), notable: &notable)
            escaped.append(e)
        }
        let path: [UInt8]
        switch layout {
        case .verbatim:
            path = Array(escaped.map { BoundedName.bounded($0, limit: Self.componentLimit) }.joined(separator: [UInt8(ascii: "/")]))
        case .maildirPlusPlus:
            path = BoundedName.bounded(
                [UInt8(ascii: ".")] + Array(escaped.joined(separator: [UInt8(ascii: ".")])),
                limit: Self.componentLimit)
        }
        let shortened = BoundedName.isShortened(path)
        if path.count > pathBudget {
            throw refuse(
                "its folder path would be \(path.count) bytes; the path limit (PATH_MAX 4096) leaves "
                    + "\(pathBudget) under the Maildir root")
        }
        let pathString = String(decoding: path, as: UTF8.self)
        let verb = shortened ? "a level longer than 255 bytes is shortened" : "escaped"
        return Mapping(
            path: pathString,
            warning: notable || shortened ? "mailbox \(quotedForMessage(name)): \(verb) as \(pathString)" : nil)
    }

    /// Maps a whole LIST result. Every name involved in a collision (two names, one folder) is
    /// refused, with a warning naming all of them; refused names are left out of `mapping`. A name
    /// listed twice is not a collision. Paths are compared with Unicode canonical equivalence, so
    /// names differing only in normalization (NFC/NFD) also count as colliding.
    public func mapAll(_ mailboxes: [(name: String, delimiter: Character?)]) -> (mapping: [String: String], warnings: [String]) {
        var warnings: [String] = []
        var seen = Set<[UInt8]>()
        var mapped: [(name: String, path: String)] = []
        for (name, delimiter) in mailboxes where seen.insert(Array(name.utf8)).inserted {
            do {
                let m = try localPath(forMailbox: name, delimiter: delimiter)
                if let w = m.warning { warnings.append(w) }
                mapped.append((name, m.path))
            } catch {
                warnings.append(error.description)
            }
        }
        var byPath: [String: [String]] = [:]
        for m in mapped { byPath[m.path, default: []].append(m.name) }
        var mapping: [String: String] = [:]
        var reported = Set<String>()
        for m in mapped {
            let names = byPath[m.path]!
            if names.count == 1 { mapping[m.name] = m.path; continue }
            guard reported.insert(m.path).inserted else { continue }
            let list = names.map(quotedForMessage)
            let joined = list.count == 2 ? "\(list[0]) and \(list[1])" : list.dropLast().joined(separator: ", ") + " and " + list.last!
            warnings.append("mailboxes \(joined) all map to folder \(quotedForMessage(m.path)); refused")
        }
        return (mapping, warnings)
    }

    /// The wire-form mailbox name for a folder path (as found by `MaildirScanner.listFolders`).
    /// Refused when a level is not valid in this scheme, contains the server's delimiter, or the path
    /// is not exactly what `localPath` would produce for the resulting name (so a folder created by
    /// hand as `50%off` or `inbox` cannot turn into a second, different folder on the next sync).
    /// A shortened level is read through `fullName`: given the folder path that ends at that level
    /// (a maildir++ folder: the whole path), the wire-form name of its mailbox if one is known (from the
    /// server's listing or the folder's state file).
    public func mailboxName(
        forLocalPath path: String, delimiter: Character?,
        fullName: (String) -> String? = { _ in nil }
    ) throws(FolderNameError) -> String {
        func refuse(_ reason: String) -> FolderNameError { FolderNameError(folder: path, reason: reason) }
        let bytes = Array(path.utf8)
        if layout == .maildirPlusPlus && BoundedName.isShortened(bytes) {
            guard let wire = fullName(path) else { throw refuse("a shortened name, and no record of its mailbox") }
            return try canonical(wire, path: path, delimiter: delimiter)
        }
        let levels: [ArraySlice<UInt8>]
        switch layout {
        case .verbatim:
            guard !bytes.isEmpty else { throw refuse("the account root is not a mailbox in the verbatim layout") }
            levels = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        case .maildirPlusPlus:
            if bytes.isEmpty { return "INBOX" }
            guard bytes.first == UInt8(ascii: "."), bytes.count > 1 else {
                throw refuse("a maildir++ folder name must start with \".\"")
            }
            levels = bytes.dropFirst().split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        }
        let delim: UInt8?
        do { delim = try Self.delimiterByte(delimiter) } catch { throw refuse(error.reason) }
        if delim == nil && levels.count > 1 { throw refuse("the server has no hierarchy delimiter") }

        var parts: [[UInt8]] = []
        for level in levels {
            guard !level.isEmpty else { throw refuse("empty level") }
            if BoundedName.isShortened(level) {
                // The full level is the last level of the mailbox whose folder ends here.
                let upTo = String(decoding: bytes[..<level.endIndex], as: UTF8.self)
                guard let wire = fullName(upTo), let decoded = try? ModifiedUTF7.decode(wire) else {
                    throw refuse("a shortened level, and no record of its mailbox")
                }
                let all = Array(decoded.utf8)
                let full = delim.map { d in all.split(separator: d, omittingEmptySubsequences: false) } ?? [all[...]]
                guard full.count == parts.count + 1 else { throw refuse("a shortened level, and no record of its mailbox") }
                parts.append(Array(full[parts.count]))
                continue
            }
            guard let raw = Self.unescape(level) else { throw refuse("malformed %-escape") }
            if let d = delim, raw.contains(d) {
                throw refuse("contains the server's hierarchy delimiter \"\(Character(Unicode.Scalar(d)))\"")
            }
            parts.append(raw)
        }
        let joined = delim.map { d in Array(parts.joined(separator: [d])) } ?? parts[0]
        guard let decoded = String(validating: joined, as: UTF8.self) else { throw refuse("%-escapes do not form UTF-8") }
        return try canonical(ModifiedUTF7.encode(decoded), path: path, delimiter: delimiter)
    }

    /// `wire` if it maps to exactly `path`.
    private func canonical(_ wire: String, path: String, delimiter: Character?) throws(FolderNameError) -> String {
        func refuse(_ reason: String) -> FolderNameError { FolderNameError(folder: path, reason: reason) }
        let expected: String
        do { expected = try localPath(forMailbox: wire, delimiter: delimiter).path } catch { throw refuse(error.reason) }
        guard expected.utf8.elementsEqual(path.utf8) else {
            throw refuse("not in canonical form (mailbox \(quotedForMessage(wire)) maps to \(quotedForMessage(expected)))")
        }
        return wire
    }

    /// Final safety check before any file operation on `root + "/" + relative`: true only if
    /// `relative` is `""` or a relative path whose levels are all non-empty, not `.` or `..`, and free
    /// of NUL. Lexical; symbolic links are the scanner's concern (it never follows them).
    public static func isInside(root: String, relative: String) -> Bool {
        guard !root.isEmpty, !root.utf8.contains(0) else { return false }
        let bytes = Array(relative.utf8)
        if bytes.isEmpty { return true }
        if bytes.contains(0) || bytes.first == UInt8(ascii: "/") { return false }
        for level in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if level.isEmpty || level.elementsEqual(".".utf8) || level.elementsEqual("..".utf8) { return false }
        }
        return true
    }

    /// `root/relative` if `isInside(root:relative:)`, else nil.
    public static func absolutePath(root: String, relative: String) -> String? {
        guard isInside(root: root, relative: relative) else { return nil }
        if relative.isEmpty { return root }
        return root.hasSuffix("/") ? root + relative : root + "/" + relative
    }

    /// The local folder of mailbox `name` (as people write it: `Lists/dev`, `Drafts`) under `root`, as
    /// mo-sync would make it: what mo-index move, snooze and mo-sendmail --to-drafts put files into.
    public static func folderPath(root: String, mailbox name: String, layout: MaildirLayout) throws(FolderNameError) -> String {
        let mapping = try FolderNameMapper(layout: layout).localPath(forMailbox: ModifiedUTF7.encode(name), delimiter: "/")
        guard let path = absolutePath(root: root, relative: mapping.path) else {
            throw FolderNameError(mailbox: name, reason: "its folder would lie outside \(root)")
        }
        return path
    }

    // MARK: - Escaping

    private func escape(_ c: [UInt8], notable: inout Bool) -> [UInt8] {
        let dot = UInt8(ascii: ".")
        let allDots = c.allSatisfy { $0 == dot } && c.count <= 2
        let reserved = layout == .verbatim && (c.elementsEqual("cur".utf8) || c.elementsEqual("new".utf8) || c.elementsEqual("tmp".utf8))
        if allDots { notable = true }  // a "." or ".." level is worth a warning in any layout
        var out: [UInt8] = []
        out.reserveCapacity(c.count)
        for (i, b) in c.enumerated() {
            let mustEscape: Bool
            switch b {
            case UInt8(ascii: "%"): mustEscape = true
            case UInt8(ascii: "/"), 0..<0x20, 0x7F: mustEscape = true; notable = true
            case dot where layout == .maildirPlusPlus: mustEscape = true
            case dot where i == 0 || allDots: mustEscape = true; notable = true
            default: mustEscape = reserved && i == 0; if mustEscape { notable = true }
            }
            if mustEscape { out.append(contentsOf: Self.percent(b)) } else { out.append(b) }
        }
        return out
    }

    private static func percent(_ b: UInt8) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        return [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
    }

    /// Undoes `%XX` (uppercase hex only, as produced); nil if malformed.
    private static func unescape(_ s: ArraySlice<UInt8>) -> [UInt8]? {
        func hexValue(_ b: UInt8) -> UInt8? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == UInt8(ascii: "%") {
                guard i + 2 < s.endIndex,
                    let hi = hexValue(s[i + 1]), let lo = hexValue(s[i + 2])
                else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(s[i]); i += 1
            }
        }
        return out
    }

    private static func isInbox(_ b: [UInt8]) -> Bool {
        b.count == 5 && zip(b, "INBOX".utf8).allSatisfy { ($0 & 0xDF) == $1 }
    }

    private static func delimiterByte(_ d: Character?) throws(FolderNameError) -> UInt8? {
        guard let d else { return nil }
        guard d.utf8.count == 1, let b = d.utf8.first, b > 0x20, b < 0x7F, b != UInt8(ascii: "%") else {
            throw FolderNameError(mailbox: "", reason: "unusable hierarchy delimiter \(quotedForMessage(String(d)))")
        }
        return b
    }
}

/// A mailbox name or folder path that cannot be mapped safely.
public struct FolderNameError: MoError, Equatable {
    /// The mailbox (wire form) when mapping to disk, else nil.
    public let mailbox: String?
    /// The folder path when mapping back, else nil.
    public let folder: String?
    public let reason: String

    public init(mailbox: String, reason: String) { self.mailbox = mailbox; self.folder = nil; self.reason = reason }
    public init(folder: String, reason: String) { self.mailbox = nil; self.folder = folder; self.reason = reason }

    public var kind: ErrorKind { .data }
    public var description: String {
        if let mailbox { return "mailbox \(quotedForMessage(mailbox)): refused: \(reason)" }
        return "folder \(quotedForMessage(folder ?? "")): no mailbox name: \(reason)"
    }
}
