//! What the live tests share: starting `herdsim-live` on a free loopback
//! port, a real HTTP/1.1 call, a real Ctrl-C, and waiting for a process to
//! stop, each bounded in time.

#![allow(dead_code)] // each test binary uses its own part

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The longest one exchange or one stop may take before a test fails.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Live runs are timed by the machine's clock: on two cores, two servers
/// and their clients at once would each see the other's load. A test that
/// times things holds this for its whole run.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// `herdsim-live`, as `herdsim serve` and `herdsim drill` run it.
pub fn live() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herdsim-live"))
}

/// A `serve` running on a free loopback port.
pub struct Served {
    pub child: Child,
    pub port: u16,
    /// Its first line on stderr, the port as the docs show it (8080).
    pub announced: String,
}

/// Starts `herdsim-live ARGS --listen 127.0.0.1:0` (ARGS begins with
/// `serve`; a `--listen` among them is overridden) in `dir`, and reads its
/// announcement.
pub fn start_serve<S: AsRef<OsStr>>(args: &[S], dir: Option<&Path>) -> Served {
    let mut command = live();
    command
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn().expect("herdsim-live starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr piped"))
        .read_line(&mut line)
        .expect("an announcement");
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let announced = line
        .trim_end()
        .replace(&format!("127.0.0.1:{port}"), "127.0.0.1:8080");
    Served {
        child,
        port,
        announced,
    }
}

/// Waits for `child` to stop by itself, at most `patience`: its output.
pub fn finish(mut child: Child, patience: Duration) -> Output {
    let deadline = Instant::now() + patience;
    while child.try_wait().expect("waitable").is_none() {
        assert!(
            Instant::now() < deadline,
            "a process did not stop in {patience:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("its output")
}

/// Sends `child` a real Ctrl-C (SIGINT).
pub fn ctrl_c(child: &Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "the Ctrl-C was sent");
}

/// One HTTP/1.1 POST of `body` to `/call` on a fresh connection: the
/// status code, the reply's body and how long the reply took.
pub fn post(port: u16, body: &str) -> (u16, String, Duration) {
    post_with(port, body, "")
}

/// `post` with extra header lines (`Name: value\r\n` each).
pub fn post_with(port: u16, body: &str, headers: &str) -> (u16, String, Duration) {
    let start = Instant::now();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "POST /call HTTP/1.1\r\nHost: test\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream
        .read_to_string(&mut reply)
        .expect("a reply before the read timeout");
    let status = reply[9..12].parse().expect("a status code");
    let body = reply.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body, start.elapsed())
}
