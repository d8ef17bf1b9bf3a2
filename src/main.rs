//! The `notebridge` binary: parse, hand over, exit with the contract's code.

fn main() -> std::process::ExitCode {
    notebridge::cli::main()
}
