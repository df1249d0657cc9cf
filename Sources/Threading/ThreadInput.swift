import MailMessage

/// What threading needs to know about one message (one file of it).
public struct ThreadInput: Hashable, Sendable {
    /// The message's id, bare (no `<>`); a synthetic one if the message has none.
    public var messageID: String
    /// Ids parsed from In-Reply-To, in header order (notmuch links all of them).
    public var inReplyTo: [String]
    /// Ids parsed from References, in header order.
    public var references: [String]
    /// The In-Reply-To id if that header was exactly one clean `<id>`: notmuch's first choice
    /// of display parent. Defaults to the single In-Reply-To id when there is exactly one.
    public var strictInReplyTo: String?
    /// Seconds since 1970 from the Date header, nil if missing or unparsable; orders siblings.
    public var date: Int64?

    /// All ids already normalised (see MailMessage's ``MessageID``). `strictInReplyTo`:
    /// omitted means "the In-Reply-To id if there is exactly one"; pass `.some(nil)` when the
    /// raw header was not one clean `<id>`.
    public init(
        messageID: String, inReplyTo: [String] = [], references: [String] = [],
        date: Int64? = nil, strictInReplyTo: String?? = nil
    ) {
        self.messageID = messageID
        self.inReplyTo = inReplyTo
        self.references = references
        self.date = date
        self.strictInReplyTo = strictInReplyTo ?? (inReplyTo.count == 1 ? inReplyTo[0] : nil)
    }

    /// Builds an input from raw (unfolded) header values the way notmuch reads them (MailMessage's
    /// ``MessageID`` parser), long ids shortened as notmuch stores them (``MessageID/notmuchKey(_:)``).
    /// - Parameter syntheticMessageID: used when Message-ID is missing or empty; notmuch uses
    ///   ``ParsedMessage/syntheticMessageID(for:)``.
    public init(
        messageIDHeader: String?, inReplyToHeader: String?, referencesHeader: String?,
        date: Int64? = nil, syntheticMessageID: @autoclosure () -> String
    ) {
        let id = MessageID.fromHeader(messageIDHeader) ?? syntheticMessageID()
        let irt = inReplyToHeader ?? ""
        // notmuch returns "" for a strict "<>"; an empty id can name nothing.
        let strict = MessageID.parseStrict(irt).flatMap { $0.isEmpty ? nil : MessageID.notmuchKey($0) }
        self.init(
            messageID: MessageID.notmuchKey(id),
            inReplyTo: MessageID.parseList(irt).map(MessageID.notmuchKey),
            references: MessageID.parseList(referencesHeader).map(MessageID.notmuchKey),
            date: date,
            strictInReplyTo: .some(strict))
    }

    /// The input for a parsed message file: the same ids as the header initialiser, from the
    /// parse MailMessage already did.
    public init(_ message: ParsedMessage) {
        let strict = message.headers["In-Reply-To"].flatMap(MessageID.parseStrict)
            .flatMap { $0.isEmpty ? nil : MessageID.notmuchKey($0) }
        self.init(
            messageID: MessageID.notmuchKey(message.id),
            inReplyTo: message.inReplyTo.map(MessageID.notmuchKey),
            references: message.references.map(MessageID.notmuchKey),
            date: message.date,
            strictInReplyTo: .some(strict))
    }

    /// Every id this message links to, self-references removed (a message that names itself,
    /// which real mail does, must not become its own parent).
    var links: Set<String> {
        var set = Set(references)
        set.formUnion(inReplyTo)
        set.remove(messageID)
        return set
    }

    /// The display parent by notmuch's rule (`_notmuch_database_link_message_to_parents`):
    /// a strict In-Reply-To, else the last reference, else the last In-Reply-To id (the code
    /// takes the last although its comment says first). Self-references never count.
    public var preferredParent: String? {
        if let strict = strictInReplyTo, strict != messageID { return strict }
        if let ref = references.last(where: { $0 != messageID }) { return ref }
        return inReplyTo.last(where: { $0 != messageID })
    }
}
