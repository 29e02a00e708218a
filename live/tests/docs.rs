//! The book's `live` blocks (the main package's book test skips them: it
//! does not build this binary). Each `herdsim serve` command a `sh live`
//! block shows runs as shown, moved to a free loopback port, and what it
//! announces must be on the page; a `herdsim drill` after it in the block
//! drives it (its target moved to that port), else the serve takes three
//! calls; then a real Ctrl-C (SIGINT) stops the serve, which must report.
//! A `console live` block's output is what the command prints (`...`
//! stands for any lines).

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::{PATIENCE, Served, ctrl_c, live, post, start_serve};

/// The pages that hold live blocks.
const PAGES: [&str; 1] = ["docs/src/guide/serve.md"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The live blocks of `text`: their info words and lines.
fn live_blocks(text: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let words: Vec<String> = info.split_whitespace().map(String::from).collect();
        let body: Vec<String> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .map(String::from)
            .collect();
        if words.iter().any(|w| w == "live") {
            blocks.push((words, body));
        }
    }
    blocks
}

/// A command's words (a trailing `\` continues it), shell-quoting aside:
/// the docs' live commands quote nothing.
fn commands(body: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in body {
        let line = line.trim_start_matches("$ ");
        match line.strip_suffix('\\') {
            Some(start) => current += start,
            None => {
                current += line;
                if current.trim_start().starts_with("herdsim ") {
                    out.push(
                        current
                            .split_whitespace()
                            .skip(1)
                            .map(String::from)
                            .collect(),
                    );
                }
                current.clear();
            }
        }
    }
    out
}

/// Stops a serve with a real Ctrl-C: what it printed.
fn stop_serve(served: Served) -> String {
    ctrl_c(&served.child);
    let out = common::finish(served.child, PATIENCE);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a shown `drill` command in `dir` against the serve on `port` (the
/// shown target's port replaced): its report, and its plan (the first line
/// on stderr, the port as shown).
fn run_drill(args: &[String], dir: &Path, port: u16) -> (String, String) {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("127.0.0.1:8080", &format!("127.0.0.1:{port}")))
        .collect();
    let child = live()
        .args(&args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A shown drill runs for its load (tens of seconds at most).
    let out = common::finish(child, Duration::from_secs(120));
    assert!(out.status.success(), "{args:?}: {out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let plan = stderr
        .lines()
        .next()
        .unwrap_or("")
        .replace(&format!("127.0.0.1:{port}"), "127.0.0.1:8080");
    (String::from_utf8(out.stdout).unwrap(), plan)
}

/// The file a shown command's `--series` names, if it names one.
fn series_of(command: &[String], dir: &Path) -> Option<PathBuf> {
    command
        .iter()
        .position(|w| w == "--series")
        .map(|i| dir.join(&command[i + 1]))
}

/// `expected` (with `...` for any lines) against `actual`.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual
                .first()
                .is_some_and(|a| a.trim_end() == first.trim_end())
                && matches(rest, &actual[1..])
        }
    }
}

#[test]
fn every_live_command_the_docs_show_runs_as_shown() {
    let mut ran = 0;
    for page in PAGES {
        let text = std::fs::read_to_string(repository().join(page)).unwrap();
        for (words, body) in live_blocks(&text) {
            let dir =
                std::env::temp_dir().join(format!("herdsim-live-docs-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            if words[0] == "console" {
                let command = commands(&body[..1]).remove(0);
                let out = live()
                    .args(&command)
                    .env("COLUMNS", "100")
                    .output()
                    .unwrap();
                let printed = String::from_utf8(out.stdout).unwrap();
                let lines: Vec<&str> = printed.lines().collect();
                assert!(
                    matches(&body[1..], &lines),
                    "{page}: {command:?} printed\n{printed}"
                );
            } else {
                // A serve runs until the block ends: a drill after it in
                // the block drives it; alone, it takes three calls.
                let mut running: Option<Served> = None;
                let mut drilled = false;
                for command in commands(&body) {
                    match command[0].as_str() {
                        "serve" => {
                            let serve = start_serve(&command, Some(&dir));
                            assert!(
                                text.contains(&serve.announced),
                                "{page} shows what serve announces:\n{}",
                                serve.announced
                            );
                            running = Some(serve);
                        }
                        "drill" => {
                            let serve = running.as_ref().expect("a drill after its serve");
                            let (report, plan) = run_drill(&command, &dir, serve.port);
                            assert!(report.contains("storm probability"), "{report}");
                            assert!(text.contains(&plan), "{page} shows drill's plan:\n{plan}");
                            drilled = true;
                        }
                        other => panic!("{page}: `herdsim {other}` is not live"),
                    }
                    if let Some(series) = series_of(&command, &dir)
                        && command[0] == "drill"
                    {
                        let csv = std::fs::read_to_string(&series).expect("the series");
                        assert!(csv.lines().count() >= 2, "{csv}");
                    }
                }
                let serve = running.expect("a live sh block starts a serve");
                if !drilled {
                    for _ in 0..3 {
                        assert_eq!(post(serve.port, "hi").0, 200);
                    }
                }
                let summary = stop_serve(serve);
                let expected = if drilled {
                    "attempts arrived"
                } else {
                    "3 attempts arrived, 3 finished"
                };
                assert!(summary.contains(expected), "{summary}");
            }
            ran += 1;
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    assert!(ran >= 2, "the live pages lost their blocks");
}
