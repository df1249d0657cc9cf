/// libFuzzer entry: feeds `data` to a `ResponseParser` in chunks whose sizes come from the data itself, draining
/// events after each chunk and ignoring parse errors. Any crash, hang or runaway allocation is a bug.
public func fuzzParseResponses(_ data: UnsafeRawBufferPointer) {
    var parser = ResponseParser()
    var i = 0
    while i < data.count {
        let n = 1 + Int(data[i]) % 64
        parser.append(data[i..<min(data.count, i + n)])
        i += n
        do {
            while try parser.next() != nil {}
        } catch {
            return
        }
    }
}
