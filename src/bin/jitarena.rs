//! The `jitarena` command: see `jitarena --help` and the README.
fn main() -> std::process::ExitCode {
    jitarena::cli::main()
}
