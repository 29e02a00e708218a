//! `herdsim import`, and the `--import` flags of the commands that run: a
//! user's own configuration files read as herdsim's parameters. The reading
//! is [`crate::import`]'s; this file reads the files and the environment.

use std::path::{Path, PathBuf};

use clap::Args;

use super::output::read_input;
use super::{CliError, write_stdout};
use crate::experiment::grid::Grid;
use crate::import::{Imported, Options, Source, Unknown, formats, import, parse_select, to_toml};
use crate::spec::params::param;

/// The largest configuration file read.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// The heading of the import flags in `--help`.
pub const IMPORTED: &str = "Imported configuration";

/// The import flags every running command takes.
#[derive(Debug, Args, Default, Clone)]
pub struct ImportFlags {
    /// Read a configuration file (gRPC, Envoy, AWS, resilience4j, Polly, Linkerd, Gateway API)
    ///
    /// Its settings become the workload's, below the scenario's own keys and
    /// the flags, which override them. Repeat for several files (a gRPC
    /// service config and an Envoy cluster, say); `herdsim import FILE`
    /// shows what a file sets and why.
    #[arg(long = "import", value_name = "FILE", allow_hyphen_values = true, help_heading = IMPORTED)]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub choices: ImportChoices,
}

/// How configuration files are read.
#[derive(Debug, Args, Default, Clone)]
pub struct ImportChoices {
    /// Choose among what the files offer: KIND=NAME (method=pkg.Svc/Call, cluster=backend, …)
    ///
    /// Which method's config of a gRPC service config, which Envoy route or
    /// cluster, which resilience4j instance, which AWS profile, which item
    /// of a Kubernetes List (NAME, or NAMESPACE/NAME where several
    /// namespaces share the name) applies when a file has several, one
    /// choice of each kind (`herdsim import --help` lists the kinds).
    #[arg(long, value_name = "KIND=NAME", value_parser = parse_select, help_heading = IMPORTED)]
    pub select: Vec<(String, String)>,

    /// Warn of fields the format does not have, instead of refusing the file
    #[arg(long, help_heading = IMPORTED)]
    pub warn_unknown: bool,
}

impl ImportChoices {
    /// The reading options, with the environment's variables that formats
    /// read (`AWS_*`).
    pub fn options(&self) -> Options {
        Options {
            select: self.select.clone(),
            unknown: if self.warn_unknown {
                Unknown::Warn
            } else {
                Unknown::Refuse
            },
            env: std::env::vars()
                .filter(|(k, _)| k.starts_with("AWS_"))
                .collect(),
        }
    }

    /// True if nothing was chosen.
    pub fn is_empty(&self) -> bool {
        self.select.is_empty() && !self.warn_unknown
    }
}

/// Reads `files` (each shown as the user named it) into settings, printing
/// the warnings to stderr.
pub fn read_configs(files: &[PathBuf], choices: &ImportChoices) -> Result<Imported, CliError> {
    let mut sources = Vec::new();
    for path in files {
        sources.push(Source {
            file: path.display().to_string(),
            text: read_input(path, "configuration file", MAX_CONFIG_BYTES)?,
        });
    }
    let imported =
        import(&sources, &choices.options()).map_err(|e| CliError::Usage(e.to_string()))?;
    for warning in &imported.warnings {
        super::warn(warning);
    }
    for assumption in &imported.assumptions {
        super::output::hold_note(assumption);
    }
    Ok(imported)
}

/// Puts `imported`'s settings into `grid` where it has no value of its own
/// (from a scenario's key or variant); flags are applied after.
pub fn apply_imported(imported: &Imported, grid: &mut Grid) -> Result<(), CliError> {
    for setting in &imported.settings {
        let p = param(setting.key).expect("importers set registry keys");
        if grid.values(p.key).is_some() || grid.variant_sets(p) {
            continue;
        }
        grid.set(p, vec![setting.value.clone()])
            .map_err(|e| CliError::Usage(format!("{}: {e}", setting.from)))?;
    }
    Ok(())
}

/// `herdsim import`'s arguments.
#[derive(Debug, Args)]
#[command(after_long_help = formats_help())]
pub struct ImportArgs {
    /// The configuration files, read in order (a key two files set must agree)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,

    /// Only check the files: print nothing, exit 0 if herdsim reads them
    #[arg(long)]
    check: bool,

    #[command(flatten)]
    choices: ImportChoices,
}

/// The formats and their `--select` kinds, for `--help`.
fn formats_help() -> String {
    let mut text = String::from("Formats (found by each file's contents):\n");
    for format in formats() {
        text += &format!("  {}: {}\n", format.name, format.about);
        for (kind, what) in format.selects {
            text += &format!("      --select {kind}=…  {what}\n");
        }
    }
    text
}

/// Prints the scenario TOML the files amount to (or, with `--check`,
/// nothing).
pub fn import_command(args: &ImportArgs) -> Result<(), CliError> {
    let imported = read_configs(&args.files, &args.choices)?;
    if args.check {
        return Ok(());
    }
    let mut command = String::from("herdsim import");
    for file in &args.files {
        command += &format!(" {}", shell_word(file));
    }
    for (kind, name) in &args.choices.select {
        command += &format!(" --select {kind}={name}");
    }
    write_stdout(&to_toml(&imported, &command))
}

/// A path as a shell reads it back (quoted if it needs to be).
fn shell_word(path: &Path) -> String {
    super::output::shell_word(&path.display().to_string())
}
