//! Layered services as a user runs them: `--depth` and the `layer_*`
//! flags, the per-service table and JSON, sweeps over depth, and bad input.

use std::fs;

use crate::common::{mean, server_json, succeed, sweep_shards_and_resumes, usage_error, workdir};

use assert_cmd::cargo::cargo_bin_cmd;

/// The flags of a full outage behind chains of `depth` services (a list
/// in a sweep), `attempts` at every caller, retries at once, nothing timing
/// out: 500 requests a second for 1 s, 2 seeds.
fn full_outage_args<'a>(depth: &'a str, attempts: &'a str) -> Vec<&'a str> {
    vec![
        "--depth",
        depth,
        "--fail-rate",
        "1",
        "--workers",
        "inf",
        "--policy",
        "no-backoff",
        "--max-attempts",
        attempts,
        "--rate",
        "500",
        "--duration",
        "1s",
        "--seeds",
        "2",
    ]
}

/// A run of [`full_outage_args`] and `extra`, as JSON.
fn full_outage(depth: &str, attempts: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = full_outage_args(depth, attempts);
    args.extend(extra);
    server_json(&args)
}

/// The rows of the CSV text `text` as the values of its columns `names`.
fn csv_columns(text: &str, names: &[&str]) -> Vec<Vec<String>> {
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let columns: Vec<usize> = names
        .iter()
        .map(|name| header.iter().position(|h| h == *name).expect(name))
        .collect();
    rows.records()
        .map(|r| {
            let r = r.unwrap();
            columns.iter().map(|&c| r[c].to_string()).collect()
        })
        .collect()
}

#[test]
fn a_chain_reports_each_service_and_the_sre_books_64() {
    let json = full_outage("3", "4", &[]);
    // Exact in a full outage: every caller makes every attempt.
    assert_eq!(mean(&json, "server_amplification"), 64.0);
    assert_eq!(mean(&json, "amplification"), 4.0);
    let services = json["services"].as_array().unwrap();
    assert_eq!(services.len(), 3);
    for (i, per_request) in [4.0, 16.0, 64.0].into_iter().enumerate() {
        assert_eq!(services[i]["amplification"]["mean"], per_request);
        assert_eq!(services[i]["success_rate"]["mean"], 0.0);
    }
    // Retrying only above the failing service: its 4 attempts alone.
    let adjacent = full_outage("3", "4", &["--retry-scope", "adjacent"]);
    assert_eq!(mean(&adjacent, "server_amplification"), 4.0);
    // A 10% budget at every caller: at most 1.1 attempts a call each.
    let budget = full_outage("3", "4", &["--budget", "ratio:0.1,min:0"]);
    let server = mean(&budget, "server_amplification");
    assert!(server > 1.2 && server <= 1.1f64.powi(3), "{server}");
    // The server alone has no per-service section.
    let alone = full_outage("1", "4", &[]);
    assert!(alone.get("services").is_none());
    assert_eq!(mean(&alone, "server_amplification"), 4.0);
}

#[test]
fn layer_tables_in_a_scenario_give_each_service_its_own_attempts() {
    // Users 4 attempts, service 1's calls 2, service 2's 3: 24 per request
    // at the server in a full outage, as `--layer-specs` says it too.
    let dir = workdir("chain-layers");
    let scenario = dir.join("chain.toml");
    let out = dir.join("chain.csv");
    fs::write(
        &scenario,
        "resource = \"server\"\nrate = 500\nduration = \"1s\"\nworkers = \"inf\"\n\
         fail_rate = 1\npolicy = \"no-backoff\"\nmax_attempts = 4\ndepth = 3\n\
         [[layer]]\nmax_attempts = 2\n[[layer]]\nmax_attempts = 3\nworkers = 1\n",
    )
    .unwrap();
    succeed(cargo_bin_cmd!("herdsim").args([
        "sweep",
        scenario.to_str().unwrap(),
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]));
    let text = fs::read_to_string(&out).unwrap();
    let columns = csv_columns(&text, &["layer_specs", "server_amplification_mean"]);
    assert_eq!(columns, [["max_attempts=2+workers=1,max_attempts=3", "24"]]);
    let flags = full_outage(
        "3",
        "4",
        &["--layer-specs", "max_attempts=2+max_attempts=3,workers=1"],
    );
    assert_eq!(mean(&flags, "server_amplification"), 24.0);
}

#[test]
fn the_human_report_has_a_row_per_service() {
    let out = succeed(cargo_bin_cmd!("herdsim").args([
        "run",
        "--resource",
        "server",
        "--depth",
        "2",
        "--layer-workers",
        "8",
        "--layer-service",
        "const:1ms",
        "--timeout",
        "50ms",
        "--layer-timeout-ratio",
        "0.5",
        "--max-attempts",
        "2",
        "--policy",
        "no-backoff",
        "-q",
    ]));
    assert!(
        out.contains("1 service above it, each of 8 workers doing const:1ms"),
        "{out}"
    );
    assert!(out.contains("each service of the chain"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("service "))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(rows[2].starts_with("2 (server)"), "{out}");
}

#[test]
fn a_sweep_over_depth_has_one_row_per_point() {
    // Sharded and merged, or cut after two rows and resumed, the
    // per-service columns give the same bytes as the rest do.
    let mut args = vec!["--resource", "server"];
    args.extend(full_outage_args("1,2,3", "3"));
    let whole = sweep_shards_and_resumes("chain-sweep", &args, 2);
    let got = csv_columns(
        &whole,
        &[
            "depth",
            "server_amplification_mean",
            "service1_amplification_mean",
            "service2_amplification_mean",
            "service3_amplification_mean",
            "service3_success_rate_mean",
        ],
    );
    // Each service's columns beside the server's, empty past a point's
    // chain (and at depth 1, whose figures are the server's own columns).
    assert_eq!(
        got,
        [
            ["1", "3", "", "", "", ""],
            ["2", "9", "3", "9", "", ""],
            ["3", "27", "3", "9", "27", "0"],
        ]
    );
}

#[test]
fn each_upper_service_may_have_its_own_policy_and_controls() {
    // Service 2's own breaker ends its calls at their first failure: 4 × 4
    // × 1 server attempts per user request in a full outage, not 64. Its
    // rule's own comma needs no quoting among the settings.
    let json = full_outage(
        "3",
        "4",
        &[
            "--layer-specs",
            "+breaker=cumulative:0,policy=constant,base=10ms,budget=ratio:0.5,min:1",
        ],
    );
    assert_eq!(mean(&json, "server_amplification"), 16.0);
    let services = json["services"].as_array().unwrap();
    assert_eq!(services[1]["amplification"]["mean"], 16.0);
}

#[test]
fn bad_chain_input_names_the_parameters() {
    for (args, says) in [
        (vec!["--depth", "0"], vec!["--depth", "1 to 10"]),
        (vec!["--depth", "11"], vec!["--depth", "1 to 10"]),
        (
            vec!["--layer-timeout-ratio", "0"],
            vec!["--layer-timeout-ratio", "0.01 to 100"],
        ),
        (
            vec!["--layer-workers", "0"],
            vec!["--layer-workers", "1 to"],
        ),
        (
            vec!["--layer-max-attempts", "0"],
            vec!["--layer-max-attempts", "1 to"],
        ),
        (
            vec!["--retry-scope", "some"],
            vec!["--retry-scope", "every"],
        ),
        (
            vec!["--depth", "3", "--layer-specs", "max_attempts=2"],
            vec!["--layer-specs", "depth", "2 at this depth"],
        ),
        (
            vec!["--depth", "2", "--layer-specs", "retries=2"],
            vec![
                "--layer-specs",
                "unknown key 'retries'",
                "max_attempts, policy",
            ],
        ),
        (
            vec!["--depth", "2", "--layer-specs", "policy=slow"],
            vec!["--layer-specs", "policy:", "decorrelated"],
        ),
        (
            vec!["--depth", "2", "--layer-specs", "budget=cumulative:0.1"],
            vec!["--layer-specs", "budget:"],
        ),
        (
            vec!["--depth", "2", "--layer-specs", "cap=0ms"],
            vec!["--layer-specs", "cap:"],
        ),
        (
            vec!["--depth", "3", "--layer-specs", "+policy=no-backoff"],
            vec!["--layer-specs", "service 2", "no-backoff", "max_attempts"],
        ),
        (
            vec!["--depth", "2", "--timeout-choices", "100ms/200ms"],
            vec!["timeout-choices", "depth"],
        ),
        (
            vec![
                "--depth",
                "2",
                "--timeout",
                "1s",
                "--deadline-propagation",
                "call",
            ],
            vec!["deadline-propagation", "depth"],
        ),
    ] {
        let mut full = vec!["run", "--resource", "server"];
        full.extend(&args);
        let err = usage_error(&full);
        for s in says {
            assert!(err.contains(s), "{args:?}: {err}");
        }
    }
}
