//! `herdsim-live`: what `herdsim serve` runs.

fn main() -> std::process::ExitCode {
    herdsim_live::cli::main_with_args(std::env::args_os())
}
