//! herdsim's Python extension, `herdsim._herdsim`: the simulator's own
//! commands run in-process with the GIL released (so a figure from Python
//! is the command line's, byte for byte), and the parameter registry the
//! Python layer (`herdsim/__init__.py`) makes its keyword arguments, its
//! errors and its type stubs from.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use herdsim::spec::params::{PARAMS, param};

/// How often a waiting call looks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// `herdsim ARGS`, as `herdsim::cli::call` reads it.
fn command_line(args: Vec<String>) -> Vec<String> {
    std::iter::once("herdsim".to_string()).chain(args).collect()
}

/// How long a Ctrl-C waits for the interrupted command to stop.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// What a call gave: exit code, standard output, error line, warnings.
type CallResult = (u8, String, Option<String>, Vec<String>);

/// Runs `herdsim ARGS` in this process on a thread of its own, the GIL
/// released: its exit code (0, 1 for a run or write that failed, 2 for bad
/// input), what it wrote to standard output, its one-line error (None if
/// it succeeded) and its warnings. The caller's thread wakes every 50 ms
/// to hand `progress` the runs done and their total when they change, and
/// to look for a signal: Ctrl-C (or an exception `progress` raises) asks
/// the command to stop and is raised. A sweep, map or tune stops at its
/// next row, every row before it kept, and is waited for (up to two
/// seconds); other commands finish their work on their thread, and it is
/// dropped.
#[pyfunction]
#[pyo3(signature = (args, progress=None))]
fn call(py: Python<'_>, args: Vec<String>, progress: Option<Py<PyAny>>) -> PyResult<CallResult> {
    // The commands that stop at their next row when interrupted: worth
    // waiting for, so that their file is left whole for --resume.
    let stops = matches!(
        args.first().map(String::as_str),
        Some("sweep" | "map" | "tune")
    );
    let argv = command_line(args);
    let (send, receive) = mpsc::channel();
    std::thread::Builder::new()
        .name("herdsim".to_string())
        .spawn(move || {
            let _ = send.send(herdsim::cli::call(&argv));
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start herdsim's thread: {e}")))?;
    let mut receive = receive;
    let mut told = None;
    loop {
        // The receiver goes to the GIL-free wait and comes back (it may be
        // moved between threads, not shared).
        let (got, back) = py.detach(move || (receive.recv_timeout(SIGNAL_CHECK), receive));
        receive = back;
        match got {
            Ok(c) => return Ok((c.code, c.stdout, c.error, c.warnings)),
            Err(RecvTimeoutError::Timeout) => {
                // A signal, or an exception from `progress` (Ctrl-C may
                // land while it runs), stops the command.
                let looked = py.check_signals().and_then(|()| {
                    let now = herdsim::cli::call_progress();
                    if let (Some(tell), Some((done, total))) = (&progress, now)
                        && now != told
                    {
                        tell.call1(py, (done, total))?;
                        told = now;
                    }
                    Ok(())
                });
                if let Err(raised) = looked {
                    herdsim::cli::interrupt();
                    if stops {
                        let _ = py.detach(move || receive.recv_timeout(INTERRUPT_GRACE));
                    }
                    return Err(raised);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "herdsim's thread ended without a result (a bug: please report it)",
                ));
            }
        }
    }
}

/// The benchmark's reference (`python/benches/overhead.py`): runs
/// `herdsim ARGS` `repeats` times on this thread, the GIL released, as the
/// library alone does it, and returns each call's wall time in seconds, so
/// that what a Python function adds over the work itself can be measured.
#[pyfunction]
fn time_call(py: Python<'_>, args: Vec<String>, repeats: usize) -> PyResult<Vec<f64>> {
    let argv = command_line(args);
    py.detach(|| {
        let mut times = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let started = std::time::Instant::now();
            let called = herdsim::cli::call(&argv);
            times.push(started.elapsed().as_secs_f64());
            if called.code != 0 {
                return Err(called.error.unwrap_or_default());
            }
        }
        Ok(times)
    })
    .map_err(PyValueError::new_err)
}

/// A parameter as Python reads it: (key, kind, group heading, what it is,
/// what it accepts, its default as text, the separator of a list of values,
/// its choices where it takes one of a few).
type ParamRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    String,
    char,
    Vec<&'static str>,
);

/// Every parameter of the registry, in its order.
#[pyfunction]
fn params() -> Vec<ParamRow> {
    PARAMS
        .iter()
        .map(|p| {
            (
                p.key,
                p.kind.expected(),
                p.group.heading(),
                p.doc,
                p.accepts,
                p.default_text(),
                p.list_separator,
                p.choices.map(|choices| choices()).unwrap_or_default(),
            )
        })
        .collect()
}

/// Checks `value` as parameter `key` reads it: a `ValueError` naming the
/// key and what it accepts, from the registry the command line's errors
/// come from, if it does not read.
#[pyfunction]
fn check(key: &str, value: &str) -> PyResult<()> {
    let Some(p) = param(key) else {
        let keys: Vec<&str> = PARAMS.iter().map(|p| p.key).collect();
        return Err(PyValueError::new_err(format!(
            "unknown parameter '{key}': expected a scenario key, one of {}",
            keys.join(", ")
        )));
    };
    p.check(value)
        .map_err(|e| PyValueError::new_err(format!("{key}: {e}")))
}

#[pymodule]
fn _herdsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(params, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(time_call, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
