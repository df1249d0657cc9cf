// The modules this target's tests use, imported once for all its files (re-exported within the test
// target only: nothing imports a test target). `@testable` does not carry over, so files needing it say so.
#if canImport(Glibc)
    @_exported import Glibc
#endif
@_exported import ClientSettings
@_exported import IMAPClient
@_exported import IMAPCodec
@_exported import Maildir
@_exported import MoCheck
@_exported import MoConfig
@_exported import MoCore
@_exported import MoTestSupport
@_exported import SyncEngine
@_exported import SyncState
@_exported import Synchronization
@_exported import Testing
@_exported import SyncRunner
