//! Issue 34's writers: a map's `--resume` replaces nothing unrelated, one
//! writer at a time (locks), `sweep --force` keeps the old file until the new
//! one is whole, temporaries never touch another file, two names of one new
//! file are caught, a full disk leaves whole lines only, and a map's outputs
//! are checked before its runs.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{usage_error, workdir};

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

fn herdsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herdsim"))
}

/// `herdsim args`, which must succeed; its stderr.
fn succeed(args: &[&str]) -> String {
    let out = herdsim().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {err}");
    err
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[repr(C)]
struct Rlimit {
    current: u64,
    max: u64,
}

unsafe extern "C" {
    fn setrlimit(resource: i32, limit: *const Rlimit) -> i32;
    fn signal(signal: i32, handler: usize) -> usize;
}

/// Linux's `RLIMIT_FSIZE`, `SIGXFSZ` and `SIG_IGN`.
const RLIMIT_FSIZE: i32 = 1;
const SIGXFSZ: i32 = 25;
const SIG_IGN: usize = 1;

/// `herdsim args` on a disk that takes no file past `bytes`: the file-size
/// limit, with SIGXFSZ ignored (as an exec keeps it), so a write past it
/// fails with EFBIG as a full disk fails with ENOSPC.
fn with_full_disk(args: &[&str], bytes: u64) -> Output {
    let mut command = herdsim();
    command.args(args);
    // SAFETY: setrlimit and signal are async-signal-safe, and touch only
    // the child about to exec.
    unsafe {
        command.pre_exec(move || {
            let limit = Rlimit {
                current: bytes,
                max: bytes,
            };
            signal(SIGXFSZ, SIG_IGN);
            if setrlimit(RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

/// Asserts `out` is bad input (exit 2, one line on stderr); the line.
fn one_line_error(out: &Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    err
}

const MAP: [&str; 10] = [
    "map",
    "--x",
    "rate",
    "--y",
    "timeout",
    "--resource",
    "server",
    "--rate",
    "100,900",
    "--timeout",
];

fn map_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args: Vec<&str> = MAP.to_vec();
    args.extend(["100ms", "--duration", "300ms", "-q"]);
    args.extend(extra);
    args
}

#[test]
fn map_resume_without_a_journal_replaces_no_file() {
    let dir = workdir("h1-map-resume");
    let precious = path(&dir, "precious.csv");
    succeed(&["sweep", "--clients", "5,6", "--out", &precious, "-q"]);
    let before = fs::read(&precious).unwrap();
    let err = usage_error(&map_args(&["--out", &precious, "--resume"]));
    assert!(
        err.contains("(--out) exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(fs::read(&precious).unwrap(), before, "--out left as it was");
    // The same for an unrelated --svg beside a new --out.
    let svg = path(&dir, "mine.svg");
    fs::write(&svg, "mine").unwrap();
    let out = path(&dir, "m.csv");
    let err = usage_error(&map_args(&["--out", &out, "--svg", &svg, "--resume"]));
    assert!(err.contains("(--svg) exists"), "{err}");
    assert_eq!(fs::read_to_string(&svg).unwrap(), "mine");
    assert!(!Path::new(&out).exists() && !Path::new(&format!("{out}.runs")).exists());
    // A map already whole is left alone by a requeued --resume, which
    // succeeds.
    succeed(&map_args(&["--out", &out]));
    let made = fs::read(&out).unwrap();
    let err = succeed(&map_args(&["--out", &out, "--resume"]));
    assert!(err.is_empty(), "-q: {err}");
    assert_eq!(fs::read(&out).unwrap(), made);
}

/// Waits until `file` holds at least a line while `child` still runs;
/// fails if `child` ends first (the test would not overlap the two).
fn wait_for_line(child: &mut Child, file: &str) {
    let started = Instant::now();
    while !fs::read_to_string(file).is_ok_and(|t| t.contains('\n')) {
        assert!(child.try_wait().unwrap().is_none(), "the first ended first");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{file} never came"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_second_sweep_or_map_on_one_output_is_refused_while_the_first_runs() {
    let dir = workdir("h1-locks");
    let out = path(&dir, "slow.csv");
    let clients = "1000,1001,1002,1003,1004,1005,1006,1007";
    let sweep = [
        "sweep",
        "--clients",
        clients,
        "--seeds",
        "300",
        "-q",
        "--out",
        &out,
        "--resume",
    ];
    let mut first = herdsim().args(sweep).stderr(Stdio::null()).spawn().unwrap();
    wait_for_line(&mut first, &out);
    let second = herdsim().args(sweep).output().unwrap();
    let err = one_line_error(&second, "the second sweep");
    assert!(
        err.contains(&out) && err.contains("another herdsim"),
        "{err}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first sweep ended before the second: they did not overlap"
    );
    assert!(first.wait().unwrap().success());
    let text = fs::read_to_string(&out).unwrap();
    let points: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        points,
        ["0", "1", "2", "3", "4", "5", "6", "7"],
        "no row twice"
    );

    // A map: its journal is held while it runs.
    let map_out = path(&dir, "m.csv");
    let journal = format!("{map_out}.runs");
    let mut map: Vec<&str> = MAP.to_vec();
    map[8] = "1000,3000";
    map.extend([
        "100ms",
        "--duration",
        "5s",
        "--seeds",
        "30",
        "-q",
        "--out",
        &map_out,
        "--resume",
    ]);
    let mut first = herdsim()
        .args(&map)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_line(&mut first, &journal);
    let second = herdsim().args(&map).output().unwrap();
    let err = one_line_error(&second, "the second map");
    assert!(
        err.contains(&journal) && err.contains("another herdsim"),
        "{err}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first map ended before the second: they did not overlap"
    );
    assert!(first.wait().unwrap().success());
    assert!(!Path::new(&journal).exists());
    let text = fs::read_to_string(&map_out).unwrap();
    // Each cell by its row and place on x, the first two columns.
    let mut cells: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split(',').take(2).collect())
        .collect();
    let made = cells.len();
    cells.sort_unstable();
    cells.dedup();
    assert!(made >= 3 && cells.len() == made, "no cell twice: {text}");
}

#[test]
fn sweep_force_keeps_the_old_file_until_the_new_one_is_whole() {
    let dir = workdir("h1-force");
    let out = path(&dir, "out.csv");
    let new = format!("{out}.new");
    succeed(&["sweep", "--clients", "5,6", "-q", "--out", &out]);
    let old = fs::read(&out).unwrap();
    // Point 2 makes over 1,048,576 calls: --max-events stops it there, as an
    // interruption would.
    let grid = ["--clients", "10,20,2000", "--policy", "none", "-q"];
    let fresh = path(&dir, "fresh.csv");
    succeed(&[&["sweep", "--out", &fresh][..], &grid].concat());
    let stopped = herdsim()
        .args(["sweep", "--out", &out, "--force", "--max-events", "1"])
        .args(grid)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(1), "{err}");
    assert!(err.contains("--max-events") && err.contains(&new), "{err}");
    assert_eq!(fs::read(&out).unwrap(), old, "the old file as it was");
    assert_eq!(fs::read_to_string(&new).unwrap().lines().count(), 3);
    // A plain sweep does not forget it silently...
    let err = usage_error(&[&["sweep", "--out", &out][..], &grid].concat());
    assert!(err.contains("--resume continues them"), "{err}");
    // ...and --resume continues the new rows, replacing the old file when
    // whole: the uninterrupted sweep's bytes.
    succeed(&[&["sweep", "--out", &out, "--resume"][..], &grid].concat());
    assert_eq!(fs::read(&out).unwrap(), fs::read(&fresh).unwrap());
    assert!(!Path::new(&new).exists());
    // An uninterrupted --force replaces it whole too.
    succeed(&["sweep", "--clients", "5,6", "-q", "--out", &out, "--force"]);
    assert_eq!(fs::read(&out).unwrap(), old);
    assert_eq!(listing(&dir), ["fresh.csv", "out.csv"]);
}

#[test]
fn temporaries_are_new_files_that_never_follow_a_link() {
    let dir = workdir("h1-temporaries");
    let plot = path(&dir, "r.svg");
    fs::write(&plot, "old").unwrap();
    // Today's fixed name, as a link to a victim and as a user's file.
    fs::write(dir.join("victim.txt"), "victim").unwrap();
    std::os::unix::fs::symlink("victim.txt", dir.join("r.svg.partial")).unwrap();
    let merged = path(&dir, "m.csv");
    fs::write(&merged, "old").unwrap();
    fs::write(dir.join("m.csv.partial"), "mine").unwrap();
    let shard = path(&dir, "s.csv");
    succeed(&["sweep", "--clients", "5,6", "-q", "--out", &shard]);
    succeed(&["run", "--clients", "10", "-q", "--plot", &plot, "--force"]);
    succeed(&["merge", &shard, "--out", &merged, "--force"]);
    assert!(fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    assert_eq!(fs::read(&merged).unwrap(), fs::read(&shard).unwrap());
    assert_eq!(
        fs::read_to_string(dir.join("victim.txt")).unwrap(),
        "victim"
    );
    assert_eq!(
        fs::read_to_string(dir.join("m.csv.partial")).unwrap(),
        "mine"
    );
    let listed = listing(&dir);
    assert_eq!(
        listed,
        [
            "m.csv",
            "m.csv.partial",
            "r.svg",
            "r.svg.partial",
            "s.csv",
            "victim.txt"
        ]
    );
    // A write that fails (a full disk) leaves the old file and removes its
    // temporary.
    let failed = with_full_disk(
        &["run", "--clients", "10", "-q", "--plot", &plot, "--force"],
        100,
    );
    let err = one_line_error(&failed, "run --plot on a full disk");
    assert!(
        err.contains("cannot write") && err.contains("too large"),
        "{err}"
    );
    assert!(fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    assert_eq!(listing(&dir), listed, "no temporary left");
}

#[test]
fn two_names_of_one_new_file_through_dangling_links_are_refused() {
    let dir = workdir("h1-dangling");
    let x = path(&dir, "x");
    let y = path(&dir, "y");
    std::os::unix::fs::symlink("x", &y).unwrap();
    // A chain, relative to each link's own directory.
    fs::create_dir(dir.join("sub")).unwrap();
    let z = path(&dir, "sub/z");
    std::os::unix::fs::symlink("../y", &z).unwrap();
    for plot in [&y, &z] {
        let err = usage_error(&[
            "run",
            "--resource",
            "server",
            "-q",
            "--series",
            &x,
            "--plot",
            plot,
            "--force",
        ]);
        assert!(err.contains("--plot and --series both name"), "{err}");
    }
    assert!(!Path::new(&x).exists(), "nothing written");
    let err = usage_error(&["compare", "-q", "--csv", &z, "--plot", &x, "--force"]);
    assert!(err.contains("--csv and --plot both name"), "{err}");
}

#[test]
fn a_full_disk_leaves_a_sweep_or_a_journal_cut_at_its_last_whole_line() {
    let dir = workdir("h1-full-disk");
    let whole = path(&dir, "whole.csv");
    let sweep = ["sweep", "--clients", "5,6,7", "-q", "--out"];
    succeed(&[&sweep[..], &[whole.as_str()]].concat());
    let text = fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let kept = lines[0].len() + lines[1].len();
    let out = path(&dir, "out.csv");
    let failed = with_full_disk(
        &[&sweep[..], &[out.as_str()]].concat(),
        (kept + lines[2].len() / 2) as u64,
    );
    let err = one_line_error(&failed, "a sweep on a full disk");
    assert!(err.contains(&out) && err.contains("too large"), "{err}");
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        text[..kept],
        "whole rows"
    );
    succeed(&[&sweep[..], &[out.as_str(), "--resume"]].concat());
    assert_eq!(fs::read_to_string(&out).unwrap(), text);

    // A map's journal. The map's CSV is wider than its journal: a disk one
    // byte short of it takes the whole journal, then refuses the CSV, which
    // leaves the journal to continue (and no temporary).
    let made = path(&dir, "made.csv");
    succeed(&map_args(&["--out", &made]));
    let size = fs::metadata(&made).unwrap().len();
    let map_out = path(&dir, "m.csv");
    let journal = format!("{map_out}.runs");
    let failed = with_full_disk(&map_args(&["--out", &map_out]), size - 1);
    let err = one_line_error(&failed, "a map's CSV on a full disk");
    assert!(err.contains(&map_out) && err.contains("too large"), "{err}");
    let runs = fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = runs.split_inclusive('\n').collect();
    assert!(lines.len() >= 3, "{runs}");
    // Started over on a disk that takes one and a half runs.
    let kept = lines[0].len() + lines[1].len();
    let failed = with_full_disk(
        &map_args(&["--out", &map_out, "--force"]),
        (kept + lines[2].len() / 2) as u64,
    );
    let err = one_line_error(&failed, "a map's journal on a full disk");
    assert!(err.contains(&journal) && err.contains("too large"), "{err}");
    assert_eq!(
        fs::read_to_string(&journal).unwrap(),
        runs[..kept],
        "whole lines"
    );
    succeed(&map_args(&["--out", &map_out, "--resume"]));
    assert_eq!(fs::read(&map_out).unwrap(), fs::read(&made).unwrap());
    assert_eq!(listing(&dir), ["m.csv", "made.csv", "out.csv", "whole.csv"]);
}

#[test]
fn a_map_refuses_a_bad_output_before_any_run() {
    let dir = workdir("h1-map-outputs");
    let folder = path(&dir, "folder");
    fs::create_dir(&folder).unwrap();
    let out = path(&dir, "m.csv");
    for args in [
        map_args(&["--out", &folder]),
        map_args(&["--out", &out, "--svg", &folder]),
    ] {
        let err = usage_error(&args);
        assert!(err.contains("is a directory"), "{err}");
    }
    let looped = path(&dir, "loop1");
    std::os::unix::fs::symlink("loop2", &looped).unwrap();
    std::os::unix::fs::symlink("loop1", dir.join("loop2")).unwrap();
    let err = usage_error(&map_args(&["--out", &looped]));
    assert!(err.contains("loop of symbolic links"), "{err}");
    let err = usage_error(&["sweep", "--clients", "5", "-q", "--out", &looped]);
    assert!(err.contains("loop of symbolic links"), "{err}");
    // No journal was begun, no run made.
    assert_eq!(listing(&dir), ["folder", "loop1", "loop2"]);
}
