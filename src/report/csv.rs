//! Sweep output as tidy CSV: one header, one row per point (or per run),
//! snake_case columns with units in their names, every parameter in every row.
//!
//! Numbers are written in Rust's shortest round-trip form, so the same values
//! give the same bytes on every machine; a missing value (the sd of a single
//! replicate) is an empty field, which pandas and R read as NA.

use crate::base::fingerprint::Fingerprint;
use crate::base::format::csv_number as number;
use crate::base::seeding::Seeds;
use crate::base::time::us_to_ms;
use crate::experiment::sweep::{MetricColumns, SweepPlan, SweepRow};
use crate::measure::server_metrics::ServerMetric;
use crate::measure::stats::Summary;
use crate::spec::RunSpec;
use crate::spec::params::{parameter_columns, parameter_fields};

/// Statistics of each metric in an aggregated row, in column order.
pub const STATISTICS: [&str; 5] = ["mean", "sd", "ci95", "min", "max"];

/// The key columns: what identifies a row.
pub fn key_columns(per_run: bool) -> &'static [&'static str] {
    if per_run {
        &["point", "replicate", "policy_seed", "environment_seed"]
    } else {
        &["point"]
    }
}

/// The columns that describe a row's workload rather than its results: keys,
/// parameters, the replicate count and the master seed.
pub fn identity_columns(per_run: bool) -> Vec<&'static str> {
    let mut columns = key_columns(per_run).to_vec();
    columns.extend(parameter_columns());
    columns.extend(["replicates", "master_seed"]);
    columns
}

/// The columns that tie a sweep file's row to its sweep: the sweep's
/// fingerprint and its number of points (the whole grid's, in a shard too),
/// after the identity columns.
pub const SWEEP_COLUMNS: [&str; 2] = ["sweep_id", "sweep_points"];

/// The last column of a sweep file: a fingerprint of the row's text before
/// it, which shows a row changed since herdsim wrote it.
pub const CHECKSUM_COLUMN: &str = "row_checksum";

/// The storm columns of a server sweep's per-point rows, after the
/// metrics': runs stuck, runs decided (stuck, draining or recovered), runs
/// unresolved, the storm probability over the decided with its Wilson 95%
/// bounds, the decided runs still draining, and the recovery time's
/// quartiles over the runs that recovered (a mean of two clusters describes
/// no run).
pub const STORM_COLUMNS: [&str; 10] = [
    "storm_stuck",
    "storm_decided",
    "storm_unresolved",
    "storm_probability",
    "storm_low",
    "storm_high",
    "storm_draining",
    "recovery_ms_p25",
    "recovery_ms_p50",
    "recovery_ms_p75",
];

/// The fields under [`STORM_COLUMNS`], from a point's server `summaries`.
pub fn storm_fields(summaries: &[(ServerMetric, Summary)]) -> Vec<String> {
    let storm = crate::measure::server_metrics::Storm::of(summaries);
    let quartiles = summaries
        .iter()
        .find(|(m, _)| *m == ServerMetric::RecoveryMs)
        .and_then(|(_, s)| s.quartiles);
    let mut fields = vec![
        storm.stuck.to_string(),
        storm.runs.to_string(),
        storm.unresolved.to_string(),
        if storm.runs == 0 {
            String::new()
        } else {
            number(storm.probability())
        },
        number(storm.low),
        number(storm.high),
        storm.draining.to_string(),
    ];
    fields.extend((0..3).map(|i| quartiles.map_or_else(String::new, |q| number(q[i]))));
    fields
}

/// The header of a sweep file whose metrics are `metrics`.
pub fn header(per_run: bool, metrics: MetricColumns) -> Vec<String> {
    let mut columns: Vec<String> = identity_columns(per_run)
        .iter()
        .chain(&SWEEP_COLUMNS)
        .map(|c| c.to_string())
        .collect();
    let server_point = !per_run && matches!(metrics, MetricColumns::Server { .. });
    for (i, name) in metrics.names().into_iter().enumerate() {
        if server_point && i == ServerMetric::ALL.len() {
            // The storm columns end the server's own, before any service's.
            columns.extend(STORM_COLUMNS.iter().map(|c| c.to_string()));
        }
        if per_run {
            columns.push(name);
        } else {
            columns.extend(STATISTICS.iter().map(|s| format!("{name}_{s}")));
        }
    }
    if server_point && metrics.names().len() == ServerMetric::ALL.len() {
        columns.extend(STORM_COLUMNS.iter().map(|c| c.to_string()));
    }
    columns.push(CHECKSUM_COLUMN.to_string());
    columns
}

/// What identifies a row and its workload: the fields under
/// [`identity_columns`]. `run` is `(replicate, seeds)` for a per-run row.
pub fn identity(
    point: usize,
    run: Option<(u32, Seeds)>,
    spec: &RunSpec,
    replicates: u32,
    master_seed: u64,
) -> Vec<String> {
    let mut fields = vec![point.to_string()];
    if let Some((replicate, seeds)) = run {
        fields.extend([
            replicate.to_string(),
            seeds.policy.to_string(),
            seeds.environment.to_string(),
        ]);
    }
    fields.extend(parameter_fields(spec));
    fields.extend([replicates.to_string(), master_seed.to_string()]);
    fields
}

/// What every row of one sweep's files shares.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepColumns {
    /// Replicates per point.
    pub replicates: u32,
    /// The master seed.
    pub master_seed: u64,
    /// The sweep's fingerprint ([`SweepPlan::fingerprint`]).
    pub sweep_id: String,
    /// The whole grid's points (a shard's rows carry the whole sweep's).
    pub points: usize,
}

impl SweepColumns {
    /// The columns `plan`'s rows carry.
    pub fn of(plan: &SweepPlan<'_>) -> Self {
        SweepColumns {
            replicates: plan.scenario.replicates,
            master_seed: plan.scenario.master_seed,
            sweep_id: plan.fingerprint(),
            points: plan.scenario.grid.len(),
        }
    }
}

/// A row's fields before its metrics: identity and sweep columns.
pub fn row_start(
    point: usize,
    run: Option<(u32, Seeds)>,
    spec: &RunSpec,
    sweep: &SweepColumns,
) -> Vec<String> {
    let mut fields = identity(point, run, spec, sweep.replicates, sweep.master_seed);
    fields.extend([sweep.sweep_id.clone(), sweep.points.to_string()]);
    fields
}

/// Each summary's mean, sd, ci95, min and max (sd and ci95 empty for one
/// replicate, all five for a metric no replicate had).
fn summary_fields<'a>(summaries: impl Iterator<Item = &'a Summary>) -> Vec<String> {
    let optional = |v: Option<f64>| v.map_or_else(String::new, number);
    summaries
        .flat_map(|s| {
            if s.n == 0 {
                return std::array::from_fn(|_| String::new());
            }
            [
                number(s.mean),
                optional(s.sd),
                optional(s.ci95),
                number(s.min),
                number(s.max),
            ]
        })
        .collect()
}

/// The checksum of a sweep-file line whose text before its last comma is
/// `text`.
pub fn checksum(text: &str) -> String {
    Fingerprint::of(text)
}

/// A float that reads back to the same bits (Rust's shortest round trip).
pub fn f64_exact(v: f64) -> String {
    format!("{v:?}")
}

/// Why a checksummed line was not read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineFault {
    /// Its text does not match its checksum: it was changed.
    Changed,
    /// It is not one CSV record of the expected fields.
    Fields,
}

/// The fields of a line written with its checksum last (`text`, without its
/// newline), if the checksum matches and the record before it has `fields`
/// fields.
pub fn checked_record(text: &str, fields: usize) -> Result<::csv::StringRecord, LineFault> {
    let (body, sum) = text.rsplit_once(',').unwrap_or((text, ""));
    if checksum(body) != sum {
        return Err(LineFault::Changed);
    }
    ::csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(body.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .filter(|r| r.len() == fields)
        .ok_or(LineFault::Fields)
}

/// A row as its line in the sweep file, matching [`header`]: fields, then
/// the checksum of the text before it.
pub fn row_line(row: &SweepRow, sweep: &SweepColumns) -> String {
    let fields = match row {
        SweepRow::Run {
            point,
            replicate,
            seeds,
            spec,
            metrics,
        } => {
            let mut fields = row_start(*point, Some((*replicate, *seeds)), spec, sweep);
            fields.extend(metrics.values().into_iter().map(number));
            fields
        }
        SweepRow::ServerRun {
            point,
            replicate,
            seeds,
            spec,
            values,
            ..
        } => {
            let mut fields = row_start(*point, Some((*replicate, *seeds)), spec, sweep);
            fields.extend(values.iter().map(|v| v.map_or_else(String::new, number)));
            fields
        }
        SweepRow::Point { point, spec, .. } => {
            let mut fields = row_start(*point, None, spec, sweep);
            fields.extend(summary_fields(row.summaries().into_iter()));
            fields
        }
        SweepRow::ServerPoint {
            point,
            spec,
            summaries,
            ..
        } => {
            let mut fields = row_start(*point, None, spec, sweep);
            let all = row.summaries();
            let (own, services) = all.split_at(ServerMetric::ALL.len());
            fields.extend(summary_fields(own.iter().copied()));
            fields.extend(storm_fields(summaries));
            fields.extend(summary_fields(services.iter().copied()));
            fields
        }
    };
    let text = line(&fields);
    let text = text.trim_end_matches('\n');
    format!("{text},{}\n", checksum(text))
}

/// The header of `herdsim compare --csv`: long format, one row per point and
/// metric.
pub fn comparison_header() -> Vec<String> {
    let mut columns = identity_columns(false);
    columns.extend([
        "metric",
        "mean",
        "sd",
        "ci95",
        "min",
        "max",
        "published",
        "published_low",
        "published_high",
        "published_runs",
        "published_source",
        "verdict",
    ]);
    columns.iter().map(|c| c.to_string()).collect()
}

/// A compared point's identity fields: its parameters and its scenario's
/// replicates and seed.
fn point_identity(
    scenario: &crate::experiment::scenario::Scenario,
    point: usize,
    spec: &RunSpec,
) -> Vec<String> {
    identity(point, None, spec, scenario.replicates, scenario.master_seed)
}

/// The rows of `herdsim compare --csv`, in grid order, metrics in report order.
pub fn comparison_records(comparison: &crate::study::compare::Comparison<'_>) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    for p in &comparison.points {
        let id = point_identity(comparison.scenario, p.point, &p.spec);
        for cell in &p.cells {
            let mut fields = id.clone();
            fields.push(cell.metric.name().to_string());
            fields.extend(summary_fields(std::iter::once(&cell.summary)));
            match &cell.published {
                Some(f) => fields.extend([
                    number(f.value),
                    number(f.range.0),
                    number(f.range.1),
                    f.runs.map_or_else(String::new, |r| r.to_string()),
                    f.source.clone(),
                    cell.verdict.map(|v| v.to_string()).unwrap_or_default(),
                ]),
                None => fields.extend(std::iter::repeat_n(String::new(), 6)),
            }
            records.push(fields);
        }
    }
    records
}

/// `herdsim compare --csv` on the server model: the same long format, one
/// row per point and server metric (`stuck`'s mean is the storm
/// probability); the published columns stay empty.
pub fn server_comparison_csv(
    comparison: &crate::study::server_compare::ServerComparison<'_>,
) -> String {
    let mut text = line(&comparison_header());
    for p in &comparison.points {
        let id = point_identity(comparison.scenario, p.point, &p.spec);
        for (metric, summary) in &p.summaries {
            let mut fields = id.clone();
            fields.push(metric.name().to_string());
            fields.extend(summary_fields(std::iter::once(summary)));
            fields.extend(std::iter::repeat_n(String::new(), 6));
            text += &line(&fields);
        }
        // The storm figures, each a row whose mean is its value (a share of
        // runs or a count, not a mean over runs: sd and ci95 stay empty).
        let storm = p.storm();
        let decided = storm.runs > 0;
        for (name, value) in [
            ("storm_probability", decided.then(|| storm.probability())),
            ("storm_low", Some(storm.low)),
            ("storm_high", Some(storm.high)),
            ("storm_decided", Some(storm.runs as f64)),
            ("storm_unresolved", Some(storm.unresolved as f64)),
        ] {
            let mut fields = id.clone();
            fields.push(name.to_string());
            fields.push(value.map_or_else(String::new, number));
            fields.extend(std::iter::repeat_n(String::new(), 4 + 6));
            text += &line(&fields);
        }
    }
    text
}

/// The whole of `herdsim compare --csv` on a study scenario: one row per
/// point and study metric, herdsim's figure beside the reference's with the
/// z-score and verdict (empty where the point has no reference row).
pub fn study_comparison_csv(comparison: &crate::study::overload::StudyComparison<'_>) -> String {
    let mut columns = identity_columns(false);
    columns.extend([
        "reference_row",
        "metric",
        "herdsim_mean",
        "herdsim_sd",
        "herdsim_n",
        "reference_mean",
        "reference_sd",
        "reference_n",
        "z",
        "verdict",
    ]);
    let mut text = line(&columns);
    let estimate = |e: Option<crate::study::reference::Estimate>| match e {
        Some(e) => vec![number(e.mean), number(e.sd), e.n.to_string()],
        None => vec![String::new(); 3],
    };
    for p in &comparison.points {
        for point_row in &p.rows {
            let row = point_row.row.map(|i| &comparison.rows[i]);
            for (i, metric) in comparison.study.metrics.iter().enumerate() {
                let mut fields = point_identity(comparison.scenario, p.point, &p.spec);
                fields.push(row.map(|r| r.label()).unwrap_or_default());
                fields.push(metric.name.to_string());
                fields.extend(estimate(point_row.ours[i]));
                let theirs = row.and_then(|r| r.figure(metric.name));
                fields.extend(estimate(theirs));
                match (point_row.ours[i], theirs) {
                    (Some(ours), Some(theirs)) => {
                        let judged = crate::study::reference::judge(ours, theirs);
                        fields.push(judged.z.map(number).unwrap_or_default());
                        fields.push(judged.verdict.to_string());
                    }
                    _ => fields.extend([String::new(), String::new()]),
                }
                text += &line(&fields);
            }
        }
    }
    text
}

/// The whole of `herdsim compare --csv`: header and rows.
pub fn comparison_csv(comparison: &crate::study::compare::Comparison<'_>) -> String {
    let mut text = line(&comparison_header());
    for record in comparison_records(comparison) {
        text += &line(&record);
    }
    text
}

/// The header of `herdsim policy --csv`.
pub const SCHEDULE_HEADER: [&str; 7] = [
    "policy",
    "retry",
    "delay_p1_ms",
    "delay_p50_ms",
    "delay_p99_ms",
    "at_cap_share",
    "wait_p50_ms",
];

/// The rows of `herdsim policy --csv`: one per retry number.
pub fn schedule_records(schedule: &crate::experiment::schedule::Schedule) -> Vec<Vec<String>> {
    schedule
        .retries
        .iter()
        .map(|r| {
            vec![
                schedule.policy.kind.name().to_string(),
                r.retry.to_string(),
                number(us_to_ms(r.p1)),
                number(us_to_ms(r.p50)),
                number(us_to_ms(r.p99)),
                number(r.at_cap),
                number(us_to_ms(r.wait_p50)),
            ]
        })
        .collect()
}

/// One CSV line, newline included, quoted only where a field needs it.
pub fn line<S: AsRef<[u8]>>(fields: &[S]) -> String {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(fields).expect("writing to memory");
    String::from_utf8(writer.into_inner().expect("writing to memory")).expect("fields are UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::layer_metrics::LayerMetric;
    use crate::measure::metrics::Metric;

    #[test]
    fn aggregated_headers_have_units_and_statistics() {
        let h = header(false, MetricColumns::Herd);
        assert_eq!(&h[..3], ["point", "policy", "clients"]);
        assert!(h.contains(&"last_success_ms_mean".to_string()));
        assert!(h.contains(&"calls_ci95".to_string()));
        assert_eq!(
            h.len(),
            1 + parameter_columns().len() + 2 + 2 + Metric::ALL.len() * 5 + 1
        );
        assert_eq!(h.last().unwrap(), CHECKSUM_COLUMN);
        let per_run = header(true, MetricColumns::Herd);
        assert_eq!(
            &per_run[..4],
            ["point", "replicate", "policy_seed", "environment_seed"]
        );
        assert!(per_run.contains(&"peak_retries_pct".to_string()));
    }

    #[test]
    fn a_chain_grid_has_each_services_columns_after_the_servers() {
        let server = header(false, MetricColumns::Server { services: 0 });
        let chains = header(false, MetricColumns::Server { services: 3 });
        assert!(!server.iter().any(|c| c.starts_with("service1_")));
        // The server's columns first, unchanged, then 3 services' each.
        let shared = server.len() - 1;
        assert_eq!(chains[..shared], server[..shared]);
        let per_service = LayerMetric::IN_SWEEPS.len() * STATISTICS.len();
        assert_eq!(chains.len(), server.len() + 3 * per_service);
        // The storm columns (the recovery's quartiles last) close the
        // server's, before any service's.
        assert_eq!(chains[shared - 1], "recovery_ms_p75");
        assert_eq!(chains[shared], "service1_attempts_mean");
        assert_eq!(chains[chains.len() - 2], "service3_latency_p99_ms_max");
        let per_run = header(true, MetricColumns::Server { services: 2 });
        assert!(per_run.contains(&"service2_wasted_work".to_string()));
        // Every kind a file can be has its own header, so a file read back
        // says which it is.
        let kinds = MetricColumns::all();
        let headers: std::collections::BTreeSet<_> =
            kinds.iter().map(|&k| header(false, k)).collect();
        assert_eq!(headers.len(), kinds.len());
    }

    #[test]
    fn lines_quote_only_when_needed() {
        assert_eq!(line(&["a", "1.5", ""]), "a,1.5,\n");
        assert_eq!(line(&["x,y"]), "\"x,y\"\n");
    }
}
