// The modules this target's tests use, imported once for all its files (re-exported within the test
// target only: nothing imports a test target). `@testable` does not carry over, so files needing it say so.
#if canImport(Glibc)
    @_exported import Glibc
#endif
@_exported import MoCore
@_exported import MoTestSupport
@_exported import Testing
@_exported import Maildir

func lastComponent(_ path: String) -> String {
    String(path.split(separator: "/", omittingEmptySubsequences: false).last!)
}

/// A temporary directory holding a created Maildir folder `box`: where most folder tests start.
func madeBox() throws -> (TempDirectory, MaildirFolder) {
    let t = TempDirectory()
    let folder = MaildirFolder(path: t.path + "/box")
    try folder.create()
    return (t, folder)
}
