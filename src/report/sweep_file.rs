//! Sweep files read back: the finished rows a resumed sweep keeps, and shard
//! files joined into the file the whole sweep writes.

use crate::base::seeding::Seeds;
use crate::experiment::sweep::{MetricColumns, SweepPlan};
use crate::report::csv::{self as sweep_csv, SweepColumns};
use crate::report::error::ReportError;

/// Checks that finished `rows` are this plan's first rows: same points,
/// parameters, seeds and sweep, every field present, metrics numbers, and
/// each row as herdsim wrote it (its checksum). Returns the first bad row's
/// index and why.
pub fn check_finished_rows(rows: &[&str], plan: &SweepPlan<'_>) -> Result<(), (usize, String)> {
    if rows.len() > plan.total_rows() {
        return Err((
            plan.total_rows(),
            format!("this sweep has only {} rows", plan.total_rows()),
        ));
    }
    let scenario = plan.scenario;
    let sweep = SweepColumns::of(plan);
    let r = scenario.replicates as usize;
    let width = sweep_csv::header(plan.per_run, plan.metric_columns()).len();
    for (i, row) in rows.iter().enumerate() {
        let expected = if plan.per_run {
            let job = plan.points.start * r + i;
            let (point, replicate) = (job / r, job % r);
            let seeds = Seeds::for_job(scenario.master_seed, point as u64, replicate as u64);
            let run = Some((replicate as u32, seeds));
            sweep_csv::row_start(point, run, &scenario.grid.point(point), &sweep)
        } else {
            let point = plan.points.start + i;
            sweep_csv::row_start(point, None, &scenario.grid.point(point), &sweep)
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
        if fields.len() < expected.len() || fields[..expected.len()] != expected[..] {
            return Err((i, format!("expected a row starting {}", expected.join(","))));
        }
        if fields.len() != width {
            return Err((
                i,
                format!("{} fields where a row has {width}", fields.len()),
            ));
        }
        // Metrics are numbers; only a single replicate's sd and CI are empty.
        if let Some(bad) = fields[expected.len()..width - 1]
            .iter()
            .find(|f| !f.is_empty() && f.parse::<f64>().is_err())
        {
            return Err((i, format!("'{bad}' where a number belongs")));
        }
        if !checksum_matches(row) {
            return Err((
                i,
                "the row was changed after herdsim wrote it (its row_checksum does not match)"
                    .to_string(),
            ));
        }
    }
    Ok(())
}

/// True if `line`'s last field is the checksum of the text before it.
fn checksum_matches(line: &str) -> bool {
    line.rsplit_once(',')
        .is_some_and(|(text, sum)| sweep_csv::checksum(text) == sum)
}

/// The sweep columns of one row, read from its end: the fields after the
/// parameters are plain numbers and ids, never quoted.
#[derive(Debug, PartialEq)]
struct RowSweep<'a> {
    replicates: &'a str,
    master_seed: &'a str,
    sweep_id: &'a str,
    points: &'a str,
}

/// Where a kind of sweep file keeps a row's key and sweep columns: the
/// fields from `replicates` on are plain numbers and ids, never quoted, so
/// they are counted from the row's end. Worked out once per file kind, not
/// per row.
#[derive(Debug, Clone, Copy)]
struct RowLayout {
    per_run: bool,
    /// Fields from `replicates` to the end, plus the rest as one.
    pieces: usize,
    /// Each column's place in the pieces, counted from the end.
    replicates: usize,
    master_seed: usize,
    sweep_id: usize,
    points: usize,
}

impl RowLayout {
    fn of(per_run: bool, metrics: MetricColumns) -> Self {
        let header = sweep_csv::header(per_run, metrics);
        let checksum_at = header.len() - 1;
        let from_end = |name: &str| {
            checksum_at
                - header
                    .iter()
                    .position(|c| c == name)
                    .expect("a sweep column")
        };
        RowLayout {
            per_run,
            pieces: from_end("replicates") + 2,
            replicates: from_end("replicates"),
            master_seed: from_end("master_seed"),
            sweep_id: from_end("sweep_id"),
            points: from_end("sweep_points"),
        }
    }

    /// A row's point, replicate (0 for a per-point row) and sweep columns;
    /// `None` if it is not a row of this shape.
    fn read<'a>(&self, line: &'a str) -> Option<((u64, u64), RowSweep<'a>)> {
        let tail: Vec<&str> = line.rsplitn(self.pieces, ',').collect();
        if tail.len() != self.pieces {
            return None;
        }
        let mut keys = line.split(',').map(|f| f.parse::<u64>().ok());
        let point = keys.next()??;
        let replicate = if self.per_run { keys.next()?? } else { 0 };
        Some((
            (point, replicate),
            RowSweep {
                replicates: tail[self.replicates],
                master_seed: tail[self.master_seed],
                sweep_id: tail[self.sweep_id],
                points: tail[self.points],
            },
        ))
    }
}

/// A row of a shard file: its (point, replicate), its text, and where it
/// came from (file, line).
struct ShardRow<'a> {
    key: (u64, u64),
    text: &'a str,
    place: (&'a str, usize),
}

/// What differs between a row's sweep and the first row's, in words.
fn sweep_difference(row: &RowSweep<'_>, first: &RowSweep<'_>) -> String {
    if row.points != first.points {
        format!(
            "a grid of {} points where the first has {}",
            row.points, first.points
        )
    } else if row.replicates != first.replicates {
        format!(
            "{} replicates per point where the first has {}",
            row.replicates, first.replicates
        )
    } else if row.master_seed != first.master_seed {
        format!(
            "master seed {} where the first has {}",
            row.master_seed, first.master_seed
        )
    } else {
        format!(
            "another grid of as many points (sweep_id {} where the first has {})",
            row.sweep_id, first.sweep_id
        )
    }
}

/// Joins the shard files `files` (name and text, in any order) of one sweep
/// into the text the whole sweep writes: one header, rows in point order.
/// Refuses files with another header, a cut-off last line, a row that is not
/// a sweep row or was changed since, rows of another sweep (another grid,
/// seed or replicate count), points given twice, and any point missing: the
/// rows carry their sweep's size, so a left-out last shard is seen too.
pub fn merge_shards(files: &[(String, String)]) -> Result<String, ReportError> {
    // Every kind of sweep file: per point or per run, by its metrics.
    let kinds: Vec<(RowLayout, String)> = MetricColumns::all()
        .into_iter()
        .flat_map(|metrics| [(false, metrics), (true, metrics)])
        .map(|(per_run, metrics)| {
            let header = sweep_csv::line(&sweep_csv::header(per_run, metrics));
            (
                RowLayout::of(per_run, metrics),
                header.trim_end().to_string(),
            )
        })
        .collect();
    let mut header: Option<&str> = None;
    let mut layout = kinds[0].0;
    let mut first: Option<(&str, RowSweep<'_>)> = None;
    let mut rows: Vec<ShardRow<'_>> = Vec::new();
    for (shown, text) in files {
        let mut lines = text.lines();
        let file_header = lines.next().ok_or_else(|| ReportError::EmptyShard {
            file: shown.clone(),
        })?;
        layout = match kinds.iter().find(|(_, h)| h == file_header) {
            Some((k, _)) => *k,
            None if file_header.starts_with("point,") && !file_header.contains(",sweep_id,") => {
                return Err(ReportError::NoSweepId {
                    file: shown.clone(),
                });
            }
            None => {
                return Err(ReportError::NotSweepFile {
                    file: shown.clone(),
                });
            }
        };
        match header {
            None => header = Some(file_header),
            Some(h) if h != file_header => {
                return Err(ReportError::OtherHeader {
                    file: shown.clone(),
                    first: files[0].0.clone(),
                });
            }
            Some(_) => {}
        }
        if !text.ends_with('\n') {
            return Err(ReportError::CutOff {
                file: shown.clone(),
            });
        }
        for (n, line) in lines.enumerate() {
            let line_number = n + 2;
            let (key, sweep) = layout.read(line).ok_or_else(|| ReportError::NotARow {
                file: shown.clone(),
                line: line_number,
            })?;
            if !checksum_matches(line) {
                return Err(ReportError::ChangedRow {
                    file: shown.clone(),
                    line: line_number,
                });
            }
            match &first {
                None => first = Some((shown, sweep)),
                Some((first_file, first_sweep)) if *first_sweep != sweep => {
                    return Err(ReportError::OtherSweep {
                        file: shown.clone(),
                        line: line_number,
                        first: first_file.to_string(),
                        what: sweep_difference(&sweep, first_sweep),
                    });
                }
                Some(_) => {}
            }
            rows.push(ShardRow {
                key,
                text: line,
                place: (shown, line_number),
            });
        }
    }
    let Some((_, sweep)) = first else {
        return Err(ReportError::NoRows);
    };
    let points: u64 = sweep.points.parse().map_err(|_| ReportError::NoRows)?;
    let per_run = layout.per_run;
    let replicates_per_point: u64 = if per_run {
        sweep.replicates.parse().map_err(|_| ReportError::NoRows)?
    } else {
        1
    };
    rows.sort_by_key(|row| row.key);
    if let Some(pair) = rows.windows(2).find(|p| p[0].key == p[1].key) {
        let place = |(file, line): (&str, usize)| format!("'{file}' line {line}");
        return Err(ReportError::Overlap {
            point: pair[0].key.0,
            first: place(pair[0].place),
            second: place(pair[1].place),
        });
    }
    // Every point 0..points, each with its replicates: a gap is a shard not
    // given, and a row past the end is not this sweep's. The rows are
    // walked in key order, so the claimed size sizes nothing: a claim far
    // above the rows present is a gap to its end.
    if let Some(ShardRow {
        place: (file, line),
        ..
    }) = rows
        .iter()
        .find(|r| r.key.0 >= points || r.key.1 >= replicates_per_point)
    {
        return Err(ReportError::NotARow {
            file: file.to_string(),
            line: *line,
        });
    }
    // The first key not present (rows are sorted, distinct and in range).
    let first_gap = rows
        .iter()
        .enumerate()
        .find(|&(i, r)| {
            let i = i as u64;
            r.key != (i / replicates_per_point, i % replicates_per_point)
        })
        .map_or(rows.len() as u64, |(i, _)| i as u64);
    if first_gap < points.saturating_mul(replicates_per_point) {
        let from = first_gap / replicates_per_point;
        // The gap runs to the point before the next whole one.
        let mut whole_after = None;
        let later = &rows[first_gap as usize..];
        let mut i = 0;
        while i < later.len() {
            let point = later[i].key.0;
            let n = later[i..].iter().take_while(|r| r.key.0 == point).count();
            if point > from && n as u64 == replicates_per_point {
                whole_after = Some(point);
                break;
            }
            i += n;
        }
        return Err(ReportError::Missing {
            from,
            to: whole_after.map_or(points - 1, |p| p - 1),
            points,
        });
    }
    let mut text = header.unwrap_or_default().to_string();
    text.push('\n');
    for row in &rows {
        text += row.text;
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
                lines.push(sweep_csv::row_line(&row, &SweepColumns::of(plan)));
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
            // A metric that is not a number; one changed to another number,
            // which only its checksum shows.
            let checksum = rows[0].rsplit_once(',').unwrap().1;
            let (before, last_metric) = short.rsplit_once(',').unwrap();
            let junk = format!("{before},x,{checksum}");
            let why = |row: &str| check_finished_rows(&[row], &plan).unwrap_err().1;
            assert!(why(&junk).contains("'x'"));
            let edited = format!("{before},{last_metric}9,{checksum}");
            assert!(why(&edited).contains("changed after herdsim wrote it"));
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
        let header = sweep_csv::line(&sweep_csv::header(false, MetricColumns::Herd));
        let rows = lines(&whole);
        let file = |range: std::ops::Range<usize>| header.clone() + &rows[range].concat();
        let expected = file(0..4);
        let shards = [("b".to_string(), file(2..4)), ("a".to_string(), file(0..2))];
        assert_eq!(merge_shards(&shards), Ok(expected));
        let gap = [("a".to_string(), file(0..1)), ("c".to_string(), file(3..4))];
        assert_eq!(
            merge_shards(&gap),
            Err(ReportError::Missing {
                from: 1,
                to: 2,
                points: 4
            })
        );
        let twice = [shards[0].clone(), shards[0].clone()];
        assert!(
            merge_shards(&twice)
                .unwrap_err()
                .to_string()
                .contains("point 2 is in 'b' line 2 and in 'b' line 2")
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
