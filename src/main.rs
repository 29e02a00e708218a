//! The `herdsim` binary: all the work is in the library.

fn main() -> std::process::ExitCode {
    herdsim::cli::main_with_args(std::env::args_os())
}
