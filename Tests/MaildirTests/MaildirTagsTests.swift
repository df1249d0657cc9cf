@testable import Maildir

struct TagVocabularyTests {
    /// Tag → keyword → tag, one row per rule of the table in `TagVocabulary`'s comment.
    @Test(arguments: [
        ("work", "$label2", "table name"),
        ("spam", "$Junk", "table name"),
        ("project-x", "project-x", "atom bytes as they are"),
        ("to do", "to=20do", "space escaped"),
        ("äpfel", "=C3=A4pfel", "UTF-8 escaped byte by byte"),
        ("a=b", "a=3Db", "the escape byte itself"),
        ("(x)*%\"\\]", "=28x=29=2A=25=22=5C=5D", "atom-specials"),
        ("$label1", "=24label1", "literal table keyword escaped"),
        ("$custom", "$custom", "other $ keywords as they are")
    ])
    func roundTrip(tag: String, keyword: String, reason: String) {
        let v = TagVocabulary()
        #expect(v.keyword(forTag: tag) == keyword, "\(reason)")
        #expect(v.tag(forKeyword: keyword) == tag, "\(reason)")
    }

    @Test func keywordsFromOtherClients() {
        let v = TagVocabulary()
        #expect(v.tag(forKeyword: "$LABEL2") == "work")  // servers fold case
        #expect(v.tag(forKeyword: "work") == "work")  // a literal keyword reads as the same tag
        #expect(v.tag(forKeyword: "a=zz") == "a=zz")  // a lone `=` stays
        #expect(v.tag(forKeyword: "x=4") == "x=4")  // truncated escape stays
    }

    /// MoConfig refuses flag tag names as `[keywords]` values with its own copy of the names (it does not
    /// depend on Maildir): the two lists must stay equal.
    @Test func flagTagNamesAreTheConfigsList() {
        #expect(Set(TagVocabulary.flagTags.map(\.tag)) == ["draft", "flagged", "passed", "replied", "unread"])
    }

    @Test func configExtendsAndOverrides() {
        let v = TagVocabulary(extra: [("$label1", "urgent"), ("Review", "review")])
        #expect(v.tag(forKeyword: "$label1") == "urgent")
        #expect(v.keyword(forTag: "urgent") == "$label1")
        #expect(v.keyword(forTag: "important") == "important")  // the default name lost its keyword
        #expect(v.keyword(forTag: "review") == "Review")
        #expect(v.keyword(forTag: "work") == "$label2")
    }
}

struct MaildirTagsTests {
    func letter(_ c: Character) -> MaildirFlags { MaildirFlags(letter: c.asciiValue!)! }

    @Test func tagsOfAFile() {
        let k = MaildirKeywords(parsing: Array("0 $label2\n1 work\n2 =C3=A4pfel\n".utf8))
        let v = TagVocabulary()
        #expect(MaildirTags.tags(of: MaildirFlags(letters: "FSc")!, keywords: k, vocabulary: v) == ["flagged", "äpfel"])
        #expect(MaildirTags.tags(of: MaildirFlags(letters: "Pab")!, keywords: k, vocabulary: v) == ["passed", "unread", "work"])
        #expect(MaildirTags.tags(of: MaildirFlags(letters: "Sz")!, keywords: k, vocabulary: v) == [])  // z: no keyword
    }

    @Test func addAndRemove() {
        var k = MaildirKeywords(parsing: Array("0 $label2\n1 work\n".utf8))
        let v = TagVocabulary()
        // Removing `work` clears both spellings; -unread sets S; +todo takes the next free letter.
        let c = MaildirTags.apply(
            add: ["todo", "flagged"], remove: ["work", "unread"], to: MaildirFlags(letters: "ab")!,
            keywords: &k, vocabulary: v)
        #expect(c.flags == MaildirFlags(letters: "FSc")!)
        #expect(c.overflow.isEmpty)
        #expect(k.keyword(for: UInt8(ascii: "c")) == "$label4")
        // Adding a tag the file already has through another spelling takes no new letter.
        let again = MaildirTags.apply(add: ["work"], remove: [], to: MaildirFlags(letters: "b")!, keywords: &k, vocabulary: v)
        #expect(again.flags == MaildirFlags(letters: "b")!)
        // +unread clears S.
        #expect(MaildirTags.apply(add: ["unread"], remove: [], to: .seen, keywords: &k, vocabulary: v).flags == [])
    }

    @Test func fullTableOverflowsInsteadOfDropping() {
        var k = MaildirKeywords()
        for i in 0..<26 { _ = k.assignLetter(for: "k\(i)") }
        let c = MaildirTags.apply(add: ["k3", "new-one"], remove: [], to: [], keywords: &k, vocabulary: TagVocabulary())
        #expect(c.flags == letter("d"))
        #expect(c.overflow == ["new-one"])
    }
}
