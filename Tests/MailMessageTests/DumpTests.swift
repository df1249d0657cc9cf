import Testing
@testable import MailMessage

@Test func dumpFixtures() {
    for n in Fixtures.names {
        let m = Fixtures.message(n)
        print("== \(n) id=\(m.id) mail=\(m.looksLikeMail) date=\(m.date.map(String.init) ?? "nil")")
        print("   subject=\(m.subject)")
        print("   from=\(m.from) to=\(m.to.prefix(3)) cc=\(m.cc.prefix(3))")
        print("   irt=\(m.inReplyTo) refs=\(m.references.count) parent=\(m.parentID ?? "-") list=\(m.listID ?? "-")")
        print("   types=\(m.mimeTypes) att=\(m.attachments)")
        print("   body=\(m.bodyText.prefix(160).replacingOccurrences(of: "\n", with: "⏎"))")
    }
}
