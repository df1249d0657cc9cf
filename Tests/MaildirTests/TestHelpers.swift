func lastComponent(_ path: String) -> String {
    String(path.split(separator: "/", omittingEmptySubsequences: false).last!)
}
