#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import ClientSettings
import MoCLI
import MoConfig
import MoCore
import OAuth2

/// `mo-sync login ACCOUNT`: signs in to an account whose servers take OAuth2 (docs/oauth2.md), once; every
/// program then takes its tokens from the account's token file and refreshes them itself.
struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in to an OAuth2 account (Gmail, Outlook.com, Microsoft 365), once.",
        discussion: """
            For an account with an [account.NAME.oauth2] table and auth = "oauth2" in [imap] or [smtp]. \
            The sign-in page opens in a browser (the address is always printed; it is opened with xdg-open \
            when there is a display), and the provider sends the browser back to this command on \
            127.0.0.1. With --device, sign in on any other device instead: the command prints an address \
            and a code, and waits until you have entered it there (Microsoft; Google offers no device \
            sign-in for mail, so over ssh forward the printed port: ssh -L PORT:127.0.0.1:PORT).

            The tokens go to STATE-DIR/ACCOUNT/oauth2-tokens (mode 0600). mo-sync, mo-sync --watch, \
            mo-sync-check and mo-sendmail refresh the access token themselves, one process at a time. \
            When the provider ends the grant (revoked, expired, password changed), they say so and exit 77: \
            run this command again. How to register the client with Google and Microsoft: docs/oauth2.md.

            Exit status: 0 signed in, 75 no answer in time or the provider unreachable, 77 refused, 78 \
            configuration error.
            """)

    @OptionGroup var options: ConfigOptions

    @Argument(help: ArgumentHelp("The account to sign in to.", valueName: "account"))
    var account: String

    @Flag(help: "Sign in on another device: print an address and a code (no browser on this machine).")
    var device = false

    @Flag(help: "Print the sign-in address only; do not start a browser.")
    var noBrowser = false

    @Option(help: ArgumentHelp("Seconds to wait for the browser to come back (default 300).", valueName: "s"))
    var timeout: Int = 300

    func run() throws {
        let config = try ConfigLoader.load(explicitPath: options.config)
        guard let a = try config.selectAccounts([account]).first else { return }
        guard let o = a.oauth2 else {
            throw GenericError(
                .config, "account \(a.name) has no [account.\(a.name).oauth2] table; docs/oauth2.md shows how to add one")
        }
        let provider = try AccountSettings.oauth2Provider(o)
        let secret = o.clientSecretCommand
        let signIn = SignIn(
            provider: provider, clientID: o.clientID, clientSecret: { try secret?.run().reveal() }, loginHint: a.address)
        let grant: TokenGrant
        if device {
            grant = try signIn.withDevice { d in
                CommandLineRunner.printError(
                    "\(a.name): to sign in, open \(escapedForMessage(d.verificationURI)) and enter the code "
                        + escapedForMessage(d.userCode))
            }
        } else {
            grant = try signIn.withBrowser(timeout: Double(timeout)) { url in
                CommandLineRunner.printError("\(a.name): sign in at this address (waiting up to \(timeout) s):")
                CommandLineRunner.printError(escapedForMessage(url))
                if !noBrowser, Self.hasDisplay { _ = try? ChildProcess.startDetached(["xdg-open", url]) }
            }
        }
        let directory = config.stateDirectory + "/" + a.name
        if let e = makeDirectories(directory) {
            throw GenericError(.cannotCreate, "cannot create \(quotedForMessage(directory)): \(errnoDescription(e))")
        }
        let broker = TokenBroker(directory: directory, account: a.name)
        // A grant without a refresh token was refused by `SignIn` already.
        let file = TokenFile(tokenEndpoint: provider.tokenEndpoint, clientID: o.clientID, refreshToken: grant.refreshToken ?? "")
        try broker.save(file.applying(grant, now: Int64(time(nil))))
        print("\(a.name): signed in; tokens saved in \(quotedForMessage(broker.tokenPath))")
    }

    static var hasDisplay: Bool {
        ["DISPLAY", "WAYLAND_DISPLAY"].contains { (name: String) in getenv(name).map { String(cString: $0).isEmpty == false } ?? false }
    }
}
