//! The `jitarena` command: see `jitarena --help` and the README.
fn main() -> std::process::ExitCode {
    jitarena_tools::cli::main()
}
