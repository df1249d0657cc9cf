#if canImport(Glibc)
import Glibc
#endif
import MoCLI
import MoCore

// mo-sendmail keeps sendmail's command line (-oi, -oem, -B8BITMIME, -t, -f ADDR ...), which no option-parsing
// library models, so it parses its arguments by hand.

let usage = """
    usage: mo-sendmail [options] [--] recipient...

    A sendmail-compatible sender: reads a message on stdin and sends it over SMTP with the account
    chosen by -a or by the From address. When the server cannot be reached, the message is queued and
    mo-sync sends it later. neomutt: set sendmail="mo-sendmail"

    Options:
      -t                 read recipients from To, Cc and Bcc (Bcc is removed before sending)
      -f ADDR            envelope sender
      -F NAME            full name of the sender
      -a ACCOUNT         account to send with (default: chosen by From)
      -i, -oi            a line with a single dot does not end the message
      -N DSN, -R RET     delivery status notifications (passed on when the server offers DSN)
      -B8BITMIME         the body is 8-bit
      --config FILE      configuration file
      --queue            list queued messages
      --flush            send queued messages now
      -h, --help         this text
      --version          print the version

    Exit status (sysexits.h): 0 sent or queued, 64 bad usage, 69 unavailable, 75 temporary failure,
    77 refused (authentication), 78 configuration error.
    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
if arguments.contains("--version") {
    print("mo-sendmail \(MoVersion.string)")
    exit(0)
}
CommandLineRunner.fail(tool: "mo-sendmail", NotYetBuilt("sending"))
