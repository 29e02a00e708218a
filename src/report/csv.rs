//! Sweep output as tidy CSV: one header, one row per point (or per run),
//! snake_case columns with units in their names, every parameter in every row.
//!
//! Numbers are written in Rust's shortest round-trip form, so the same values
//! give the same bytes on every machine; a missing value (the sd of a single
//! replicate) is an empty field, which pandas and R read as NA.

use crate::base::format::csv_number as number;
use crate::base::seeding::Seeds;
use crate::base::time::us_to_ms;
use crate::experiment::sweep::SweepRow;
use crate::measure::metrics::Metric;
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
/// parameters and (aggregated) the replicate count and master seed.
pub fn identity_columns(per_run: bool) -> Vec<&'static str> {
    let mut columns = key_columns(per_run).to_vec();
    columns.extend(parameter_columns());
    if !per_run {
        columns.extend(["replicates", "master_seed"]);
    }
    columns
}

/// The header of a sweep file.
pub fn header(per_run: bool) -> Vec<String> {
    let mut columns: Vec<String> = identity_columns(per_run)
        .iter()
        .map(|c| c.to_string())
        .collect();
    for metric in Metric::ALL {
        if per_run {
            columns.push(metric.name().to_string());
        } else {
            columns.extend(STATISTICS.iter().map(|s| format!("{}_{s}", metric.name())));
        }
    }
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
    if run.is_none() {
        fields.extend([replicates.to_string(), master_seed.to_string()]);
    }
    fields
}

/// A row's fields, matching [`header`].
pub fn record(row: &SweepRow, master_seed: u64) -> Vec<String> {
    match row {
        SweepRow::Run {
            point,
            replicate,
            seeds,
            spec,
            metrics,
        } => {
            let mut fields = identity(*point, Some((*replicate, *seeds)), spec, 1, master_seed);
            fields.extend(metrics.values().into_iter().map(number));
            fields
        }
        SweepRow::Point {
            point,
            spec,
            summaries,
            ..
        } => {
            let n = summaries.first().map_or(0, |(_, s)| s.n) as u32;
            let mut fields = identity(*point, None, spec, n, master_seed);
            let optional = |v: Option<f64>| v.map_or_else(String::new, number);
            for (_, s) in summaries {
                fields.extend([
                    number(s.mean),
                    optional(s.sd),
                    optional(s.ci95),
                    number(s.min),
                    number(s.max),
                ]);
            }
            fields
        }
    }
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

/// The rows of `herdsim compare --csv`, in grid order, metrics in report order.
pub fn comparison_records(comparison: &crate::study::compare::Comparison<'_>) -> Vec<Vec<String>> {
    let scenario = comparison.scenario;
    let optional = |v: Option<f64>| v.map_or_else(String::new, number);
    let mut records = Vec::new();
    for p in &comparison.points {
        let id = identity(
            p.point,
            None,
            &p.spec,
            scenario.replicates,
            scenario.master_seed,
        );
        for cell in &p.cells {
            let s = &cell.summary;
            let mut fields = id.clone();
            fields.extend([
                cell.metric.name().to_string(),
                number(s.mean),
                optional(s.sd),
                optional(s.ci95),
                number(s.min),
                number(s.max),
            ]);
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

    #[test]
    fn aggregated_headers_have_units_and_statistics() {
        let h = header(false);
        assert_eq!(&h[..3], ["point", "policy", "clients"]);
        assert!(h.contains(&"last_success_ms_mean".to_string()));
        assert!(h.contains(&"calls_ci95".to_string()));
        assert_eq!(
            h.len(),
            1 + parameter_columns().len() + 2 + Metric::ALL.len() * 5
        );
        let per_run = header(true);
        assert_eq!(
            &per_run[..4],
            ["point", "replicate", "policy_seed", "environment_seed"]
        );
        assert!(per_run.contains(&"peak_retries_pct".to_string()));
    }

    #[test]
    fn lines_quote_only_when_needed() {
        assert_eq!(line(&["a", "1.5", ""]), "a,1.5,\n");
        assert_eq!(line(&["x,y"]), "\"x,y\"\n");
    }
}
