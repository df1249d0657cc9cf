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
