/// The version every executable reports with `--version`.
public enum MoVersion {
    public static let string = "0.1.0"
}
