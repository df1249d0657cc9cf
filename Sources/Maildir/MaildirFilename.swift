import MoCore

/// A Maildir file name, `unique[,U=uid][:2,FLAGS]`, parsed into parts that can be changed and rendered
/// back. Pure: no file system access.
///
/// Refused (as unsafe to rewrite): empty names, `/` or NUL anywhere, a leading `.`, info other than
/// `2,`, more than one info separator, non-letters or repeated letters in the flags, an empty unique
/// part, a repeated or malformed `,U=` field.
///
/// Flags out of ASCII order are *accepted* and rendered sorted. notmuch refuses them because it only
/// rewrites names it can reproduce byte for byte; here the flags are a set, so sorting loses nothing
/// and the spec-mandated order is restored on the next rename. `isCanonical` tells such names apart.
///
/// The mbsync UID field (`,U=123`, one of the comma fields after the first in the unique part) is
/// kept at its position; `unique` excludes it, so `unique` is the message's stable identity.
public struct MaildirFilename: Hashable, Sendable, CustomStringConvertible {
    /// The unique part without the `,U=` field.
    public let unique: String
    /// The mbsync UID (`,U=123`), if any.
    public var uid: UInt32?
    /// The flags; rendered in ASCII order.
    public var flags: MaildirFlags
    /// Whether the name carries `:2,` even with no flags (files in `cur/` always do).
    public var hasInfo: Bool
    /// The info separator byte, normally `:`.
    public let separator: UInt8
    /// UTF-8 offset in `unique` where the `,U=` field goes when rendered; nil appends it.
    private let uidOffset: Int?
    /// Whether `rendered` reproduces the parsed name exactly (false for unsorted flags).
    public let isCanonical: Bool

    /// The unique part a name refused by `init(parsing:)` most likely has: the text before the first
    /// `separator`, without `,U=` fields. For keeping its pair alive (`MaildirScan.refusedUniques`), never
    /// for naming a file.
    public static func likelyUnique(of name: String, separator: Character = ":") -> String? {
        let head = name.split(separator: separator, maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let fields = head.split(separator: ",", omittingEmptySubsequences: false).filter { !$0.hasPrefix("U=") }
        let unique = fields.joined(separator: ",")
        return unique.isEmpty || unique.hasPrefix(".") ? nil : unique
    }

    /// The digits of the comma field `,NAME=` of a file name or unique part (`PendingDelivery.addField`: `G`
    /// for Gmail's thread id), nil when it has none. The first comma field is the generated name's, never a
    /// field; the digits end at the next comma or at the info separator, whichever it is.
    public static func field(_ name: String, of fileName: Substring) -> Substring? {
        for field in fileName.split(separator: ",", omittingEmptySubsequences: false).dropFirst() where field.hasPrefix(name + "=") {
            let digits = field.dropFirst(name.count + 1).prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty { return digits }
        }
        return nil
    }

    /// Parses a file name (not a path). `separator` is the info separator: `:` by default; some
    /// setups use `!` or `;`. It must be printable ASCII other than `/`, `,`, `.` and letters.
    public init(parsing name: String, separator: Character = ":") throws(MaildirFilenameError) {
        func fail(_ reason: String) -> MaildirFilenameError { MaildirFilenameError(filename: name, reason: reason) }
        guard let sep = Self.validSeparator(separator) else {
            throw fail("unusable info separator \(quotedForMessage(String(separator)))")
        }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw fail("empty name") }
        if bytes.contains(0) { throw fail("contains NUL") }
        if bytes.contains(UInt8(ascii: "/")) { throw fail("contains \"/\"") }
        if bytes[0] == UInt8(ascii: ".") { throw fail("starts with \".\"") }

        let firstSep = bytes.firstIndex(of: sep)
        if let f = firstSep, bytes[(f + 1)...].contains(sep) {
            throw fail("more than one \"\(String(decoding: [sep], as: UTF8.self))\" info separator")
        }
        var uniqueBytes = bytes[...]
        var flags = MaildirFlags()
        var sorted = true
        if let s = firstSep {
            uniqueBytes = bytes[..<s]
            let info = bytes[(s + 1)...]
            guard info.starts(with: [UInt8(ascii: "2"), UInt8(ascii: ",")]) else {
                throw fail("unsupported info \"\(String(decoding: info, as: UTF8.self))\" (only \"2,\" is supported)")
            }
            var previous: UInt8 = 0
            let letters = info.dropFirst(2)
            for (i, b) in zip(letters.indices, letters) {
                guard let f = MaildirFlags(letter: b) else {
                    let bad = String(decoding: letters[i...], as: UTF8.self).unicodeScalars.first!
                    throw fail("non-letter \(quotedForMessage(String(bad))) in flags")
                }
                if flags.contains(f) { throw fail("flag \"\(Character(Unicode.Scalar(b)))\" repeated") }
                if b < previous { sorted = false }
                previous = b
                flags.insert(f)
            }
        }
        guard !uniqueBytes.isEmpty else { throw fail("empty unique part") }

        // Split off the ",U=" field: comma fields after the first one.
        var uid: UInt32? = nil
        var uidRange: Range<Int>? = nil
        var i = uniqueBytes.startIndex
        while let comma = uniqueBytes[i...].firstIndex(of: UInt8(ascii: ",")) {
            let fieldStart = comma + 1
            let fieldEnd = uniqueBytes[fieldStart...].firstIndex(of: UInt8(ascii: ",")) ?? uniqueBytes.endIndex
            let field = uniqueBytes[fieldStart..<fieldEnd]
            if field.starts(with: [UInt8(ascii: "U"), UInt8(ascii: "=")]) {
                if uid != nil { throw fail("more than one \",U=\" field") }
                let digits = field.dropFirst(2)
                guard let value = Self.canonicalDecimal(digits) else {
                    throw fail("malformed \",\(String(decoding: field, as: UTF8.self))\" field")
                }
                uid = value
                uidRange = comma..<fieldEnd
            }
            i = fieldEnd
        }
        var offset: Int? = nil
        if let r = uidRange {
            var base = Array(uniqueBytes)
            base.removeSubrange(r)
            offset = r.lowerBound
            guard !base.isEmpty else { throw fail("empty unique part apart from the \",U=\" field") }
            self.unique = String(decoding: base, as: UTF8.self)
        } else {
            self.unique = String(decoding: uniqueBytes, as: UTF8.self)
        }
        self.uid = uid
        self.flags = flags
        self.hasInfo = firstSep != nil
        self.separator = sep
        self.uidOffset = offset
        self.isCanonical = sorted
    }

    /// A name for a new message. `unique` must itself be a valid name without info and `,U=` field
    /// (see `MaildirUniqueName`).
    public init(
        unique: String, flags: MaildirFlags = [], uid: UInt32? = nil, hasInfo: Bool = false,
        separator: Character = ":"
    ) throws(MaildirFilenameError) {
        let parsed = try MaildirFilename(parsing: unique, separator: separator)
        guard !parsed.hasInfo, parsed.uid == nil else {
            throw MaildirFilenameError(filename: unique, reason: "a unique part must not carry info or a \",U=\" field")
        }
        self = parsed
        self.flags = flags
        self.uid = uid
        self.hasInfo = hasInfo
    }

    /// The file name: the unique part, the `,U=` field if any, and `:2,FLAGS` when there are flags or
    /// `hasInfo` is set.
    public var rendered: String {
        var out = Array(unique.utf8)
        if let uid {
            let field = Array(",U=\(uid)".utf8)
            out.insert(contentsOf: field, at: min(uidOffset ?? out.count, out.count))
        }
        if hasInfo || !flags.isEmpty {
            out.append(separator)
            out.append(contentsOf: "2,".utf8)
            out.append(contentsOf: flags.letters.utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { rendered }

    /// The same name with other flags (and info present, as in `cur/`).
    public func withFlags(_ flags: MaildirFlags) -> MaildirFilename {
        var copy = self; copy.flags = flags; copy.hasInfo = true; return copy
    }

    /// The same name with the `,U=` field set, replaced, or (nil) removed. Never duplicated.
    public func withUID(_ uid: UInt32?) -> MaildirFilename {
        var copy = self; copy.uid = uid; return copy
    }

    /// The unique part and flags of a name that `init(parsing:)` accepts with no `,U=` field and gives
    /// exactly these, read from its bytes without making a string (the scan of a large folder); nil for
    /// any other name, which the caller then parses. The unique part's UTF-8 is not checked: the caller
    /// only compares it with names it knows. `separator` must be valid (`validSeparator`).
    public static func plainParts(
        _ name: UnsafeBufferPointer<UInt8>, separator: UInt8
    ) -> (unique: UnsafeBufferPointer<UInt8>, flags: MaildirFlags)? {
        guard let first = name.first, first != UInt8(ascii: ".") else { return nil }
        var end = 0
        while end < name.count {
            let b = name[end]
            if b == separator { break }
            if b == 0 || b == UInt8(ascii: "/") { return nil }
            // A comma field starting "U=" is mbsync's UID field: the full parser takes it out.
            if b == UInt8(ascii: ","), end + 2 < name.count, name[end + 1] == UInt8(ascii: "U"), name[end + 2] == UInt8(ascii: "=") {
                return nil
            }
            end += 1
        }
        guard end > 0 else { return nil }
        var flags = MaildirFlags()
        if end < name.count {
            // The info: "2," then letters, none repeated (a second separator is not a letter).
            guard name.count - end >= 3, name[end + 1] == UInt8(ascii: "2"), name[end + 2] == UInt8(ascii: ",") else { return nil }
            for k in (end + 3)..<name.count {
                guard let f = MaildirFlags(letter: name[k]), !flags.contains(f) else { return nil }
                flags.insert(f)
            }
        }
        return (UnsafeBufferPointer(rebasing: name[..<end]), flags)
    }

    static func validSeparator(_ c: Character) -> UInt8? {
        guard c.utf8.count == 1, let b = c.utf8.first, b > 0x20, b < 0x7F,
            MaildirFlags(letter: b) == nil, !"/,.%".utf8.contains(b)
        else { return nil }
        return b
    }

    /// Digits without leading zeros (except "0") that fit in UInt32.
    private static func canonicalDecimal(_ digits: ArraySlice<UInt8>) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 10,
            digits.allSatisfy({ ASCII.isDigit($0) }),
            digits.first != UInt8(ascii: "0") || digits.count == 1
        else { return nil }
        return UInt32(String(decoding: digits, as: UTF8.self))
    }
}

/// A Maildir file name this module refuses to read or rewrite.
public struct MaildirFilenameError: MoError, Equatable {
    public let filename: String
    public let reason: String
    public var kind: ErrorKind { .data }
    public var description: String { "maildir file name \(quotedForMessage(filename)): \(reason)" }
}
