import Testing
@testable import MoIndex

struct NotmuchDumpTests {
    /// Lines as notmuch 0.37 wrote them (`notmuch dump`, batch-tag:3).
    @Test func readsNotmuchLines() throws {
        let line = try NotmuchDump.parse("+a%3ab +c+d +e_f@g=h.i,j +k%7el +to%20do +%c3%a4%2fx%25 -- id:plain@x")
        #expect(line == NotmuchDump.Line(add: ["a:b", "c+d", "e_f@g=h.i,j", "k~l", "to do", "ä/x%"], messageID: "plain@x"))
        #expect(try NotmuchDump.parse("+inbox -- id:\"weird\"\"id)@x\"")?.messageID == "weird\"id)@x")
        #expect(try NotmuchDump.parse("#notmuch-dump batch-tag:3 config,properties,tags") == nil)
        #expect(try NotmuchDump.parse("#= database.path /x") == nil)
        #expect(try NotmuchDump.parse("   ") == nil)
        #expect(try NotmuchDump.parse(" -- id:untagged@x") == NotmuchDump.Line(add: [], messageID: "untagged@x"))
        #expect(try NotmuchDump.parse("+a -b -- id:m@x\r") == NotmuchDump.Line(add: ["a"], remove: ["b"], messageID: "m@x"))
    }

    @Test func writesWhatNotmuchWrites() {
        #expect(
            NotmuchDump.render(tags: ["unread", "to do", "inbox", "ä/x%", "c+d"], messageID: "plain@x")
                == "+c+d +inbox +to%20do +unread +%c3%a4%2fx%25 -- id:plain@x")
        #expect(NotmuchDump.render(tags: ["inbox"], messageID: "weird\"id)@x") == "+inbox -- id:\"weird\"\"id)@x\"")
        #expect(NotmuchDump.render(tags: [], messageID: "a b") == " -- id:\"a b\"")
    }

    @Test func roundTrip() throws {
        for (tags, id) in [(["x y", "%", "ü"], "a\"b c@d"), (["plain"], "p@q"), ([String](), "é@x")] {
            let line = try NotmuchDump.parse(Substring(NotmuchDump.render(tags: tags, messageID: id)))
            #expect(line == NotmuchDump.Line(add: tags.sorted(), messageID: id))
        }
    }

    @Test(arguments: [
        ("+a id:m@x", "no ' -- '"),
        ("a -- id:m@x", "not +TAG"),
        ("+ -- id:m@x", "not +TAG"),
        ("+a%zz -- id:m@x", "bad %xx"),
        ("+a -- tag:x", "only id:"),
        ("+a -- id:\"m@x", "unterminated"),
        ("+a -- id:\"m\"x\"", "undoubled"),
        ("+a -- id:", "empty")
    ])
    func refusesBadLines(line: String, reason: String) {
        #expect {
            try NotmuchDump.parse(Substring(line))
        } throws: { ($0 as? NotmuchDump.ParseError)?.reason.contains(reason) == true }
    }

    /// `notmuch tag --batch` lines as notmuch's parse_tag_line reads them (its T150 messages).
    @Test(arguments: [
        ("+0", "no query string"), ("+a +b", "no query string"), ("+a +b ", "missing query string"),
        ("+c +d --", "no query string after --"), ("+%zz -- id:whatever", "hex decoding of tag %zz failed"),
        ("+ +e -- id:foo", "empty tag forbidden"), ("+- -- id:foo", "tag starting with '-' forbidden")
    ])
    func batchLineErrors(line: String, reason: String) {
        #expect { try NotmuchDump.parseTagLine(Substring(line)) } throws: { ($0 as? NotmuchDump.ParseError)?.reason == reason }
    }

    @Test func batchLinesWithoutSeparator() throws {
        let parsed = try NotmuchDump.parseTagLine("-tag5 +tag6 Two")
        #expect(parsed?.add == ["tag6"] && parsed?.remove == ["tag5"] && parsed?.query == "Two")
        #expect(try NotmuchDump.parseTagLine("+a  --  id:x")?.query == "id:x")
        let ordered = try NotmuchDump.parseTagLine("+tag1 -tag1 -tag4 +tag4 -- Two")
        #expect(ordered?.add == ["tag4"] && ordered?.remove == ["tag1"])
        #expect(try NotmuchDump.parseTagLine("  # comment") == nil)
    }
}

/// The `#@ KEY VALUE` lines notmuch dumps for what its database keeps (saved queries among them).
@Suite struct NotmuchDumpConfigTests {
    @Test func configLinesAsNotmuchWritesThem() {
        #expect(
            NotmuchDump.renderConfig(key: "query.test", value: "date:2009-11-18..2009-11-18 and tag:unread")
                == "#@ query.test date%3a2009-11-18..2009-11-18%20and%20tag%3aunread")
        #expect(NotmuchDump.renderConfig(key: "g1.m2", value: "") == "#@ g1.m2 ")
    }

    @Test(arguments: ["a b:c;d", "", "ü%x", "1 2 3"])
    func configLinesRoundTrip(value: String) {
        let line = NotmuchDump.renderConfig(key: "query.x y", value: value)
        let parsed = NotmuchDump.parseConfig(Substring(line))
        #expect(parsed?.key == "query.x y" && parsed?.value == value)
    }

    @Test(arguments: ["#notmuch-dump batch-tag:3 config", "#@ ", "#@ %zz v", "+a -- id:x", "#@"])
    func otherLinesAreNotConfig(line: String) {
        #expect(NotmuchDump.parseConfig(Substring(line)) == nil)
    }
}
