/// What a message document's data holds: enough to print results and to rebuild threading without
/// reading mail files. Encoded as fields separated by 0x1E and list items by 0x1F; those two bytes are
/// replaced by spaces in stored strings (they never occur in real headers).
public struct MessageRecord: Sendable, Equatable {
    public var id: String
    public var date: Int64?
    public var subject: String
    /// The From header as shown ("Name <addr>", first address).
    public var from: String
    /// To and Cc addresses, for `address` ranking: (name, address).
    public var recipients: [(name: String, address: String)]
    public var inReplyTo: [String]
    public var references: [String]
    public var strictInReplyTo: String?
    /// Files, relative to their root, with the root's name first ("<root>/<dir>/<name>" for config
    /// accounts, "<dir>/<name>" for a single --maildir root whose name is "").
    public var files: [String]

    public init(
        id: String, date: Int64?, subject: String, from: String, recipients: [(name: String, address: String)],
        inReplyTo: [String], references: [String], strictInReplyTo: String?, files: [String]
    ) {
        self.id = id
        self.date = date
        self.subject = subject
        self.from = from
        self.recipients = recipients
        self.inReplyTo = inReplyTo
        self.references = references
        self.strictInReplyTo = strictInReplyTo
        self.files = files
    }

    public static func == (a: MessageRecord, b: MessageRecord) -> Bool {
        a.id == b.id && a.date == b.date && a.subject == b.subject && a.from == b.from
            && a.recipients.elementsEqual(b.recipients, by: { $0.name == $1.name && $0.address == $1.address })
            && a.inReplyTo == b.inReplyTo && a.references == b.references
            && a.strictInReplyTo == b.strictInReplyTo && a.files == b.files
    }

    private static let fieldSeparator: UInt8 = 0x1E
    private static let itemSeparator: UInt8 = 0x1F
    private static let version: UInt8 = UInt8(ascii: "1")

    public func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        func field(_ s: String) {
            out.append(Self.fieldSeparator)
            for b in s.utf8 { out.append(b == Self.fieldSeparator || b == Self.itemSeparator ? 0x20 : b) }
        }
        field(id)
        field(date.map(String.init) ?? "")
        field(subject)
        field(from)
        out.append(Self.fieldSeparator)
        for (i, r) in recipients.enumerated() {
            if i > 0 { out.append(Self.itemSeparator) }
            out.append(contentsOf: Self.clean(r.name))
            out.append(UInt8(ascii: "\t"))
            out.append(contentsOf: Self.clean(r.address))
        }
        for ids in [inReplyTo, references] {
            out.append(Self.fieldSeparator)
            for (i, s) in ids.enumerated() {
                if i > 0 { out.append(Self.itemSeparator) }
                out.append(contentsOf: Self.clean(s))
            }
        }
        field(strictInReplyTo ?? "")
        out.append(Self.fieldSeparator)
        for (i, s) in files.enumerated() {
            if i > 0 { out.append(Self.itemSeparator) }
            out.append(contentsOf: Self.clean(s))
        }
        return out
    }

    private static func clean(_ s: String) -> [UInt8] {
        s.utf8.map { $0 == fieldSeparator || $0 == itemSeparator ? 0x20 : $0 }
    }

    /// Decodes `encoded()`; nil for data of another version or shape.
    public init?(decoding bytes: [UInt8]) {
        guard bytes.first == Self.version else { return nil }
        let fields = bytes.dropFirst().split(separator: Self.fieldSeparator, omittingEmptySubsequences: false).dropFirst()
        guard fields.count == 9 else { return nil }
        let f = Array(fields)
        func str(_ s: ArraySlice<UInt8>) -> String { String(decoding: s, as: UTF8.self) }
        func list(_ s: ArraySlice<UInt8>) -> [String] {
            s.isEmpty ? [] : s.split(separator: Self.itemSeparator, omittingEmptySubsequences: false).map(str)
        }
        id = str(f[0])
        date = Int64(str(f[1]))
        subject = str(f[2])
        from = str(f[3])
        recipients = list(f[4]).map { item in
            let parts = item.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        inReplyTo = list(f[5])
        references = list(f[6])
        strictInReplyTo = f[7].isEmpty ? nil : str(f[7])
        files = list(f[8])
    }
}
