//! `herdsim exact --chain metafor`: metafor's reference table run through
//! the binary as a researcher would, its refusals, and its determinism.

use std::collections::HashMap;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::exact::metafor_columns::meets_metafor;

use crate::common::{succeed, usage_error};

/// metafor's own figures for 20 cells, from running its code
/// (../shared/reference/metafor-ctmc.csv, copied to reference/).
fn reference() -> (Vec<String>, Vec<HashMap<String, String>>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/reference/metafor-ctmc.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|line| {
            header
                .iter()
                .cloned()
                .zip(line.split(',').map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

/// The command line of one cell: each setting of the table by its flag,
/// durations with their unit.
fn cell_args(row: &HashMap<String, String>) -> Vec<String> {
    let mut args: Vec<String> = vec!["exact".into(), "--chain".into(), "metafor".into()];
    for (flag, column, unit) in [
        ("--arrival-rate", "lambda_rps", ""),
        ("--service-rate", "mu_rps", ""),
        ("--timeout", "timeout_s", "s"),
        ("--retries", "retries", ""),
        ("--queue-size", "qsize", ""),
        ("--orbit-size", "orbit", ""),
        ("--threads", "threads", ""),
        ("--alpha", "alpha", ""),
        ("--fault-rate", "fault_lambda_rps", ""),
        ("--fault-start", "fault_start_s", "s"),
        ("--fault-length", "fault_duration_s", "s"),
    ] {
        args.push(flag.into());
        args.push(format!("{}{unit}", row[column]));
    }
    if row["retry_when_full"] != "0" {
        args.push("--retry-when-full".into());
    }
    args
}

#[test]
fn the_binary_gives_metafors_figures_for_every_reference_cell() {
    let (header, rows) = reference();
    assert_eq!(rows.len(), 20);
    // Two cores: the cells run two at a time.
    let outputs: Vec<String> = std::thread::scope(|scope| {
        let halves: Vec<_> = rows
            .chunks(10)
            .map(|half| {
                scope.spawn(move || {
                    half.iter()
                        .map(|row| {
                            succeed(
                                cargo_bin_cmd!("herdsim")
                                    .env("RAYON_NUM_THREADS", "1")
                                    .args(cell_args(row))
                                    .arg("--json"),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut misses = Vec::new();
    let mut checked = 0;
    for (row, out) in rows.iter().zip(&outputs) {
        let json: serde_json::Map<String, serde_json::Value> = serde_json::from_str(out).unwrap();
        // Every column of the table, in its order, but its second solver
        // for λ₂ (herdsim has one).
        let mut sorted: Vec<&str> = json.keys().map(String::as_str).collect();
        let mut want: Vec<&str> = header
            .iter()
            .map(String::as_str)
            .filter(|h| *h != "lambda2_sparse_check_per_s")
            .collect();
        sorted.sort_unstable();
        want.sort_unstable();
        assert_eq!(sorted, want);
        // In the table's order (serde's map sorts them: read the text).
        let places: Vec<usize> = header
            .iter()
            .filter_map(|h| out.find(&format!("\"{h}\":")))
            .collect();
        assert!(places.is_sorted(), "{out}");
        let cell = format!(
            "λ {} τ {} R {}",
            row["lambda_rps"], row["timeout_s"], row["retries"]
        );
        for (name, value) in &json {
            let table: f64 = row[name].parse().unwrap();
            if name == "retry_when_full" {
                assert_eq!(value.as_bool().unwrap(), table != 0.0, "{cell}");
                continue;
            }
            let got = value.as_f64().unwrap();
            if settings().contains(&name.as_str()) {
                // The settings come back as given.
                assert_eq!(got, table, "{cell}: {name}");
                continue;
            }
            checked += 1;
            if !meets_metafor(name, got, table) {
                misses.push(format!("{cell}: {name} {got} vs metafor's {table}"));
            }
        }
    }
    // 27 figure columns in each of the 20 cells.
    assert_eq!(checked, 20 * 27);
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// The table's columns that set a cell up.
fn settings() -> [&'static str; 12] {
    [
        "lambda_rps",
        "mu_rps",
        "timeout_s",
        "retries",
        "qsize",
        "orbit",
        "threads",
        "alpha",
        "n_states",
        "fault_lambda_rps",
        "fault_start_s",
        "fault_duration_s",
    ]
}

/// A small chain, fast in the test build.
const SMALL: [&str; 8] = [
    "--queue-size",
    "30",
    "--orbit-size",
    "5",
    "--fault-start",
    "20s",
    "--fault-length",
    "10s",
];

#[test]
fn the_metafor_chain_says_what_it_ran_and_is_the_same_at_any_thread_count() {
    let out = |threads: &str| {
        succeed(
            cargo_bin_cmd!("herdsim")
                .env("RAYON_NUM_THREADS", threads)
                .args(["exact", "--chain", "metafor", "--arrival-rate", "8"])
                .args(SMALL),
        )
    };
    let one = out("1");
    assert_eq!(one, out("2"));
    let said = [
        "arrivals 8/s on 1 thread at 10/s each",
        "q = 0 to 29 jobs at the server, o = 0 to 4 pending retries: 150 states",
        "timeout τ 9 s",
        "α = 0.25",
        "R = 3",
        "full queue: arrivals and retries lost",
        "fault: from empty, 20 s at 8/s, then 10 s at 20/s",
    ];
    let figures = one.find("Stationary").expect("the figures");
    for words in said {
        let at = one.find(words).unwrap_or_else(|| panic!("{words}: {one}"));
        assert!(at < figures, "{words}: {one}");
    }
    // metafor's regions at N = 30: low q < 3, high q ≥ 27.
    for words in ["P(q < 3), low", "P(q ≥ 27), high", "(27, 0) → q < 3"] {
        assert!(one.contains(words), "{words}: {one}");
    }
}

#[test]
fn retry_when_full_is_metafors_other_chain() {
    let json = |extra: &[&str]| -> serde_json::Value {
        serde_json::from_str(&succeed(
            cargo_bin_cmd!("herdsim")
                .args(["exact", "--chain", "metafor", "--arrival-rate", "9.5"])
                .args(SMALL)
                .args(extra)
                .arg("--json"),
        ))
        .unwrap()
    };
    let (lost, kept) = (json(&[]), json(&["--retry-when-full"]));
    assert_eq!(lost["retry_when_full"], false);
    assert_eq!(kept["retry_when_full"], true);
    // A full queue that still feeds the orbit keeps more retries pending.
    let orbit = |j: &serde_json::Value| j["mean_orbit_jobs"].as_f64().unwrap();
    assert!(
        orbit(&kept) > orbit(&lost),
        "{} {}",
        orbit(&kept),
        orbit(&lost)
    );
}

#[test]
fn the_metafor_chain_refuses_by_flag_name() {
    let metafor = |extra: &[&str]| {
        let mut args = vec!["exact", "--chain", "metafor"];
        args.extend(extra);
        usage_error(&args)
    };
    for (extra, named) in [
        (&["--queue-size", "5"][..], "--queue-size"),
        (&["--orbit-size", "0"][..], "--orbit-size"),
        (&["--threads", "0"][..], "--threads"),
        (&["--retries", "-1"][..], "--retries"),
        (&["--alpha", "-0.5"][..], "--alpha"),
        (&["--alpha", "nan"][..], "--alpha"),
        (&["--arrival-rate", "0"][..], "--arrival-rate"),
        (&["--service-rate", "inf"][..], "--service-rate"),
        (&["--fault-rate", "-1"][..], "--fault-rate"),
        (&["--fault-start", "-1s"][..], "--fault-start"),
        (&["--fault-length", "2parsecs"][..], "--fault-length"),
        (&["--timeout", "none"][..], "--timeout"),
        (&["--timeout", "5s,9s"][..], "--timeout"),
        // The server chain's settings.
        (&["--rate", "5"][..], "--rate"),
        (&["--workers", "2"][..], "--workers"),
        (&["--high", "9"][..], "--high"),
        (&["--orbit-cap", "9"][..], "--orbit-cap"),
        (&["scenarios/exact-small.toml"][..], "exact-small.toml"),
        // Too large, before any work: states (--max-states), the solves'
        // memory (200,000 states of a band 4 × 10,000 wide: 64 GB), the
        // fault's transient (a year at ~40 events/s on 2,000 states).
        (&["--orbit-size", "2001"][..], "--max-states"),
        (&["--queue-size", "10000"][..], "--queue-size"),
        (&["--fault-start", "8760h"][..], "--fault-start"),
    ] {
        let err = metafor(extra);
        assert!(err.contains(named), "{extra:?}: {err}");
    }
    // metafor's flags off its chain.
    let err = usage_error(&["exact", "--arrival-rate", "5"]);
    assert!(
        err.contains("--arrival-rate") && err.contains("--chain metafor"),
        "{err}"
    );
    let err = usage_error(&["exact", "--retry-when-full"]);
    assert!(err.contains("--retry-when-full"), "{err}");
}
