//! The outage-episode and AWS OCC models against their published figures, and
//! the arrival patterns, outage windows and stop rules, as a user runs them.

use crate::common::usage_error;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::base::seeding::Seeds;
use herdsim::base::time::Micros;
use herdsim::experiment::scenario::Scenario;
use herdsim::experiment::sweep::{MetricColumns, SweepPlan, SweepRow, run_sweep};
use herdsim::measure::observer::Observer;
use herdsim::report::csv as sweep_csv;
use herdsim::sim::engine::simulate_observed;
use herdsim::study::published::Published;
use herdsim::{PolicyKind, RunSpec};

fn scenario(name: &str) -> Scenario {
    let file = format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    Scenario::from_toml(&file, &std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// Every point of `scenario`, summarised, in grid order.
fn sweep(scenario: &Scenario) -> Vec<SweepRow> {
    let plan = SweepPlan {
        scenario,
        points: 0..scenario.grid.len(),
        per_run: false,
        rows_done: 0,
        max_events: u64::MAX,
    };
    let mut rows = Vec::new();
    run_sweep(
        &plan,
        || {},
        |row| {
            rows.push(row);
            Ok::<_, ()>(())
        },
    )
    .unwrap();
    rows
}

/// Checks every published figure that applies to the sweep's points: the
/// distance from herdsim's mean to the figure's range must be at most
/// `margin` standard errors of the difference. Returns how many were checked.
fn check(rows: &[SweepRow], metrics: &[&str], margin: f64) -> usize {
    let published = Published::embedded();
    let mut checked = 0;
    for row in rows {
        let SweepRow::Point {
            spec, summaries, ..
        } = row
        else {
            unreachable!()
        };
        for (metric, s) in summaries
            .iter()
            .filter(|(m, _)| metrics.contains(&m.name()))
        {
            let Some(figure) = published.figure(spec, *metric) else {
                continue;
            };
            let sd = s.sd.unwrap();
            let runs = f64::from(figure.runs.unwrap());
            let se_difference = (sd * sd / s.n as f64 + sd * sd / runs).sqrt();
            let (low, high) = figure.range;
            let gap = (low - s.mean).max(s.mean - high).max(0.0);
            assert!(
                gap <= margin * se_difference,
                "{} {} clients={}: herdsim {:.4} vs published {} ({:.1} SE)",
                spec.policy.kind,
                metric.name(),
                spec.clients,
                s.mean,
                figure.shown,
                gap / se_difference
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_outage_model_reproduces_policybooks_figures() {
    // Each published figure is one run of 1,000 episodes; herdsim's mean is
    // over 100. The difference's SE is √(sd²/100 + sd²/1), herdsim's sd standing
    // for the published run's. Three SEs: a figure from the same model falls
    // outside with chance 0.3%; a model error (another deadline rule, the rolls
    // drawn from the policy's stream) moves these by many.
    let rows = sweep(&scenario("outage-30s"));
    assert_eq!(check(&rows, &["peak_retry_share", "success_rate"], 3.0), 8);
}

#[test]
fn the_occ_model_reproduces_the_aws_simulators_means() {
    // Each reference figure is a mean of 100 runs, truncated; herdsim's is a
    // mean of 100 more. Four SEs of the difference per figure: with 190 figures
    // a margin of 3 would fail one in two identical models by chance, 4 one in
    // a hundred; the largest herdsim sees is 3.1.
    let rows = sweep(&scenario("aws-occ"));
    assert_eq!(check(&rows, &["calls", "last_success_ms"], 4.0), 190);
}

#[test]
fn the_occ_model_reproduces_backoff_simulators_defaults() {
    // backoff-simulator's three servers (a lock, write-only and read-write
    // OCC, writes |N(2 ms, 1 ms)|), four backoffs and 20 client counts, each
    // figure a mean of 100 of its runs beside 100 of herdsim's. Four SEs of
    // the difference, as above: with 480 figures a margin of 3 would fail
    // about one identical model in four by chance; the largest here is 3.1.
    let rows = sweep(&scenario("backoff-simulator"));
    assert_eq!(check(&rows, &["calls", "last_success_ms"], 4.0), 480);
}

#[test]
fn backoff_simulators_servers_conflict_as_their_rules_say() {
    use herdsim::model::occ::{OccDone, OccServer};
    let run = |server: OccServer, write: &str, done: OccDone, clients: u32| {
        let mut spec = RunSpec::seed_002(PolicyKind::Constant, clients);
        spec.resource = herdsim::model::ResourceKind::Occ;
        spec.policy.base_us = Micros::from_us(500);
        spec.occ.server = server;
        spec.occ.write_time = write.parse().unwrap();
        spec.occ.done = done;
        let mut calls = Calls::default();
        simulate_observed(&spec, Seeds::for_job(7, 0, 0), &mut calls)
    };
    // Instant writes never meet another under a lock or a write-only
    // server: every client's first write commits.
    for server in [OccServer::Locking, OccServer::WriteOnly] {
        assert_eq!(run(server, "const:0", OccDone::Commit, 200).calls, 200);
    }
    // Under a lock held 1 s, the second of two clients is refused until the
    // first's write ends, so it calls again and commits after 1 s.
    let held = run(OccServer::Locking, "const:1s", OccDone::Commit, 2);
    assert!(
        held.calls > 2 && held.last_success_us >= Micros::from_s(1),
        "{held:?}"
    );
    // Done at the reply, a client finishes one hop (~10 ms) after its
    // commit.
    let at_reply = run(OccServer::WriteOnly, "const:0", OccDone::Reply, 1);
    let at_commit = run(OccServer::WriteOnly, "const:0", OccDone::Commit, 1);
    let hop = at_reply.last_success_us - at_commit.last_success_us;
    assert!((2_000..20_000).contains(&hop.ticks()), "{hop:?} us");
}

/// Records the time of every call and of every success.
#[derive(Default)]
struct Calls {
    first: Vec<(u32, Micros)>,
    served: Vec<Micros>,
    all: Vec<Micros>,
}

impl Observer for Calls {
    fn call(&mut self, time: Micros, client: u32, attempt: u32, served: bool) {
        if attempt == 0 {
            self.first.push((client, time));
        }
        if served {
            self.served.push(time);
        }
        self.all.push(time);
    }
}

#[test]
fn every_policy_meets_the_same_arrivals() {
    // The environment's stream depends on the replicate, not the policy.
    let mut firsts = Vec::new();
    for kind in [PolicyKind::Full, PolicyKind::Decorrelated] {
        let mut spec = RunSpec::seed_002(kind, 300);
        spec.arrivals = "uniform:2s".parse().unwrap();
        let mut calls = Calls::default();
        simulate_observed(&spec, Seeds::for_job(1, kind as u64, 3), &mut calls);
        calls.first.sort();
        assert!(calls.first.iter().all(|&(_, t)| t <= Micros::from_s(2)));
        firsts.push(calls.first);
    }
    assert_eq!(firsts[0], firsts[1]);
}

#[test]
fn nothing_succeeds_while_the_slot_is_down() {
    let mut spec = RunSpec::seed_002(PolicyKind::Full, 500);
    spec.down = Some((Micros::from_ms(50), Micros::from_s(2)));
    let mut calls = Calls::default();
    let m = simulate_observed(&spec, Seeds::for_job(2, 0, 0), &mut calls);
    assert!(
        calls
            .all
            .iter()
            .any(|t| (50_000..2_000_000).contains(&t.ticks())),
        "calls were made while down"
    );
    assert!(
        calls
            .served
            .iter()
            .all(|t| !(50_000..2_000_000).contains(&t.ticks()))
    );
    assert_eq!(m.successes, 500);
}

#[test]
fn stop_rules_end_clients_and_count_them() {
    let mut spec = RunSpec::seed_002(PolicyKind::None, 1_000);
    spec.max_attempts = Some(3);
    let mut calls = Calls::default();
    let m = simulate_observed(&spec, Seeds::for_job(3, 0, 0), &mut calls);
    // Without jitter each wave serves one client: three waves, three successes.
    assert_eq!(
        (m.successes, m.gave_up, m.calls),
        (3, 997, 1_000 + 999 + 998)
    );
    let mut deadline = RunSpec::seed_002(PolicyKind::None, 1_000);
    deadline.deadline_us = Some(Micros::from_s(1));
    let m = simulate_observed(&deadline, Seeds::for_job(3, 0, 0), &mut Calls::default());
    // Retries at 0.1, 0.3, 0.7 s are in time; the next (1.5 s) is not.
    assert_eq!((m.successes, m.gave_up), (4, 996));
}

#[test]
fn the_cli_runs_every_model_and_rejects_bad_values() {
    for args in [
        &[
            "--resource",
            "outage",
            "--max-attempts",
            "8",
            "--deadline",
            "60s",
            "--cap",
            "10s",
        ][..],
        &[
            "--resource",
            "occ",
            "--policy",
            "no-backoff",
            "--clients",
            "50",
            "--base",
            "5ms",
        ][..],
        &["--arrivals", "poisson:0.5", "--down", "1s..3s"][..],
    ] {
        let out = cargo_bin_cmd!("herdsim")
            .arg("run")
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["metrics"]["success_rate"]["mean"].as_f64().unwrap() > 0.0);
    }
    for (args, flag, says) in [
        (&["--down", "10s..5s"][..], "--down", "from before to"),
        (&["--arrivals", "poisson:-1"][..], "--arrivals", "above 0"),
        (&["--arrivals", "storm"][..], "--arrivals", "herd, uniform"),
        (&["--deadline", "0"][..], "--deadline", "at least 1us"),
        (&["--max-attempts", "0"][..], "--max-attempts", "from 1"),
        (
            &["--resource", "cloud"][..],
            "--resource",
            "slot, outage, occ",
        ),
        (&["--policy", "no-backoff"][..], "policy", "max_attempts"),
        (
            &["--resource", "occ", "--down", "1s..2s"][..],
            "down",
            "slot resource only",
        ),
    ] {
        let err = usage_error(&[&["run"][..], args].concat());
        assert!(err.contains(flag) && err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn compare_sets_the_outage_figures_beside_the_model() {
    let file = format!("{}/scenarios/outage-30s.toml", env!("CARGO_MANIFEST_DIR"));
    let out = cargo_bin_cmd!("herdsim")
        .args(["compare", &file, "--seeds", "20", "--quiet"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("peak retry share") && text.contains("success rate"),
        "{text}"
    );
    assert!(
        text.contains("0.0106") && text.contains("0.15083"),
        "{text}"
    );
    assert!(
        sweep_csv::header(false, MetricColumns::Herd).contains(&"success_rate_mean".to_string())
    );
}

#[test]
fn compare_sets_no_figure_beside_another_workload() {
    // The outage figures were measured with 8 attempts and a 60 s deadline:
    // with 50 attempts and 10 minutes, they say nothing of the run.
    let file = format!("{}/scenarios/outage-30s.toml", env!("CARGO_MANIFEST_DIR"));
    let compare = |extra: &[&str]| {
        let out = cargo_bin_cmd!("herdsim")
            .args(["compare", &file, "--seeds", "3", "--quiet"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let same = compare(&[]);
    assert!(
        same.contains("0.0106") && same.contains("verdict"),
        "{same}"
    );
    for extra in [
        &["--max-attempts", "50", "--deadline", "10m"][..],
        &["--max-attempts", "9"][..],
        &["--window", "1ms"][..],
    ] {
        let other = compare(extra);
        assert!(
            !other.contains("0.0106") && !other.contains("verdict"),
            "{extra:?}: {other}"
        );
        assert!(
            other.contains("No published figure for this workload"),
            "{other}"
        );
    }
}

#[test]
fn a_watched_run_stops_at_its_event_limit_and_says_so() {
    use herdsim::measure::observer::{PROGRESS_EVERY, Watch};
    // No jitter, 3,000 clients: 4,501,500 calls in all.
    let spec = RunSpec::seed_002(PolicyKind::None, 3_000);
    let seen = std::sync::Mutex::new(Vec::new());
    let on_progress = |time: Micros, calls: u64| seen.lock().unwrap().push((time, calls));
    let mut watch = Watch {
        max_events: 2_000_000,
        on_progress: &on_progress,
        window_latencies: false,
    };
    let m = simulate_observed(&spec, Seeds::for_job(1, 0, 0), &mut watch);
    assert!(!m.complete);
    assert_eq!(
        m.calls,
        2 * PROGRESS_EVERY,
        "stops at the first check past the limit"
    );
    assert!(m.successes + m.gave_up < 3_000);
    let seen = seen.into_inner().unwrap();
    assert_eq!(
        seen.iter().map(|s| s.1).collect::<Vec<_>>(),
        [PROGRESS_EVERY, 2 * PROGRESS_EVERY]
    );
    assert!(seen[0].0 <= seen[1].0, "simulated time moves forward");

    let mut unlimited = Watch::UNLIMITED;
    let full = simulate_observed(&spec, Seeds::for_job(1, 0, 0), &mut unlimited);
    assert!(full.complete);
    assert_eq!(full.calls, 3_000 * 3_001 / 2);

    let out = cargo_bin_cmd!("herdsim")
        .args([
            "run",
            "--policy",
            "none",
            "--clients",
            "3000",
            "--max-events",
            "1000000",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--max-events 1,000,000 after 1,048,576 calls"),
        "{err}"
    );
}
