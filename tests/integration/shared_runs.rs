//! Commands that several tests run word for word run once per test binary.
//!
//! The README and the guide show the same `assess` command, a long help's
//! examples are the guide's, and the reference pages' generated blocks are
//! console blocks the book test runs too: each test still checks the
//! output, but the simulation behind it (up to 18 CPU-seconds in the test
//! build) runs once, for whichever test asks first; the others wait for it.
//!
//! Only a command whose result can depend on nothing but its words and the
//! repository's inputs is shared: it runs in an empty directory of its own
//! (with links to `scenarios/`, `reference/` and `results/`), with
//! `NO_COLOR` set and `COLUMNS=100`, so a caller's earlier files cannot
//! change it and it can leave none for a caller's later commands.
//! [`shareable`] refuses any other, which then runs where it stands.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What a command printed and its exit code (-1 if a signal ended it).
#[derive(Debug)]
pub struct Ran {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: i32,
}

/// The longest a command may take in the test build; a hung command fails,
/// not hangs (the slowest shown takes about 20 s there).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// The repository inputs a command may read by a relative path.
const INPUTS: [&str; 3] = ["scenarios", "reference", "results"];

/// True if `herdsim words`, run from `dir`, can depend on nothing but its
/// words and [`INPUTS`]: no word names a file other than under those (an
/// output such as `map.csv` included, which a later command might read),
/// and none is an existing entry of `dir`.
pub fn shareable(words: &[&str], dir: &Path) -> bool {
    words.iter().all(|word| {
        let input = INPUTS
            .iter()
            .any(|i| word.strip_prefix(i).is_some_and(|r| r.starts_with('/')));
        input
            || !(names_a_file(word)
                || (!word.starts_with('-') && dir.join(word).symlink_metadata().is_ok()))
    })
}

/// A word that looks like a file name: `x.csv`, `out/x`, `-` (stdin or
/// stdout). Values such as `2.5s`, `0.3`, `lognormal:20ms/0.3` and `1/2`
/// are not; a file named with neither dot nor slash is caught only if it
/// exists.
fn names_a_file(word: &str) -> bool {
    let value = word.rsplit('=').next().unwrap_or(word);
    if value == "-" {
        return true;
    }
    let extension = value.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphabetic())
    });
    // `lognormal:20ms/0.3` and `1/2` are values; `out/a` and `../x` paths.
    let path = value
        .split_once('/')
        .is_some_and(|(first, _)| !first.contains(':'))
        && !value.chars().all(|c| c.is_ascii_digit() || c == '/');
    extension || path
}

/// A shared run's outcome, kept for every test that asks.
type Outcome = Arc<Result<Ran, String>>;

/// `herdsim words` as [`shareable`] allows it, run by the first test that
/// asks and handed to every other. The caller checks `shareable` first.
pub fn run_shared(words: &[&str]) -> Outcome {
    /// Each command's words and its outcome, once it has run.
    type Runs = Mutex<HashMap<Vec<String>, Arc<OnceLock<Outcome>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let key: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let cell = {
        let mut runs = RUNS.get_or_init(Default::default).lock().unwrap();
        runs.entry(key).or_default().clone()
    };
    cell.get_or_init(|| {
        let name: String = words
            .join("-")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(60)
            .collect();
        let dir = super::common::workdir(&format!("shared-{name}-{:016x}", fingerprint(words)));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for input in INPUTS {
            std::os::unix::fs::symlink(root.join(input), dir.join(input)).unwrap();
        }
        let mut command = Command::new(env!("CARGO_BIN_EXE_herdsim"));
        command.args(words).current_dir(&dir);
        let ran = run_with_timeout(&mut command, &words.join(" "));
        let _ = std::fs::remove_dir_all(&dir);
        Arc::new(ran)
    })
    .clone()
}

/// A stable hash of `words`, keeping scratch directories apart.
fn fingerprint(words: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    words.hash(&mut hasher);
    hasher.finish()
}

/// Runs `command` with `NO_COLOR` set and `COLUMNS=100`, no input, its
/// output captured; an error if it cannot start or runs past
/// [`COMMAND_TIMEOUT`] (then it is killed). `shown` names it in messages.
pub fn run_with_timeout(command: &mut Command, shown: &str) -> Result<Ran, String> {
    let mut child = command
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("`{shown}`: cannot start: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`{shown}` ran past {COMMAND_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Ran {
        stdout: out_reader.join().expect("reader"),
        stderr: err_reader.join().expect("reader"),
        code: status.code().unwrap_or(-1),
    })
}

#[test]
fn only_commands_of_their_words_and_the_inputs_are_shared() {
    let dir = super::common::workdir("shared-runs-rule");
    std::fs::write(dir.join("sweep"), "").unwrap();
    let ok = |line: &str| shareable(&line.split_whitespace().collect::<Vec<_>>(), &dir);
    assert!(ok(
        "assess scenarios/sre-service.toml --blip 2.5s --rate 0.3 -q"
    ));
    assert!(ok(
        "run --service lognormal:20ms/0.3 --trigger outage@2s..2.1s --shard 1/2"
    ));
    assert!(ok("exact --chain metafor --json"));
    for line in [
        "map scenarios/metastable-map.toml --out rare.csv",
        "plot ms.csv",
        "run --series=server.csv",
        "merge out/a b",
        "import -",
        "run --import ../secret/file-1",
        // A file the caller made, named without an extension.
        "plot sweep",
        "run scenarios-old/x.toml",
    ] {
        assert!(!ok(line), "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
