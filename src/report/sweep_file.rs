//! Sweep files read back: the finished rows a resumed sweep keeps, and shard
//! files joined into the file the whole sweep writes.

use crate::base::seeding::Seeds;
use crate::experiment::sweep::SweepPlan;
use crate::report::csv as sweep_csv;
use crate::report::error::ReportError;

/// Checks that finished `rows` are this plan's first rows: same points,
/// parameters and seeds. Returns the first mismatching row's index and why.
pub fn check_finished_rows(rows: &[&str], plan: &SweepPlan<'_>) -> Result<(), (usize, String)> {
    if rows.len() > plan.total_rows() {
        return Err((
            plan.total_rows(),
            format!("this sweep has only {} rows", plan.total_rows()),
        ));
    }
    let scenario = plan.scenario;
    let r = scenario.replicates as usize;
    let identity_len = sweep_csv::identity_columns(plan.per_run).len();
    let width = sweep_csv::header(plan.per_run).len();
    for (i, row) in rows.iter().enumerate() {
        let expected = if plan.per_run {
            let job = plan.points.start * r + i;
            let (point, replicate) = (job / r, job % r);
            let seeds = Seeds::for_job(scenario.master_seed, point as u64, replicate as u64);
            sweep_csv::identity(
                point,
                Some((replicate as u32, seeds)),
                &scenario.grid.point(point),
                1,
                0,
            )
        } else {
            let point = plan.points.start + i;
            sweep_csv::identity(
                point,
                None,
                &scenario.grid.point(point),
                scenario.replicates,
                scenario.master_seed,
            )
        };
        // Parsed as CSV: a budget rule is a quoted field with commas in it.
        let fields: Vec<String> = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(row.as_bytes())
            .records()
            .next()
            .and_then(Result::ok)
            .map(|r| r.iter().map(str::to_string).collect())
            .unwrap_or_default();
        if fields.len() < identity_len || fields[..identity_len] != expected[..] {
            return Err((i, format!("expected a row starting {}", expected.join(","))));
        }
        if fields.len() != width {
            return Err((
                i,
                format!("{} fields where a row has {width}", fields.len()),
            ));
        }
        // Metrics are numbers; only a single replicate's sd and CI are empty.
        if let Some(bad) = fields[identity_len..]
            .iter()
            .find(|f| !f.is_empty() && f.parse::<f64>().is_err())
        {
            return Err((i, format!("'{bad}' where a number belongs")));
        }
    }
    Ok(())
}

/// Joins the shard files `files` (name and text, in any order) of one sweep
/// into the text the whole sweep writes: one header, rows in point order.
/// Refuses files with another header, a cut-off last line or a row that is
/// not a sweep row, points given twice, and points missing between.
pub fn merge_shards(files: &[(String, String)]) -> Result<String, ReportError> {
    let mut header: Option<&str> = None;
    let mut rows: Vec<((u64, u64), &str)> = Vec::new();
    for (shown, text) in files {
        let mut lines = text.lines();
        let first = lines.next().ok_or_else(|| ReportError::EmptyShard {
            file: shown.clone(),
        })?;
        match header {
            None => header = Some(first),
            Some(h) if h != first => {
                return Err(ReportError::OtherHeader {
                    file: shown.clone(),
                    first: files[0].0.clone(),
                });
            }
            Some(_) => {}
        }
        if !first.starts_with("point,") {
            return Err(ReportError::NotSweepFile {
                file: shown.clone(),
            });
        }
        if !text.ends_with('\n') {
            return Err(ReportError::CutOff {
                file: shown.clone(),
            });
        }
        let per_run = first.starts_with("point,replicate,");
        for (n, line) in lines.enumerate() {
            let mut fields = line.split(',');
            let mut number = || fields.next().and_then(|f| f.parse::<u64>().ok());
            match (number(), if per_run { number() } else { Some(0) }) {
                (Some(point), Some(replicate)) => rows.push(((point, replicate), line)),
                _ => {
                    return Err(ReportError::NotARow {
                        file: shown.clone(),
                        line: n + 2,
                    });
                }
            }
        }
    }
    rows.sort_by_key(|(key, _)| *key);
    if let Some(pair) = rows.windows(2).find(|p| p[0].0 == p[1].0) {
        return Err(ReportError::Overlap { point: pair[0].0.0 });
    }
    // Points must run 0, 1, 2, … with no gap: a gap is a missing shard.
    let mut expected_point = 0;
    for ((point, _), _) in &rows {
        if *point > expected_point {
            return Err(ReportError::Missing {
                from: expected_point,
                to: point - 1,
            });
        }
        expected_point = point + 1;
    }
    let mut text = header.unwrap_or_default().to_string();
    text.push('\n');
    for (_, line) in &rows {
        text += line;
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::scenario::Scenario;
    use crate::experiment::sweep::run_sweep;

    fn scenario() -> Scenario {
        Scenario::from_toml(
            "s.toml",
            "policy = [\"none\", \"full\"]\nclients = [5, 9]\nseeds = 2\n",
        )
        .unwrap()
    }

    /// The rows `plan` writes, as text lines.
    fn lines(plan: &SweepPlan<'_>) -> Vec<String> {
        let mut lines = Vec::new();
        run_sweep(
            plan,
            || {},
            |row| {
                lines.push(sweep_csv::line(&sweep_csv::record(
                    &row,
                    plan.scenario.master_seed,
                )));
                Ok::<_, ()>(())
            },
        )
        .unwrap();
        lines
    }

    fn plan(scenario: &Scenario, per_run: bool) -> SweepPlan<'_> {
        SweepPlan {
            scenario,
            points: 0..scenario.grid.len(),
            per_run,
            rows_done: 0,
            max_events: u64::MAX,
        }
    }

    #[test]
    fn finished_rows_of_this_sweep_are_kept_and_others_refused() {
        let scenario = scenario();
        for per_run in [false, true] {
            let plan = plan(&scenario, per_run);
            let lines = lines(&plan);
            let rows: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
            assert_eq!(check_finished_rows(&rows[..2], &plan), Ok(()));
            assert_eq!(check_finished_rows(&rows, &plan), Ok(()));
            // A row of another point, or one row too many, is not this sweep's.
            // A row cut short, or with a metric that is not a number.
            let short = rows[0].rsplit_once(',').unwrap().0;
            assert!(
                check_finished_rows(&[short], &plan)
                    .unwrap_err()
                    .1
                    .contains("fields")
            );
            let junk = format!("{short},x");
            assert!(
                check_finished_rows(&[&junk], &plan)
                    .unwrap_err()
                    .1
                    .contains("'x'")
            );
            let swapped = [rows[1], rows[0]];
            assert_eq!(check_finished_rows(&swapped, &plan).unwrap_err().0, 0);
            let mut extra = rows.clone();
            extra.push(rows[0]);
            assert!(check_finished_rows(&extra, &plan).is_err());
            let other = Scenario {
                master_seed: 1,
                ..scenario.clone()
            };
            assert!(check_finished_rows(&rows[..1], &self::plan(&other, per_run)).is_err());
        }
    }

    #[test]
    fn shards_merge_in_any_order_to_the_whole_and_gaps_are_refused() {
        let scenario = scenario();
        let whole = plan(&scenario, false);
        let header = sweep_csv::line(&sweep_csv::header(false));
        let rows = lines(&whole);
        let file = |range: std::ops::Range<usize>| header.clone() + &rows[range].concat();
        let expected = file(0..4);
        let shards = [("b".to_string(), file(2..4)), ("a".to_string(), file(0..2))];
        assert_eq!(merge_shards(&shards), Ok(expected));
        let gap = [("a".to_string(), file(0..1)), ("c".to_string(), file(3..4))];
        assert_eq!(
            merge_shards(&gap),
            Err(ReportError::Missing { from: 1, to: 2 })
        );
        let twice = [shards[0].clone(), shards[0].clone()];
        assert!(
            merge_shards(&twice)
                .unwrap_err()
                .to_string()
                .contains("appears twice")
        );
        let cut = [("a".to_string(), file(0..2).trim_end().to_string())];
        assert!(
            merge_shards(&cut)
                .unwrap_err()
                .to_string()
                .contains("cut-off")
        );
    }
}
