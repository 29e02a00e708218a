//! Every command the docs show runs here, and what they show it printing is
//! what it prints.
//!
//! The docs are README.md, CONTRIBUTING.md, scenarios/README.md and every
//! page of the book (`docs/src`). Two kinds of code block hold commands
//! (docs/src/contributing/docs.md says how to write them):
//!
//! - ` ```console `: a line `$ COMMAND` (continued by a trailing `\`) is run;
//!   the lines after it, to the next `$` line, are what it prints (stdout,
//!   then stderr). A line `...` stands for any number of lines (the output is
//!   abridged there); a last line `[exit N]` says the exit code, 0 otherwise.
//! - ` ```sh `: every line that starts with `herdsim` or
//!   `cargo run --release --` is run and must exit 0; its output is not
//!   shown, so not checked. Other lines (`cargo install`, `cargo test`,
//!   `mdbook`) set a machine up and are not run here.
//!
//! A block whose info string says `live` (`herdsim serve`) runs in the live
//! package's tests instead (live/tests/docs.rs), where its binary is built.
//!
//! `cargo run --release --` runs the test build of `herdsim`, with `NO_COLOR`
//! set and `COLUMNS=100` (the width help wraps to). Each file's
//! commands run in order in a scratch directory of their own, which holds
//! links to the repository's `scenarios/`, `reference/` and `results/`, so a
//! page can write a file and read it back a few examples later. A block
//! whose info string says `slow` runs only when `HERDSIM_BOOK_SLOW` is set
//! (`scripts/book-check`, which CI runs with the debug binary).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::shared_runs;

/// One command a doc shows.
#[derive(Debug, Clone, PartialEq)]
struct Example {
    /// The doc and the line of the command, for messages.
    place: String,
    /// The command as shown, `cargo run --release --` included.
    command: String,
    /// What it prints, if the doc shows it (a `console` block).
    expected: Option<Vec<String>>,
    /// The exit code the doc says.
    exit: i32,
    /// Only with `HERDSIM_BOOK_SLOW`.
    slow: bool,
}

/// The commands of a Markdown text.
fn examples(name: &str, text: &str) -> Result<Vec<Example>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let Some(info) = line.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let words: Vec<&str> = info
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim_start().starts_with("```"))
            .ok_or_else(|| format!("{name}:{}: a code block that never ends", i + 1))?;
        let body = &lines[i + 1..end];
        let slow = words.contains(&"slow");
        // The live commands' blocks run in the live package's tests
        // (live/tests/docs.rs), where herdsim-live is built.
        let live = words.contains(&"live");
        match words.first().copied() {
            _ if live => {}
            Some("console") => found.extend(console_block(name, i + 2, body, slow)?),
            Some("sh") => found.extend(sh_block(name, i + 2, body, slow)?),
            _ => {}
        }
        i = end + 1;
    }
    Ok(found)
}

/// `body`'s logical lines, each with the number of its first line: a
/// trailing `\` continues a line that `continues` accepts (a command, not
/// the output it prints, which may end in `\` itself).
fn logical_lines(first: usize, body: &[&str], continues: fn(&str) -> bool) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (k, line) in body.iter().enumerate() {
        if open {
            let last = out.last_mut().expect("a continued line");
            last.1.push(' ');
            last.1.push_str(line.trim());
        } else {
            out.push((first + k, line.to_string()));
        }
        let current = &out.last().expect("a line").1;
        open = line.trim_end().ends_with('\\') && continues(current);
        if open {
            let last = out.last_mut().expect("a line");
            let kept = last
                .1
                .trim_end()
                .trim_end_matches('\\')
                .trim_end()
                .to_string();
            last.1 = kept;
        }
    }
    out
}

fn console_block(
    name: &str,
    first: usize,
    body: &[&str],
    slow: bool,
) -> Result<Vec<Example>, String> {
    let mut found: Vec<Example> = Vec::new();
    for (number, line) in logical_lines(first, body, |l| l.starts_with("$ ")) {
        if let Some(command) = line.strip_prefix("$ ") {
            found.push(Example {
                place: format!("{name}:{number}"),
                command: command.trim().to_string(),
                expected: Some(Vec::new()),
                exit: 0,
                slow,
            });
            continue;
        }
        let Some(example) = found.last_mut() else {
            return Err(format!(
                "{name}:{number}: a console block must start with a `$ ` command"
            ));
        };
        let shown = example.expected.as_mut().expect("console output");
        if let Some(code) = line
            .trim()
            .strip_prefix("[exit ")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            example.exit = code
                .parse()
                .map_err(|_| format!("{name}:{number}: `[exit N]` needs a number"))?;
        } else if example.exit != 0 {
            return Err(format!("{name}:{number}: `[exit N]` must be the last line"));
        } else {
            shown.push(line);
        }
    }
    Ok(found)
}

/// Commands in a `sh` block that set a machine up and are not run.
const SETUP: [&str; 8] = [
    "cargo install",
    "cargo test",
    "cargo build",
    "cargo bench",
    "mdbook",
    "git ",
    "pip ",
    "scripts/",
];

fn sh_block(name: &str, first: usize, body: &[&str], slow: bool) -> Result<Vec<Example>, String> {
    let mut found = Vec::new();
    for (number, line) in logical_lines(first, body, |_| true) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("herdsim ") || line.starts_with("cargo run --release -- ") {
            found.push(Example {
                place: format!("{name}:{number}"),
                command: line.to_string(),
                expected: None,
                exit: 0,
                slow,
            });
        } else if !SETUP.iter().any(|s| line.starts_with(s)) {
            return Err(format!(
                "{name}:{number}: `{line}` is neither a herdsim command nor a setup step; \
                 show other shell in a bash block"
            ));
        }
    }
    Ok(found)
}

/// True if `actual` is what `shown` shows: line for line (trailing blanks
/// aside), a `...` line matching any number of lines.
fn matches(shown: &[String], actual: &[String]) -> bool {
    fn go(shown: &[String], actual: &[String]) -> bool {
        match shown.split_first() {
            None => actual.is_empty(),
            Some((first, rest)) if first.trim() == "..." => {
                (0..=actual.len()).any(|skip| go(rest, &actual[skip..]))
            }
            Some((first, rest)) => actual.split_first().is_some_and(|(line, after)| {
                line.trim_end() == first.trim_end() && go(rest, after)
            }),
        }
    }
    let trim = |lines: &[String]| -> Vec<String> {
        let mut lines = lines.to_vec();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines
    };
    go(&trim(shown), &trim(actual))
}

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every doc that shows commands.
fn docs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "scenarios/README.md"]
        .iter()
        .map(|f| root().join(f))
        .collect();
    let mut pages = Vec::new();
    collect_pages(&root().join("docs/src"), &mut pages);
    pages.sort();
    files.extend(pages);
    files
}

fn collect_pages(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_pages(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// What running `example` in `dir` printed (stdout, then stderr) and its
/// exit code. A plain `herdsim` command that can depend on nothing but its
/// words and the repository's inputs runs once for every test that shows it
/// (`shared_runs`); any other runs in `dir` through `sh`.
fn run(example: &Example, dir: &Path) -> Result<(Vec<String>, i32), String> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_herdsim"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.parent().expect("the binary's directory").to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let command = example
        .command
        .replace("cargo run --release -- ", "herdsim ");
    let plain = !command.contains(|c: char| "'\"\\`$|&;<>()*?[]{}~#!".contains(c));
    let words: Vec<&str> = command.split_whitespace().collect();
    let ran = match words.split_first() {
        Some((&"herdsim", words)) if plain && shared_runs::shareable(words, dir) => {
            shared_runs::run_shared(words)
                .as_ref()
                .as_ref()
                .map(|ran| (ran.stdout.clone(), ran.stderr.clone(), ran.code))
                .map_err(|e| format!("{}: {e}", example.place))?
        }
        _ => {
            let ran = shared_runs::run_with_timeout(
                Command::new("sh")
                    .arg("-c")
                    .arg(&command)
                    .current_dir(dir)
                    .env("PATH", std::env::join_paths(paths).expect("a PATH")),
                &example.command,
            )
            .map_err(|e| format!("{}: {e}", example.place))?;
            (ran.stdout, ran.stderr, ran.code)
        }
    };
    let mut text = String::from_utf8_lossy(&ran.0).into_owned();
    text += &String::from_utf8_lossy(&ran.1);
    let lines = text.lines().map(str::to_string).collect();
    Ok((lines, ran.2))
}

/// A fresh scratch directory for `doc`'s commands, with links to the
/// repository's inputs.
fn scratch(doc: &Path) -> PathBuf {
    let relative = doc.strip_prefix(root()).unwrap_or(doc);
    let name = relative.to_string_lossy().replace(['/', '.'], "-");
    let dir = super::common::workdir(&format!("book-{name}"));
    for input in ["scenarios", "reference", "results"] {
        std::os::unix::fs::symlink(root().join(input), dir.join(input)).unwrap();
    }
    dir
}

/// Runs `doc`'s examples in order; the failures.
fn check_doc(doc: &Path, slow: bool) -> (usize, Vec<String>) {
    let relative = doc
        .strip_prefix(root())
        .unwrap_or(doc)
        .display()
        .to_string();
    let text = fs::read_to_string(doc).unwrap();
    let found = match examples(&relative, &text) {
        Ok(found) => found,
        Err(e) => return (0, vec![e]),
    };
    let dir = scratch(doc);
    let mut failures = Vec::new();
    let mut ran = 0;
    for example in found.iter().filter(|e| slow || !e.slow) {
        ran += 1;
        match run(example, &dir) {
            Err(e) => failures.push(e),
            Ok((actual, code)) => {
                if code != example.exit {
                    failures.push(format!(
                        "{}: `{}` exited {code}, the doc says {}:\n{}",
                        example.place,
                        example.command,
                        example.exit,
                        actual.join("\n")
                    ));
                } else if let Some(shown) = &example.expected
                    && !matches(shown, &actual)
                {
                    failures.push(format!(
                        "{}: `{}` printed what the doc does not show (a `...` line abridges):\n\
                         --- shown\n{}\n--- printed\n{}",
                        example.place,
                        example.command,
                        shown.join("\n"),
                        actual.join("\n")
                    ));
                }
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
    (ran, failures)
}

#[test]
fn every_command_the_docs_show_runs_and_prints_what_they_show() {
    let slow = std::env::var_os("HERDSIM_BOOK_SLOW").is_some();
    let docs = docs();
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = docs
            .iter()
            .map(|doc| scope.spawn(move || check_doc(doc, slow)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ran: usize = results.iter().map(|(n, _)| n).sum();
    let failures: Vec<String> = results.into_iter().flat_map(|(_, f)| f).collect();
    assert!(
        failures.is_empty(),
        "{} of {ran} doc commands failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // Not vacuous: the README's two commands' main job is among them, and
    // the book shows many more.
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let readme = examples("README.md", &readme).unwrap();
    assert!(
        readme.iter().any(|e| e
            .command
            .starts_with("cargo run --release -- run --clients 1000")),
        "the README's main job is not a checked command"
    );
    assert!(ran >= 40, "only {ran} doc commands found");
}

#[test]
fn a_shown_output_must_match_line_for_line_with_dots_for_gaps() {
    let lines = |text: &str| -> Vec<String> { text.lines().map(str::to_string).collect() };
    let printed = lines("a\nb\nc\nd");
    assert!(matches(&lines("a\nb\nc\nd"), &printed));
    assert!(matches(&lines("a  \nb\nc\nd\n\n"), &printed));
    assert!(matches(&lines("a\n...\nd"), &printed));
    assert!(matches(&lines("...\nc\n..."), &printed));
    assert!(matches(&lines("a\n...\nb\nc\nd"), &printed));
    assert!(!matches(&lines("a\nb\nc"), &printed), "a missing line");
    assert!(
        !matches(&lines("a\n...\nc"), &printed),
        "the end is anchored"
    );
    assert!(
        !matches(&lines("b\n..."), &printed),
        "the start is anchored"
    );
    assert!(
        !matches(&lines("a\nc\n..."), &printed),
        "order and adjacency"
    );
}

#[test]
fn code_blocks_become_commands_with_their_output_and_exit_code() {
    let text = "intro\n```console\n$ herdsim run \\\n  --clients 5\nline one\n...\n\
                $ herdsim run --clients 0\nerror: x\n[exit 2]\n```\n\
                ```sh\ncargo install --path .\nherdsim policies # list\n```\n\
                ```toml\nherdsim = 1\n```\n```console slow\n$ herdsim map\n```\n";
    let found = examples("t.md", text).unwrap();
    let commands: Vec<(&str, i32, bool)> = found
        .iter()
        .map(|e| (e.command.as_str(), e.exit, e.slow))
        .collect();
    assert_eq!(
        commands,
        [
            ("herdsim run --clients 5", 0, false),
            ("herdsim run --clients 0", 2, false),
            ("herdsim policies # list", 0, false),
            ("herdsim map", 0, true),
        ]
    );
    assert_eq!(found[0].place, "t.md:3");
    assert_eq!(
        found[0].expected.as_deref(),
        Some(&["line one".to_string(), "...".to_string()][..])
    );
    assert_eq!(found[2].expected, None);
    // Output that ends in `\` (an example in a help text) is not a command.
    let help = examples(
        "t.md",
        "```console\n$ herdsim run \\\n  -h\nherdsim x \\\n  --y\n```\n",
    )
    .unwrap();
    assert_eq!(help[0].command, "herdsim run -h");
    assert_eq!(
        help[0].expected.as_deref(),
        Some(&["herdsim x \\".to_string(), "  --y".to_string()][..])
    );
    assert!(examples("t.md", "```sh\nrm -rf /\n```\n").is_err());
    assert!(examples("t.md", "```console\noutput first\n```\n").is_err());
    assert!(examples("t.md", "```console\n$ x\n").is_err());
}

/// The pages' `<!-- generated: herdsim ARGS -->` blocks (`scripts/book-refresh`
/// pastes them): each page, its arguments and what the block holds.
fn generated_blocks() -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut pages = Vec::new();
    collect_pages(&root().join("docs/src"), &mut pages);
    for page in pages {
        let text = fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("<!-- generated: herdsim ") {
            let after = &rest[at + "<!-- generated: herdsim ".len()..];
            let close = after.find(" -->\n").expect("a generated marker ends");
            let args = after[..close].to_string();
            let body_start = close + " -->\n".len();
            let end = after[body_start..]
                .find("<!-- /generated -->")
                .unwrap_or_else(|| panic!("{name}: `{args}` has no <!-- /generated -->"));
            found.push((
                name.clone(),
                args,
                after[body_start..body_start + end].to_string(),
            ));
            rest = &after[body_start + end..];
        }
    }
    found
}

#[test]
fn the_reference_pages_are_what_the_code_prints() {
    // A registry changed (a parameter, a policy, a help line) and the page
    // not pasted again fails here, naming the page and the command.
    let blocks = generated_blocks();
    let mut stale = Vec::new();
    for (page, args, body) in &blocks {
        let words: Vec<&str> = args.split_whitespace().collect();
        // The block is a console block too: the book test runs the same
        // command, so it runs once for both when it can.
        let ran = if shared_runs::shareable(&words, &root()) {
            shared_runs::run_shared(&words)
        } else {
            let mut command = Command::new(env!("CARGO_BIN_EXE_herdsim"));
            command.args(&words);
            std::sync::Arc::new(shared_runs::run_with_timeout(&mut command, args))
        };
        let out = ran.as_ref().as_ref().unwrap();
        assert_eq!(out.code, 0, "{page}: `herdsim {args}` failed");
        let text = String::from_utf8(out.stdout.clone()).unwrap()
            + &String::from_utf8(out.stderr.clone()).unwrap();
        let expected = if words.contains(&"--markdown") {
            text
        } else {
            format!("```console\n$ herdsim {args}\n{}\n```\n", text.trim_end())
        };
        if *body != expected {
            stale.push(format!("{page}: `herdsim {args}`"));
        }
    }
    assert!(
        stale.is_empty(),
        "pages that differ from the code (run scripts/book-refresh):\n{}",
        stale.join("\n")
    );
    for reference in [
        "params --markdown",
        "metrics",
        "policies",
        "controls",
        "triggers",
        "run --help",
    ] {
        assert!(
            blocks.iter().any(|(_, args, _)| args == reference),
            "no page holds `herdsim {reference}`"
        );
    }
}

/// The relative links of a Markdown text: `[text](target)` and
/// `![alt](target)` outside code, without `#anchor`s.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code spans hold syntax, not links.
        let outside: String = line
            .split('`')
            .enumerate()
            .filter(|(k, _)| k % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = outside.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(close) = after.find(')') else { break };
            let target = after[..close].split('#').next().unwrap_or("").trim();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_string());
            }
            rest = &after[close..];
        }
    }
    links
}

/// `path` with its `.` and `..` parts resolved as text (links not followed).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_reaches_a_file() {
    let mut files = docs();
    files.push(root().join("results/README.md"));
    let book = root().join("docs/src");
    let mut broken = Vec::new();
    let mut count = 0;
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else {
            continue;
        };
        for link in relative_links(&text) {
            count += 1;
            let target = file.parent().unwrap().join(&link);
            let name = file.strip_prefix(root()).unwrap().display();
            if !target.exists() {
                broken.push(format!("{name}: {link}"));
            } else if file.starts_with(&book) && !lexical(&target).starts_with(&book) {
                // mdBook publishes docs/src only: a link out of it breaks
                // in the built book (results/ is linked in as docs/src/results).
                broken.push(format!("{name}: {link} (outside the book)"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to no file:\n{}",
        broken.join("\n")
    );
    assert!(count >= 30, "only {count} links found");
    assert_eq!(
        relative_links("[a](x.md#top) `[b](no.md)` ![c](p.svg) [d](https://e) [f](#here)"),
        ["x.md", "p.svg"]
    );
}
