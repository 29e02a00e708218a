//! A metastability map as tidy CSV: one row per cell, its parameters in the
//! sweep file's columns, then what the map measured there; its run journal;
//! and the merge of a map's shards (slices of its rows).

use std::collections::BTreeMap;

use crate::base::format::csv_number;
use crate::experiment::map::{CellCounts, Map, MapSettings, RunOutcome};
use crate::experiment::map_split::SplitFigures;
use crate::model::backlog::Regions;
use crate::report::csv::{LineFault, checked_record, checksum, f64_exact, line};
use crate::report::error::ReportError;
use crate::sim::splitting::SplitBatch;
use crate::spec::params::{parameter_columns, parameter_fields};

/// The columns after the parameters.
pub const MAP_COLUMNS: [&str; 18] = [
    "map_value",
    "round",
    "runs",
    "stuck",
    "unresolved",
    "storm_probability",
    "storm_low",
    "storm_high",
    "side",
    "recovered",
    "recovery_median_ms",
    "amplification_mean",
    "map_rows",
    "row_cells",
    "row_budget_spent",
    "master_seed",
    "map_id",
    "row_checksum",
];

/// The columns of a map made with splitting, after `amplification_mean`:
/// the regions split towards, the estimate and its 95% half-width, and its
/// cost; empty in the cells not split.
pub const SPLIT_COLUMNS: [&str; 8] = [
    "split_high",
    "split_low",
    "split_probability",
    "split_ci95",
    "split_batches",
    "split_paths",
    "split_events",
    "split_cut",
];

/// Where [`SPLIT_COLUMNS`] go among [`MAP_COLUMNS`]: after
/// `amplification_mean`, before the map's bookkeeping.
const SPLIT_AT: usize = 12;

/// The header: `map_row` (the cell's row, from 0), `map_x` (its place on
/// x), the parameters, then [`MAP_COLUMNS`], with [`SPLIT_COLUMNS`] if the
/// map was made with splitting (a map without keeps the file it always
/// had).
pub fn map_header(split: bool) -> Vec<String> {
    let (measured, bookkeeping) = MAP_COLUMNS.split_at(SPLIT_AT);
    let split_columns: &[&str] = if split { &SPLIT_COLUMNS } else { &[] };
    ["map_row", "map_x"]
        .into_iter()
        .chain(parameter_columns())
        .chain(measured.iter().copied())
        .chain(split_columns.iter().copied())
        .chain(bookkeeping.iter().copied())
        .map(str::to_string)
        .collect()
}

/// A cell's splitting fields: empty where it was not split.
fn split_fields(split: Option<&SplitFigures>) -> Vec<String> {
    let Some(f) = split else {
        return vec![String::new(); SPLIT_COLUMNS.len()];
    };
    vec![
        f.regions.high.to_string(),
        f.regions.low.to_string(),
        csv_number(f.probability),
        f.ci95.map_or_else(String::new, csv_number),
        f.batches.to_string(),
        f.paths.to_string(),
        f.events.to_string(),
        f.cut.to_string(),
    ]
}

/// The whole file: the header, then a row per cell, row by row and along x
/// within a row, each ending in the checksum of the text before it. A
/// shard's file holds its rows; the shards' files merged are the whole
/// map's, byte for byte.
pub fn map_csv(map: &Map) -> String {
    let s = &map.settings;
    let id = s.fingerprint();
    let mut text = line(&map_header(s.split.is_some()));
    let rows = map.rows();
    // Each line says how many cells its row has, so a line left out is
    // seen (a refined cell that nothing was refined beside leaves no other
    // trace).
    let row_cells: Vec<usize> = rows.iter().map(Vec::len).collect();
    for &i in rows.iter().flatten() {
        let cell = &map.cells[i];
        let spec = s
            .spec(&cell.x, cell.y)
            .expect("a map's cells are checked when made");
        let storm = cell.storm();
        let mut fields = vec![cell.y.to_string(), csv_number(cell.x_at)];
        fields.extend(parameter_fields(&spec));
        fields.extend([
            cell.x.clone(),
            cell.round.to_string(),
            (storm.runs + storm.unresolved).to_string(),
            storm.stuck.to_string(),
            storm.unresolved.to_string(),
        ]);
        // No decided run, no storm probability: empty, not 0.
        let decided = |v: f64| {
            if storm.runs > 0 {
                csv_number(v)
            } else {
                String::new()
            }
        };
        fields.extend([
            decided(storm.probability()),
            decided(storm.low),
            decided(storm.high),
            cell.side().name().to_string(),
            cell.recovered().to_string(),
            cell.recovery_median_ms()
                .map_or_else(String::new, csv_number),
            csv_number(cell.amplification_mean()),
        ]);
        if s.split.is_some() {
            fields.extend(split_fields(map.splits.get(&i)));
        }
        fields.extend([
            s.y.values.len().to_string(),
            row_cells[cell.y].to_string(),
            yes_no(map.spent[cell.y]).to_string(),
            s.master_seed.to_string(),
            id.clone(),
        ]);
        let row = line(&fields);
        let row = row.trim_end_matches('\n');
        text.push_str(&format!("{row},{}\n", checksum(row)));
    }
    text
}

/// One checked row of a map file: its place, its line, and what it says.
struct MapRow {
    /// The file's line number it is on.
    line_no: usize,
    line: String,
    /// The map's rows, as the line claims.
    rows: usize,
    id: String,
    /// The refinement round that made the cell (0: the coarse grid).
    round: u32,
    /// The cells of its row, as the line claims.
    row_cells: u64,
    /// Whether the run budget stopped its row's refinement, as it claims.
    row_budget_spent: bool,
    counts: CellCounts,
}

/// A field that is a whole number from 0 (written by `to_string`).
fn whole<T: std::str::FromStr>(text: &str) -> Option<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Reads a map file (`file` names it in errors): whether it has the
/// splitting columns, and its rows, every line's checksum checked, every
/// count a whole number that adds up, every place finite, every splitting
/// figure in its range.
fn read_rows(file: &str, text: &str) -> Result<(bool, Vec<MapRow>), ReportError> {
    let bad = |why: String| ReportError::MapShards(format!("'{file}': {why}"));
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let Some(split) = [false, true]
        .into_iter()
        .find(|&split| header == line(&map_header(split)).trim_end())
    else {
        return Err(bad(
            "not a map file of this herdsim (its header differs)".to_string()
        ));
    };
    let columns = map_header(split);
    let at = |name: &str| {
        columns
            .iter()
            .position(|c| c == name)
            .expect("a map column")
    };
    let (value, round_at, runs_at, stuck_at) =
        (at("map_value"), at("round"), at("runs"), at("stuck"));
    let unresolved_at = at("unresolved");
    let (rows_at, id_at, row_cells_at) = (at("map_rows"), at("map_id"), at("row_cells"));
    let spent_at = at("row_budget_spent");
    let mut out = Vec::new();
    for (n, text) in lines.enumerate() {
        let line_no = n + 2;
        let (body, sum) = text.rsplit_once(',').unwrap_or((text, ""));
        if checksum(body) != sum {
            return Err(bad(format!(
                "line {line_no} was changed since it was written (its checksum differs)"
            )));
        }
        let record = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes())
            .records()
            .next()
            .and_then(Result::ok)
            .filter(|r| r.len() == columns.len())
            .ok_or_else(|| {
                bad(format!(
                    "line {line_no} is not a map row ({} fields expected)",
                    columns.len()
                ))
            })?;
        let field = |i: usize| &record[i];
        let count = |i: usize| {
            whole::<u64>(field(i)).ok_or_else(|| {
                bad(format!(
                    "line {line_no}: {} '{}' is not a whole number from 0",
                    columns[i],
                    field(i)
                ))
            })
        };
        let (runs, stuck, unresolved) = (count(runs_at)?, count(stuck_at)?, count(unresolved_at)?);
        let (row, rows, round) = (count(0)?, count(rows_at)?, count(round_at)?);
        let row_cells = count(row_cells_at)?;
        let row_budget_spent = match field(spent_at) {
            "yes" => true,
            "no" => false,
            other => {
                return Err(bad(format!(
                    "line {line_no}: row_budget_spent '{other}' is not yes or no"
                )));
            }
        };
        if unresolved > runs || stuck > runs - unresolved {
            return Err(bad(format!(
                "line {line_no}: stuck {stuck} and unresolved {unresolved} of {runs} runs do not \
                 add up (stuck + unresolved is at most runs)"
            )));
        }
        if rows == 0 || row >= rows {
            return Err(bad(format!(
                "line {line_no}: map_row {row} is not a row of a map of {rows} (map_rows)"
            )));
        }
        let x_at = field(1).parse::<f64>().ok().filter(|v| v.is_finite());
        let (Some(x_at), Ok(round)) = (x_at, u32::try_from(round)) else {
            return Err(bad(format!(
                "line {line_no}: map_x '{}' or round '{round}' is out of range (a finite number, \
                 a round up to {})",
                field(1),
                u32::MAX
            )));
        };
        // `row < rows`, and a row number is an index: both fit in usize on
        // the machines a map's rows were counted on.
        let (row, rows) = (row as usize, rows as usize);
        let split_figures = if split && !field(at("split_probability")).is_empty() {
            let fields: Vec<(&str, &str)> =
                SPLIT_COLUMNS.iter().map(|&c| (c, field(at(c)))).collect();
            Some(read_split(&fields, &|why| {
                bad(format!("line {line_no}: {why}"))
            })?)
        } else {
            None
        };
        out.push(MapRow {
            line_no,
            line: format!("{text}\n"),
            rows,
            id: field(id_at).to_string(),
            round,
            row_cells,
            row_budget_spent,
            counts: CellCounts {
                x: field(value).to_string(),
                y: row,
                x_at,
                stuck,
                runs: runs - unresolved,
                unresolved,
                split: split_figures,
                row_budget_spent,
            },
        });
    }
    Ok((split, out))
}

/// A cell's splitting figures read back, each field (by column name) in
/// its range, else why not.
fn read_split(
    fields: &[(&str, &str)],
    bad: &dyn Fn(String) -> ReportError,
) -> Result<SplitFigures, ReportError> {
    let field = |name: &str| {
        fields
            .iter()
            .find(|(column, _)| *column == name)
            .map_or("", |(_, value)| *value)
    };
    let count = |name: &str| {
        whole::<u64>(field(name)).ok_or_else(|| {
            bad(format!(
                "{name} '{}' is not a whole number from 0",
                field(name)
            ))
        })
    };
    let share = |name: &str| {
        field(name)
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=1.0).contains(p))
            .ok_or_else(|| {
                bad(format!(
                    "{name} '{}' is not a chance from 0 to 1",
                    field(name)
                ))
            })
    };
    let ci95 = match field("split_ci95") {
        "" => None,
        _ => Some(share("split_ci95")?),
    };
    let batches = u32::try_from(count("split_batches")?)
        .ok()
        .filter(|&b| b >= 2)
        .ok_or_else(|| {
            bad(format!(
                "split_batches '{}' is not a count of batches (2 or more)",
                field("split_batches")
            ))
        })?;
    let region = |name: &str| {
        count(name).and_then(|n| {
            usize::try_from(n)
                .map_err(|_| bad(format!("{name} '{n}' is past this machine's sizes")))
        })
    };
    Ok(SplitFigures {
        regions: Regions {
            high: region("split_high")?,
            low: region("split_low")?,
        },
        probability: share("split_probability")?,
        ci95,
        batches,
        paths: count("split_paths")?,
        events: count("split_events")?,
        cut: count("split_cut")?,
    })
}

/// Where a cell is, in words: `row 1, x outage@2s..2.3s`.
fn cell_name(row: usize, x: &str) -> String {
    format!("the cell (row {row}, x {x})")
}

/// Checks that `cells` (each with its file) make whole rows of one map:
/// no cell twice; every row the coarse cells (round 0) of `coarse`, each as
/// often as it is given there (a map's own values, or, from shards alone,
/// those any row has); and every refined cell of round k alone between two
/// neighbours of earlier rounds, at their midpoint (given `settings`,
/// exactly; from shards alone, nearer it than a quarter of the gap). A
/// cell left out then shows as a gap in the coarse grid or as two cells of
/// one round between the same neighbours; a refined cell nothing was made
/// from cannot be told from one never made.
fn check_cells(
    cells: &[(&str, &MapRow)],
    coarse: &[String],
    settings: Option<&MapSettings>,
) -> Result<(), ReportError> {
    let refuse = |why: String| Err(ReportError::MapShards(why));
    let mut by_row: BTreeMap<usize, Vec<(&str, &MapRow)>> = BTreeMap::new();
    for &(file, r) in cells {
        by_row.entry(r.counts.y).or_default().push((file, r));
    }
    for (&row, in_row) in &mut by_row {
        in_row.sort_by(|a, b| a.1.counts.x_at.total_cmp(&b.1.counts.x_at));
        // Each x once (a coarse value given twice on the axis: as often).
        let mut seen: BTreeMap<&str, (&str, usize, usize)> = BTreeMap::new();
        for &(file, r) in in_row.iter() {
            let x = r.counts.x.as_str();
            let allowed = coarse.iter().filter(|c| *c == x).count().max(1);
            let entry = seen.entry(x).or_insert((file, r.line_no, 0));
            entry.2 += 1;
            if entry.2 > allowed {
                return refuse(format!(
                    "{} is in '{}' line {} and again in '{file}' line {}: a cell given twice",
                    cell_name(row, x),
                    entry.0,
                    entry.1,
                    r.line_no
                ));
            }
        }
        let file = in_row[0].0;
        for x in coarse {
            let wanted = coarse.iter().filter(|c| *c == x).count();
            let have = in_row
                .iter()
                .filter(|(_, r)| r.round == 0 && r.counts.x == *x)
                .count();
            if have < wanted {
                return refuse(format!(
                    "'{file}' lacks {} of the coarse grid: a line was left out; run that map or \
                     shard again",
                    cell_name(row, x)
                ));
            }
        }
        if let Some((file, r)) = in_row
            .iter()
            .find(|(_, r)| r.round == 0 && !coarse.contains(&r.counts.x))
        {
            return refuse(format!(
                "'{file}' line {}: {} is not on this map's coarse grid",
                r.line_no,
                cell_name(row, &r.counts.x)
            ));
        }
        let rounds: std::collections::BTreeSet<u32> = in_row
            .iter()
            .map(|(_, r)| r.round)
            .filter(|&k| k > 0)
            .collect();
        for k in rounds {
            let earlier: Vec<&MapRow> = in_row
                .iter()
                .map(|(_, r)| *r)
                .filter(|r| r.round < k)
                .collect();
            let mut taken = vec![false; earlier.len()];
            for &(file, r) in in_row.iter().filter(|(_, r)| r.round == k) {
                let at = r.counts.x_at;
                let after = earlier.partition_point(|e| e.counts.x_at < at);
                let between = (after > 0 && after < earlier.len())
                    .then(|| (earlier[after - 1], earlier[after]))
                    .filter(|(a, b)| a.counts.x_at < at && at < b.counts.x_at);
                let expected = match (between, settings) {
                    (Some((a, b)), Some(s)) => s.x.midpoint(&a.counts.x, &b.counts.x),
                    // Without the axis, by place: a midpoint (whole
                    // numbers' rounded down) is nearer the middle than a
                    // quarter of the gap, where the child of a cell left
                    // out would be.
                    (Some((a, b)), None) => {
                        let (low, high) = (a.counts.x_at, b.counts.x_at);
                        let off = (at - (low + high) / 2.0).abs();
                        (off < (high - low) / 4.0 * (1.0 - 1e-9)).then(|| r.counts.x.clone())
                    }
                    (None, _) => None,
                };
                let place = |(a, b): (&MapRow, &MapRow)| {
                    format!("between x {} and x {}", a.counts.x, b.counts.x)
                };
                match between {
                    Some(pair) if expected.as_deref() == Some(r.counts.x.as_str()) => {
                        if std::mem::replace(&mut taken[after], true) {
                            return refuse(format!(
                                "'{file}' line {}: {} is a second cell of round {k} {}: the cell \
                                 they were refined around was left out",
                                r.line_no,
                                cell_name(row, &r.counts.x),
                                place(pair)
                            ));
                        }
                    }
                    _ => {
                        return refuse(format!(
                            "'{file}' line {}: {} of round {k} is not half way between two cells \
                             of earlier rounds{}: a cell was left out or changed",
                            r.line_no,
                            cell_name(row, &r.counts.x),
                            between
                                .map(|p| format!(" ({})", place(p)))
                                .unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    // As many cells in each row as each of its lines says: the one check
    // that sees a refined cell left out that no later round refined beside.
    for (&row, in_row) in &by_row {
        if let Some((file, r)) = in_row
            .iter()
            .find(|(_, r)| r.row_cells != in_row.len() as u64)
        {
            return refuse(format!(
                "'{file}' line {}: row {row} has {} cells (row_cells), but {} are given: a \
                 line was left out or added; run that map or shard again",
                r.line_no,
                r.row_cells,
                in_row.len()
            ));
        }
        // One row, one budget: its lines agree on whether it was spent.
        if let Some((file, r)) = in_row
            .iter()
            .find(|(_, r)| r.row_budget_spent != in_row[0].1.row_budget_spent)
        {
            return refuse(format!(
                "'{file}' line {}: row {row}'s lines differ in row_budget_spent: a line was \
                 changed or comes from another map; run that map or shard again",
                r.line_no
            ));
        }
    }
    Ok(())
}

/// A map file's cells as their counts, if it is the map of `settings`
/// (all of its rows: a merged map, or one made whole), and its cells make
/// that map's rows (see [`check_cells`]).
pub fn read_map_csv(
    file: &str,
    text: &str,
    settings: &MapSettings,
) -> Result<Vec<CellCounts>, ReportError> {
    let id = settings.fingerprint();
    let rows = settings.y.values.len();
    let (split, read) = read_rows(file, text)?;
    if split != settings.split.is_some() {
        return Err(ReportError::MapShards(format!(
            "'{file}' is a map made {}, not this command's map (made {})",
            if split {
                "with --splitting"
            } else {
                "without --splitting"
            },
            if split { "without" } else { "with" }
        )));
    }
    if let Some(other) = read.iter().find(|r| r.id != id || r.rows != rows) {
        return Err(ReportError::MapShards(format!(
            "'{file}' line {} is map {} of {} rows, not this command's map {id} of {rows} (its \
             scenario, axes or settings differ)",
            other.line_no, other.id, other.rows
        )));
    }
    if let Some(r) = read.iter().find(|r| r.round > settings.rounds) {
        return Err(ReportError::MapShards(format!(
            "'{file}' line {}: round {} is past this map's {} refinement rounds",
            r.line_no, r.round, settings.rounds
        )));
    }
    if let Some(r) = read
        .iter()
        .find(|r| r.counts.x_at != settings.x.position(&r.counts.x))
    {
        return Err(ReportError::MapShards(format!(
            "'{file}' line {}: map_x {} is not where x {} sits on this map's axis",
            r.line_no,
            csv_number(r.counts.x_at),
            r.counts.x
        )));
    }
    let mut seen = vec![false; rows];
    for r in &read {
        seen[r.counts.y] = true;
    }
    if let Some(missing) = seen.iter().position(|&s| !s) {
        return Err(ReportError::MapShards(format!(
            "'{file}' has no cells in row {missing}: merge every shard first (herdsim merge)"
        )));
    }
    let cells: Vec<(&str, &MapRow)> = read.iter().map(|r| (file, r)).collect();
    check_cells(&cells, &settings.x.values, Some(settings))?;
    Ok(read.into_iter().map(|r| r.counts).collect())
}

/// The most missing rows an error lists.
const LISTED: usize = 8;

/// The shards of one map (files of slices of its rows, in any order)
/// joined into the file the whole map writes; refused unless they are
/// one map's and hold each of its rows exactly once, each cell once, and
/// every row whole (see [`check_cells`]). The map's claimed size
/// (`map_rows`) is never used to size anything: missing rows are listed
/// from the rows present.
pub fn merge_map_shards(files: &[(String, String)]) -> Result<String, ReportError> {
    let mut by_row: BTreeMap<usize, (&str, Vec<String>)> = BTreeMap::new();
    let mut map: Option<(String, usize, &str)> = None;
    let mut read = Vec::new();
    let mut split = false;
    for (file, text) in files {
        let (with_split, rows) = read_rows(file, text)?;
        // Files of one map share its header: their map_id says so, and it
        // differs with splitting's settings.
        split |= with_split;
        read.push((file.as_str(), rows));
    }
    for (file, rows) in &read {
        let mut rows_here: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for r in rows {
            match &map {
                None => map = Some((r.id.clone(), r.rows, file)),
                Some((id, rows, first)) if *id != r.id || *rows != r.rows => {
                    return Err(ReportError::MapShards(format!(
                        "'{file}' line {} is from another map than '{first}' (map {} of {} rows \
                         against {id} of {rows})",
                        r.line_no, r.id, r.rows
                    )));
                }
                Some(_) => {}
            }
            rows_here
                .entry(r.counts.y)
                .or_default()
                .push(r.line.clone());
        }
        for (row, lines) in rows_here {
            if let Some((other, _)) = by_row.get(&row) {
                return Err(ReportError::MapShards(format!(
                    "row {row} is in both '{other}' and '{file}': give each shard once"
                )));
            }
            by_row.insert(row, (file, lines));
        }
    }
    let Some((_, rows, _)) = map else {
        return Err(ReportError::MapShards(
            "the shards hold no cells".to_string(),
        ));
    };
    // Every row is below `rows` (read_rows checks it), so the missing
    // ones are found by walking the rows present, never all `rows`.
    let present = by_row.len();
    if present < rows {
        let missing: Vec<String> = (0..rows)
            .filter(|r| !by_row.contains_key(r))
            .take(LISTED)
            .map(|r| r.to_string())
            .collect();
        let more = rows - present - missing.len();
        return Err(ReportError::MapShards(format!(
            "the shards lack rows {}{} of the map's {rows} (map_rows; they hold {present}): give \
             every shard",
            missing.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )));
    }
    let cells: Vec<(&str, &MapRow)> = read
        .iter()
        .flat_map(|(file, rows)| rows.iter().map(move |r| (*file, r)))
        .collect();
    // The coarse values any row has: a row without one lacks a cell.
    let mut coarse: Vec<String> = Vec::new();
    for (_, r) in &cells {
        if r.round == 0 && !coarse.contains(&r.counts.x) {
            coarse.push(r.counts.x.clone());
        }
    }
    check_cells(&cells, &coarse, None)?;
    let mut text = line(&map_header(split));
    for (_, (_, lines)) in by_row {
        text.extend(lines);
    }
    Ok(text)
}

/// The header of a map's run journal (`FILE.runs`): what an interrupted map
/// continues from. Each line ends in the checksum of the text before it,
/// as a sweep file's rows do.
pub fn journal_header() -> String {
    line(&[
        "map_id",
        "x",
        "y",
        "replicate",
        "verdict",
        "recovery_ms",
        "amplification",
        "row_checksum",
    ])
}

/// One run's journal line, its checksum last.
pub fn journal_line(id: &str, x: &str, y: &str, replicate: u32, outcome: &RunOutcome) -> String {
    let text = line(&[
        id.to_string(),
        x.to_string(),
        y.to_string(),
        replicate.to_string(),
        match (outcome.stuck, outcome.unresolved) {
            (true, _) => "stuck",
            (false, true) => "unresolved",
            (false, false) => "recovered",
        }
        .to_string(),
        outcome.recovery_ms.map_or_else(String::new, f64_exact),
        f64_exact(outcome.amplification),
    ]);
    let text = text.trim_end_matches('\n');
    format!("{text},{}\n", checksum(text))
}

/// One run read back from a map's journal.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalRun {
    /// The cell's x value.
    pub x: String,
    /// The cell's y value.
    pub y: String,
    /// The replicate.
    pub replicate: u32,
    /// What the run ended as.
    pub outcome: RunOutcome,
}

/// A splitting batch's journal line, its checksum last: the cell, the
/// batch, `split`, then what the batch found and spent.
pub fn journal_batch_line(id: &str, x: &str, y: &str, batch: u32, made: &SplitBatch) -> String {
    let text = line(&[
        id.to_string(),
        x.to_string(),
        y.to_string(),
        batch.to_string(),
        "split".to_string(),
        f64_exact(made.estimate),
        made.iterations.to_string(),
        made.paths.to_string(),
        made.events.to_string(),
        made.first_events.to_string(),
        made.first_reached.to_string(),
        made.cut.to_string(),
        made.extinct.to_string(),
    ]);
    let text = text.trim_end_matches('\n');
    format!("{text},{}\n", checksum(text))
}

/// Fields of a run's journal line and of a splitting batch's.
const RUN_FIELDS: usize = 7;
const BATCH_FIELDS: usize = 13;

/// One line of a map's journal read back.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalEntry {
    /// A run of a cell.
    Run(JournalRun),
    /// A splitting batch of a cell: its x and y values, the batch, and it.
    Batch(String, String, u32, SplitBatch),
}

/// The cell a journal `record` of map `id` names, if it is one of the map
/// `settings` makes: its x and y values.
fn journal_cell(
    settings: &MapSettings,
    id: &str,
    record: &::csv::StringRecord,
) -> Result<(String, String), String> {
    if &record[0] != id {
        return Err(format!(
            "a run of map {}, not of this command's map {id} (its scenario, axes or settings \
             differ)",
            &record[0]
        ));
    }
    let (x, y) = (&record[1], &record[2]);
    let row = settings.y.values.iter().position(|v| v == y);
    if !row.is_some_and(|r| settings.rows.contains(&r)) {
        return Err(format!(
            "y '{y}' is not a row this map makes (its rows are {})",
            settings.y.values[settings.rows.clone()].join(", ")
        ));
    }
    let positions = settings.x.values.iter().map(|v| settings.x.position(v));
    let low = positions.clone().fold(f64::INFINITY, f64::min);
    let high = positions.fold(f64::NEG_INFINITY, f64::max);
    let at = settings.x.position(x);
    if !(low <= at && at <= high) {
        return Err(format!(
            "x '{x}' is not on this map's x axis ({} to {})",
            settings.x.values.first().map_or("", String::as_str),
            settings.x.values.last().map_or("", String::as_str)
        ));
    }
    Ok((x.to_string(), y.to_string()))
}

/// A journal line (`text`, without its newline) read back, if it is one of
/// the map `settings` makes (whose fingerprint is `id`), as herdsim wrote
/// it: its checksum matches and its cell is one of the map's rows and
/// within its x axis; a run's replicate is below the cell's most seeds and
/// its figures are what a run gives (a recovery time, finite and from 0,
/// only for a recovered run; a finite amplification from 0); a batch is
/// one of splitting's with figures a batch gives. Otherwise why not,
/// naming the field.
pub fn read_journal_line(
    settings: &MapSettings,
    id: &str,
    text: &str,
) -> Result<JournalEntry, String> {
    let record = checked_record(text, RUN_FIELDS)
        .or_else(|fault| match (fault, &settings.split) {
            (LineFault::Fields, Some(_)) => checked_record(text, BATCH_FIELDS),
            (fault, _) => Err(fault),
        })
        .map_err(|fault| match fault {
            LineFault::Changed => {
                "the line was changed since it was written (its row_checksum does not match)"
                    .to_string()
            }
            LineFault::Fields => format!(
                "not a journal line ({RUN_FIELDS} fields{} and a checksum expected)",
                if settings.split.is_some() {
                    format!(", or {BATCH_FIELDS} of a splitting batch,")
                } else {
                    String::new()
                }
            ),
        })?;
    let (x, y) = journal_cell(settings, id, &record)?;
    if record.len() == BATCH_FIELDS {
        return read_batch(settings, &record)
            .map(|(batch, made)| JournalEntry::Batch(x, y, batch, made));
    }
    let replicate = whole::<u32>(&record[3])
        .filter(|&r| r < settings.max_seeds)
        .ok_or_else(|| {
            format!(
                "replicate '{}' is not a replicate of a cell (0 to {}, the most seeds a cell gets)",
                &record[3],
                settings.max_seeds.saturating_sub(1)
            )
        })?;
    let (stuck, unresolved) = match &record[4] {
        "recovered" | "draining" => (false, false),
        "stuck" => (true, false),
        "unresolved" => (false, true),
        other => {
            return Err(format!(
                "verdict '{other}' is not recovered, draining, stuck or unresolved"
            ));
        }
    };
    let finite_from_zero = |v: &str| v.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    let recovery_ms = match &record[5] {
        "" => None,
        v if stuck || unresolved => {
            return Err(format!(
                "recovery_ms '{v}' on a run that did not recover (it is empty there)"
            ));
        }
        v => Some(
            finite_from_zero(v)
                .ok_or_else(|| format!("recovery_ms '{v}' is not a finite number of ms from 0"))?,
        ),
    };
    let amplification = finite_from_zero(&record[6]).ok_or_else(|| {
        format!(
            "amplification '{}' is not a finite number from 0",
            &record[6]
        )
    })?;
    Ok(JournalEntry::Run(JournalRun {
        x,
        y,
        replicate,
        outcome: RunOutcome {
            stuck,
            unresolved,
            recovery_ms,
            amplification,
        },
    }))
}

/// A splitting batch's `record` read back: the batch and what it found,
/// each figure in its range (the batch below --batches, the estimate a
/// chance, the first paths' events within all events), else why not.
fn read_batch(
    settings: &MapSettings,
    record: &::csv::StringRecord,
) -> Result<(u32, SplitBatch), String> {
    let batches = settings.split.as_ref().map_or(0, |s| s.how.batches);
    let batch = whole::<u32>(&record[3])
        .filter(|&b| b < batches)
        .ok_or_else(|| {
            format!(
                "batch '{}' is not a splitting batch of a cell (0 to {})",
                &record[3],
                batches.saturating_sub(1)
            )
        })?;
    if &record[4] != "split" {
        return Err(format!("'{}' where a batch line says split", &record[4]));
    }
    let count = |i: usize, name: &str| {
        whole::<u64>(&record[i])
            .ok_or_else(|| format!("{name} '{}' is not a whole number from 0", &record[i]))
    };
    let estimate = record[5]
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("estimate '{}' is not a chance from 0 to 1", &record[5]))?;
    let small = |i: usize, name: &str| {
        count(i, name).and_then(|n| {
            u32::try_from(n).map_err(|_| format!("{name} '{n}' is past {}", u32::MAX))
        })
    };
    let made = SplitBatch {
        estimate,
        iterations: small(6, "iterations")?,
        paths: count(7, "paths")?,
        events: count(8, "events")?,
        first_events: count(9, "first_events")?,
        first_reached: small(10, "first_reached")?,
        cut: count(11, "cut")?,
        extinct: match &record[12] {
            "true" => true,
            "false" => false,
            other => return Err(format!("extinct '{other}' is not true or false")),
        },
    };
    if made.first_events > made.events || made.cut > made.paths {
        return Err(format!(
            "first_events {} of events {}, cut {} of paths {}: they do not add up",
            made.first_events, made.events, made.cut, made.paths
        ));
    }
    Ok((batch, made))
}

/// A flag as the map file writes it.
fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}
