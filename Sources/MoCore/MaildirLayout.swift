/// How IMAP folder hierarchy is laid out under an account's Maildir root.
public enum MaildirLayout: String, Sendable, Equatable, CaseIterable {
    /// `Lists/dev` → `<root>/Lists/dev/{cur,new,tmp}`; `INBOX` → `<root>/INBOX`.
    case verbatim
    /// Maildir++ (Courier, Dovecot): `INBOX` is the root itself, `Lists/dev` → `<root>/.Lists.dev`.
    case maildirPlusPlus = "maildir++"
}
