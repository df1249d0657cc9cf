import ActionJournal

/// The action journal (`actions.journal`).
func fuzzActionJournal(_ data: UnsafeRawBufferPointer) {
    _ = try? ActionCodec.replay(Array(data), file: "fuzz.journal")
}
