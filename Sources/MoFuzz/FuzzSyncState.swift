import SyncState

/// A folder state file, then the same bytes as its write-ahead journal over an empty state.
func fuzzSyncState(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    _ = try? StateCodec.parseIntoTable(bytes, file: "fuzz.state")
    _ = try? JournalCodec.replay(bytes, over: FolderState(mailbox: "INBOX"), file: "fuzz.journal")
}
