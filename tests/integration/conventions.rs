//! The conventions a command-line user expects: help in headings with
//! examples that run, completions, a man page, no colour off a terminal or
//! under NO_COLOR, the commit in --version, tips for slips, exit codes that
//! say what happened, and warnings for output files misnamed.

use std::fs;
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;

use crate::common::{usage_error, workdir};
use crate::shared_runs;

/// `herdsim args`'s whole output.
fn output(args: &[&str]) -> Output {
    cargo_bin_cmd!("herdsim").args(args).output().unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = output(args);
    assert!(out.status.success(), "{args:?}: {:?}", out.status);
    String::from_utf8(out.stdout).unwrap()
}

/// The commands shown at the end of `help` under "Examples:", each as its
/// words after `herdsim` (lines ending in ` \` continue).
fn examples(help: &str) -> Vec<Vec<String>> {
    let Some((_, section)) = help.split_once("\nExamples:\n") else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if !line.starts_with("herdsim ") && line != "herdsim" {
            continue;
        }
        let mut text = line.to_string();
        while text.ends_with('\\') {
            text.pop();
            text.push(' ');
            text.push_str(lines.next().expect("a continued line").trim());
        }
        let words: Vec<String> = text.split_whitespace().skip(1).map(String::from).collect();
        commands.push(words);
    }
    commands
}

/// Every subcommand `herdsim --help` lists under "Commands:".
fn subcommands(top: &str) -> Vec<String> {
    let Some((_, section)) = top.split_once("\nCommands:\n") else {
        return Vec::new();
    };
    section
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_example_in_every_long_help_runs() {
    let scenarios = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    // Every command the top help lists, so that a new one's examples run
    // too (exact's were once never run, and one was refused).
    let listed = subcommands(&stdout(&["--help"]));
    for known in ["run", "sweep", "tune", "exact", "map", "assess"] {
        assert!(listed.iter().any(|c| c == known), "{known}: {listed:?}");
    }
    let with_examples = [
        "", "run", "compare", "sweep", "plot", "report", "assess", "tune", "exact", "map", "merge",
        "policy",
    ];
    for command in std::iter::once("").chain(listed.iter().map(String::as_str)) {
        let args: Vec<&str> = [command, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        if examples(&stdout(&args)).is_empty() {
            assert!(
                !with_examples.contains(&command),
                "{command} lost its examples"
            );
            continue;
        }
        let args: Vec<&str> = [command, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let help = stdout(&args);
        let shown = examples(&help);
        assert!(
            (2..=6).contains(&shown.len()),
            "{command}: {} examples:\n{help}",
            shown.len()
        );
        // Each command's examples run in order in a directory of their own
        // that has the repository's scenarios, as its root does.
        let dir = workdir(&format!("examples-{command}"));
        std::os::unix::fs::symlink(scenarios, dir.join("scenarios")).unwrap();
        for example in shown {
            // The guide shows many of these examples too: one that can
            // depend on nothing but its words and the inputs runs once for
            // both tests (`shared_runs`); any other runs here.
            let words: Vec<&str> = example.iter().map(String::as_str).collect();
            let out = if shared_runs::shareable(&words, &dir) {
                shared_runs::run_shared(&words)
            } else {
                let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_herdsim"));
                command.args(&words).current_dir(&dir);
                std::sync::Arc::new(shared_runs::run_with_timeout(
                    &mut command,
                    &words.join(" "),
                ))
            };
            let out = out.as_ref().as_ref().unwrap();
            assert_eq!(
                out.code,
                0,
                "herdsim {}: {}",
                example.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !err.contains("warning:"),
                "herdsim {}: {err}",
                example.join(" ")
            );
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_help_of_every_workload_command_is_in_headings() {
    for command in ["run", "sweep", "compare", "report", "map"] {
        let short = stdout(&[command, "-h"]);
        for heading in [
            "Model:",
            "Policy:",
            "Herd models:",
            "Server model:",
            "Load (server model):",
            "Triggers (server model):",
            "Retry controls:",
            "Server controls:",
            "Call chain (server model):",
            "Measurement:",
            "Replicates and seeds:",
            "Outputs and limits:",
        ] {
            assert!(
                short.lines().any(|l| l == heading),
                "{command} -h lacks {heading}"
            );
        }
        // -h is a summary; --help says which models read each flag.
        let long = stdout(&[command, "--help"]);
        assert!(short.len() * 2 < long.len(), "{command}");
        assert!(!short.contains("Read by:"), "{command}");
        let flag = |name: &str| {
            let start = long.find(&format!("      --{name} <")).unwrap();
            let end = long[start..].find("\n\n").unwrap();
            long[start..start + end].to_string()
        };
        assert!(
            flag("rate").contains("Read by: the server model"),
            "{command}"
        );
        assert!(
            flag("clients").contains("Read by: the herd models (slot, outage, occ)"),
            "{command}"
        );
        assert!(
            flag("write-time").contains("Read by: the occ model"),
            "{command}"
        );
        assert!(flag("policy").contains("Read by: every model"), "{command}");
        assert!(flag("resource").contains("or server ("), "{command}");
    }
    // The run's short help is one line a flag where the default is short.
    let short = stdout(&["run", "-h"]);
    assert!(
        short.contains("      --cap <DURATION>            Largest delay [default: 20s]\n"),
        "{short}"
    );
    // policy takes the policy's shape only.
    let policy = stdout(&["policy", "-h"]);
    assert!(policy.contains("Policy:") && policy.contains("--cap-mode"));
    assert!(!policy.contains("Server model:") && !policy.contains("--clients"));
    assert!(!policy.contains("--policy"), "{policy}");
    // The top level lists each command on one line and says where the docs are.
    let top = stdout(&["--help"]);
    for command in ["run", "sweep", "map", "completions", "man"] {
        let line = top
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{command} ")))
            .unwrap_or_else(|| panic!("{command}: {top}"));
        assert!(line.len() <= 100, "{line}");
    }
    assert!(top.contains("mdbook serve docs"), "{top}");
}

#[test]
fn completions_name_the_subcommands_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = stdout(&["completions", shell]);
        for name in ["run", "sweep", "compare", "completions"] {
            assert!(script.contains(name), "{shell}: no {name}");
        }
        assert!(script.contains("policy"), "{shell}");
    }
    assert!(stdout(&["completions", "bash"]).contains("--policy"));
    let err = usage_error(&["completions", "tcsh"]);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        assert!(err.contains(shell), "{err}");
    }
}

#[test]
fn the_man_page_is_roff_and_names_the_subcommands() {
    let page = stdout(&["man"]);
    assert!(page.contains(".TH herdsim"), "{page}");
    for name in ["run", "sweep", "map", "completions"] {
        assert!(page.contains(name), "no {name}");
    }
    let run = stdout(&["man", "run"]);
    assert!(run.contains(".TH herdsim-run"), "{run}");
    assert!(run.contains("jitter\\-factor"), "{run}");
    let err = usage_error(&["man", "rnu"]);
    assert!(err.contains("'rnu'") && err.contains("run, "), "{err}");
}

#[test]
fn no_escape_byte_off_a_terminal_or_under_no_color() {
    let cases: [&[&str]; 5] = [
        &["--help"],
        &["run", "-h"],
        &["run", "--polcy", "full"],
        &["rn"],
        &["run", "--clients", "100", "--seeds", "4"],
    ];
    for args in cases {
        for no_color in [false, true] {
            let mut command = cargo_bin_cmd!("herdsim");
            command.args(args);
            if no_color {
                command.env("NO_COLOR", "1");
            } else {
                command.env_remove("NO_COLOR");
            }
            let out = command.output().unwrap();
            assert!(
                !out.stdout.is_empty() || !out.stderr.is_empty(),
                "{args:?} said nothing"
            );
            assert!(!out.stdout.contains(&0x1b), "{args:?}: ESC on stdout");
            assert!(!out.stderr.contains(&0x1b), "{args:?}: ESC on stderr");
        }
    }
}

#[test]
fn the_version_names_the_commit_in_a_checkout() {
    let version = stdout(&["--version"]);
    let plain = format!("herdsim {}", env!("CARGO_PKG_VERSION"));
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_string());
    match commit {
        Some(commit) => assert_eq!(version, format!("{plain} (commit {commit})\n")),
        None => assert_eq!(version, format!("{plain}\n")),
    }
}

#[test]
fn a_misspelt_subcommand_or_flag_gets_a_tip_on_the_same_line() {
    let err = usage_error(&["rn"]);
    assert_eq!(
        err,
        "error: unrecognized subcommand 'rn'; tip: a similar subcommand exists: 'run'\n"
    );
    let err = usage_error(&["swep", "-o", "x.csv"]);
    assert!(err.contains("'sweep'"), "{err}");
    let err = usage_error(&["run", "--polcy", "full"]);
    assert!(
        err.contains("'--polcy'") && err.contains("; tip: a similar argument exists: '--policy'"),
        "{err}"
    );
    // Nothing near: no tip.
    assert!(!usage_error(&["frobnicate"]).contains("tip"));
}

/// A server run behind an outage, cut at one second by --horizon.
const CUT: [&str; 10] = [
    "--resource",
    "server",
    "--rate",
    "100",
    "--duration",
    "2s",
    "--trigger",
    "outage@500ms..800ms",
    "--horizon",
    "1s",
];

#[test]
fn a_horizon_cut_is_an_unresolved_result_and_max_events_a_failure() {
    // run: exit 0, the verdict unresolved, and a note that it was cut.
    let out = output(&[&["run", "--json", "-q"][..], &CUT].concat());
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("cut at the horizon"), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(crate::common::mean(&json, "unresolved"), 1.0, "{json}");
    // sweep, compare and map: exit 0 too, each run unresolved.
    let dir = workdir("horizon-cut");
    let csv = dir.join("cut.csv");
    let out = output(&[&["sweep", "-q", "-o", csv.to_str().unwrap()][..], &CUT].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
    let unresolved = header.iter().position(|c| *c == "unresolved_mean").unwrap();
    assert_eq!(row[unresolved], "1");
    let out = output(&[&["compare", "--seeds", "2", "-q"][..], &CUT].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let map = dir.join("map.csv");
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/metastable-map.toml");
    let map_args = [
        "map", scenario, "--x", "trigger", "--y", "rate", "--rate", "300", "--seeds", "2",
        "--refine", "0", "-q",
    ];
    let out = output(
        &[
            &map_args[..],
            &["--horizon", "2.5s", "-o", map.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = fs::read_to_string(&map).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let [runs, unresolved] =
        ["runs", "unresolved"].map(|c| header.iter().position(|h| *h == c).unwrap());
    for line in text.lines().skip(1) {
        let row: Vec<&str> = line.split(',').collect();
        assert_eq!(row[unresolved], row[runs], "{line}");
    }
    // --max-events is a limit: exit 1, with an error, in every command.
    let limited = dir.join("limited.csv");
    let limited = limited.to_str().unwrap();
    let server = &CUT[..8];
    for args in [
        vec![
            "run",
            "--clients",
            "3000",
            "--policy",
            "none",
            "--max-events",
            "1",
            "-q",
        ],
        [&["run", "--max-events", "10", "-q"][..], server].concat(),
        [
            &["sweep", "--max-events", "10", "-q", "-o", limited][..],
            server,
        ]
        .concat(),
        [
            &["compare", "--max-events", "10", "--seeds", "2", "-q"][..],
            server,
        ]
        .concat(),
        [
            &map_args[..],
            &["--max-events", "10", "-o", limited, "--force"],
        ]
        .concat(),
    ] {
        let out = output(&args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains("--max-events"),
            "{args:?}: {err}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn an_output_named_unlike_what_is_written_is_warned_of() {
    let dir = workdir("misnamed");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let cases: [(Vec<String>, &str, &str); 4] = [
        (
            vec![
                "run".into(),
                "--clients".into(),
                "10".into(),
                "--plot".into(),
                path("a.png"),
            ],
            "--plot",
            "a.png",
        ),
        (
            vec![
                "sweep".into(),
                "--clients".into(),
                "10".into(),
                "-q".into(),
                "-o".into(),
                path("b.txt"),
            ],
            "--out",
            "b.txt",
        ),
        (
            vec!["policy".into(), "full".into(), "--csv".into(), path("c")],
            "--csv",
            "c",
        ),
        (
            vec![
                "compare".into(),
                "--seeds".into(),
                "2".into(),
                "-q".into(),
                "--plot".into(),
                path("d.svgz"),
            ],
            "--plot",
            "d.svgz",
        ),
    ];
    for (args, flag, name) in cases {
        let out = cargo_bin_cmd!("herdsim").args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        let warning = format!("warning: {flag} '{}' does not end in .", path(name));
        assert!(
            err.lines().filter(|l| l.starts_with(&warning)).count() == 1,
            "{args:?}: {err}"
        );
        assert!(dir.join(name).is_file(), "{name} not written");
    }
    // Any case of the right extension is no slip.
    let out = output(&["run", "--clients", "10", "--plot", &path("e.SVG")]);
    assert!(out.status.success());
    assert!(!String::from_utf8(out.stderr).unwrap().contains("warning"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_flag_that_took_the_next_flag_as_its_value_is_named() {
    // `--seeds --write-time -x`: --seeds takes `--write-time` as its value
    // and clap finds no place for `-x` (a bare word would be run's
    // scenario); the one line names --seeds as well.
    let err = super::common::usage_error(&["run", "--seeds", "--write-time", "-x"]);
    assert!(
        err.contains("'--write-time' was read as the value of '--seeds'"),
        "{err}"
    );
    // A stray word with one dash is named by clap by its first letters
    // (`-1` of `-1s..5s`): the note still finds the flag before it.
    let err = super::common::usage_error(&["map", "--rate", "--import", "-1s..5s"]);
    assert!(
        err.contains("'--import' was read as the value of '--rate'"),
        "{err}"
    );
    // A flag that takes no value gets no such note.
    let err = super::common::usage_error(&["run", "--quiet", "--json", "--bogus"]);
    assert!(!err.contains("was read as the value"), "{err}");
}
