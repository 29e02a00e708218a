//! `herdsim serve` and `herdsim drill`: the live commands live in the
//! `herdsim-live` package (tokio and hyper stay out of this binary's
//! build). This hands the command line to `herdsim-live` found beside this binary or on the PATH,
//! replacing this process on Unix so that Ctrl-C and the exit code are its
//! own; without it, one line says how to install it. `HERDSIM_LIVE` names
//! another `herdsim-live` (the tests' stand-in, or a build of one's own).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command as Process;

use super::CliError;

/// The program the live commands are in.
const LIVE: &str = "herdsim-live";

/// A live command's arguments, passed on untouched (its `--help` too).
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct LiveArgs {
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..
    )]
    args: Vec<OsString>,
}

/// Where `herdsim-live` is: the file `HERDSIM_LIVE` names if it is set,
/// else beside this binary, else the first on the PATH.
fn find_live() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HERDSIM_LIVE") {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let name = format!("{LIVE}{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&name)));
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(&name));
    beside.into_iter().chain(on_path).find(|p| p.is_file())
}

/// Runs `herdsim-live COMMAND ARGS`.
pub fn run_live(command: &str, args: &LiveArgs) -> Result<(), CliError> {
    let Some(live) = find_live() else {
        // Its help is this binary's description of the command and where
        // the rest is, not an error.
        if args.args.iter().any(|a| a == "-h" || a == "--help") {
            let mut cli = super::cli_command();
            let mut sub = cli
                .find_subcommand_mut(command)
                .expect("a live command is a subcommand")
                .clone()
                .bin_name(format!("herdsim {command}"));
            let help = sub.render_long_help().to_string();
            return super::write_stdout(&format!(
                "{help}\n{command}'s flags are herdsim-live's, which this install lacks: install it \
                 with `cargo install --path live` from herdsim's repository, then \
                 `herdsim {command} --help` lists them.\n"
            ));
        }
        return Err(CliError::Usage(format!(
            "{command} is in the {LIVE} package, which this install lacks: install it with \
             `cargo install --path live` from herdsim's repository (or run `cargo run -p {LIVE} -- {command} …`)"
        )));
    };
    let mut process = Process::new(&live);
    process.arg(command).args(&args.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = process.exec();
        Err(CliError::Io(error))
    }
    #[cfg(not(unix))]
    {
        let status = process.status()?;
        match status.code() {
            Some(0) => Ok(()),
            Some(2) => Err(CliError::Usage(format!(
                "{command} refused its input (above)"
            ))),
            _ => Err(CliError::Limit(format!("{command} ended with {status}"))),
        }
    }
}
