import MoCore
import Testing

@Suite struct StrictLinesTests {
    static func lines(_ text: String) -> (lines: [String], problem: StrictLines.Problem?) {
        var out: [String] = []
        do {
            try StrictLines.forEach(Array(text.utf8)) { line throws(StrictLines.Problem) in
                let s = String(decoding: line, as: UTF8.self)
                if s == "bad" { throw .init("a bad line") }
                out.append(s)
            }
            return (out, nil)
        } catch {
            return (out, error)
        }
    }

    @Test func everyLineEndsWithItsLF() {
        #expect(Self.lines("").lines == [])
        #expect(Self.lines("a\n\nb\n").lines == ["a", "", "b"])
        #expect(Self.lines("a\n\nb\n").problem == nil)
    }

    /// A torn last line is the file cut short: an error naming its line, never half an entry.
    @Test func aTornLastLineIsAnError() {
        let r = Self.lines("a\nb c")
        #expect(r.lines == ["a"])
        #expect(r.problem?.line == 2)
        #expect(r.problem?.problem == "incomplete last line \"b c\" (the file was cut short)")
    }

    /// The handler's problem gets its line number, and the lines after it are not read.
    @Test func aHandlersProblemIsNumbered() {
        let r = Self.lines("a\nb\nbad\nc\n")
        #expect(r.lines == ["a", "b"])
        #expect(r.problem?.line == 3 && r.problem?.problem == "a bad line")
    }
}
