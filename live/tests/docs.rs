//! The book's `live` blocks (the main package's book test skips them: it
//! does not build this binary). Each `herdsim serve` command a `sh live`
//! block shows runs as shown, moved to a free loopback port, takes a few
//! calls and is stopped with a real Ctrl-C (SIGINT), which must keep its
//! series; what it announces is on the page. A `console live` block's
//! output is what the command prints (`...` stands for any lines).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The pages that hold live blocks.
const PAGES: [&str; 1] = ["docs/src/guide/serve.md"];

/// The longest a shown command may take to answer or stop.
const PATIENCE: Duration = Duration::from_secs(20);

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

/// One HTTP/1.1 call: the status code.
fn call(port: &str) -> u16 {
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).expect("connects");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "POST /call HTTP/1.1\r\nHost: docs\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply[9..12].parse().unwrap()
}

/// Runs a shown `serve` command in `dir` on a free port, calls it three
/// times, stops it with SIGINT: its announcement (port as shown) and
/// stdout.
fn run_serve(args: &[String], dir: &Path) -> (String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_herdsim-live"))
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut announced = String::new();
    stderr.read_line(&mut announced).unwrap();
    let port = announced
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("no port in {announced:?}"))
        .to_string();
    for _ in 0..3 {
        assert_eq!(call(&port), 200);
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success(), "the Ctrl-C was sent");
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "serve did not stop at Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        announced
            .trim_end()
            .replace(&format!("127.0.0.1:{port}"), "127.0.0.1:8080"),
        String::from_utf8(out.stdout).unwrap(),
    )
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
                let out = Command::new(env!("CARGO_BIN_EXE_herdsim-live"))
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
                for command in commands(&body) {
                    assert_eq!(command[0], "serve", "{page}: only serve is live");
                    let series = command
                        .iter()
                        .position(|w| w == "--series")
                        .map(|i| dir.join(&command[i + 1]));
                    let (announced, summary) = run_serve(&command, &dir);
                    assert!(
                        text.contains(&announced),
                        "{page} shows what serve announces:\n{announced}"
                    );
                    assert!(
                        summary.contains("3 attempts arrived, 3 finished"),
                        "{summary}"
                    );
                    if let Some(series) = series {
                        let csv = std::fs::read_to_string(&series).expect("kept at Ctrl-C");
                        assert!(csv.lines().count() >= 2, "{csv}");
                    }
                }
            }
            ran += 1;
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    assert!(ran >= 2, "the live pages lost their blocks");
}
