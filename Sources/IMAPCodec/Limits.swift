extension ResponseParser {
    /// Hard limits on what a server may make the parser hold. Every limit is far above what real servers send
    /// (Dovecot, Gmail, Exchange, Cyrus) and bounds memory and CPU against a hostile or broken server. Crossing one
    /// throws `IMAPParseError` (kind `.protocolViolation`) naming the limit; the parser is dead afterwards.
    ///
    /// Memory held by the parser is at most: the caller's largest `append` + `maxLineLength`
    /// (message bodies are streamed, never held).
    public struct Options: Sendable, Equatable {
        /// Largest streamed message-body literal (`BODY[]`, `BINARY[]`, `RFC822` in FETCH). Bodies are not buffered,
        /// so this only rejects absurd announcements (a 2^62-byte literal is a lie or an attack). Default 1 GiB:
        /// bigger than any mail a real server accepts (Gmail 50 MB, Exchange 150 MB).
        public var maxLiteralSize: Int = 1 << 30
        /// Largest literal that is *not* a streamed body (a mailbox name, an ENVELOPE field, an unknown attribute):
        /// those are buffered whole. Default 1 MiB; servers send such strings in kilobytes.
        public var maxInlineLiteralSize: Int = 1 << 20
        /// Most bytes one buffered unit may take: a whole response line, or one FETCH attribute, counting
        /// inline literals but not streamed bodies. Default 8 MiB: the longest legitimate line is a plain
        /// `* SEARCH` naming every match (~1 M seven-digit UIDs); clients wanting more should use ESEARCH.
        public var maxLineLength: Int = 8 << 20
        /// Deepest nesting of parenthesised lists. Default 64: BODYSTRUCTURE of real mail nests < 20 deep;
        /// the limit also keeps the recursive-descent parser far from stack exhaustion.
        public var maxNestingDepth: Int = 64
        /// Most items in one parenthesised list (flags, capabilities, attributes, list elements). Default 10,000:
        /// real mailboxes carry at most a few hundred keywords.
        public var maxListLength: Int = 10_000
        /// Most attributes in one FETCH response. Default 1,000; a client asks for about ten.
        public var maxFetchAttributes: Int = 1_000
        /// Longest atom or quoted string. Default 256 KiB; atoms are keywords and capabilities (tens of bytes),
        /// and servers send long strings as literals.
        public var maxAtomLength: Int = 256 << 10

        public init() {}
    }
}
