//! A metastability map as tidy CSV: one row per cell, its parameters in the
//! sweep file's columns, then what the map measured there; its run journal;
//! and the merge of a map's shards (slices of its rows).

use std::collections::BTreeMap;

use crate::base::format::csv_number;
use crate::experiment::map::{CellCounts, Map, RunOutcome};
use crate::report::csv::{checksum, line};
use crate::report::error::ReportError;
use crate::spec::params::{parameter_columns, parameter_fields};

/// The columns after the parameters.
pub const MAP_COLUMNS: [&str; 16] = [
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
    "master_seed",
    "map_id",
    "row_checksum",
];

/// The header: `map_row` (the cell's row, from 0), `map_x` (its place on
/// x), the parameters, then [`MAP_COLUMNS`].
pub fn map_header() -> Vec<String> {
    ["map_row", "map_x"]
        .into_iter()
        .chain(parameter_columns())
        .chain(MAP_COLUMNS)
        .map(str::to_string)
        .collect()
}

/// The whole file: the header, then a row per cell, row by row and along x
/// within a row, each ending in the checksum of the text before it. A
/// shard's file holds its rows; the shards' files merged are the whole
/// map's, byte for byte.
pub fn map_csv(map: &Map) -> String {
    let s = &map.settings;
    let id = s.fingerprint();
    let mut text = line(&map_header());
    let cells = map.rows().into_iter().flatten().map(|i| &map.cells[i]);
    for cell in cells {
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
            csv_number(storm.probability()),
            csv_number(storm.low),
            csv_number(storm.high),
            cell.side().name().to_string(),
            cell.recovered().to_string(),
            cell.recovery_median_ms()
                .map_or_else(String::new, csv_number),
            csv_number(cell.amplification_mean()),
            s.y.values.len().to_string(),
            s.master_seed.to_string(),
            id.clone(),
        ]);
        let row = line(&fields);
        let row = row.trim_end_matches('\n');
        text.push_str(&format!("{row},{}\n", checksum(row)));
    }
    text
}

/// One checked row of a map file: its row, its line, and what it says.
struct MapRow {
    row: usize,
    line: String,
    rows: usize,
    id: String,
    counts: CellCounts,
}

/// Reads a map file (`file` names it in errors): every line's checksum
/// checked.
fn read_rows(file: &str, text: &str) -> Result<Vec<MapRow>, ReportError> {
    let bad = |why: String| ReportError::MapShards(format!("'{file}': {why}"));
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    if header != line(&map_header()).trim_end() {
        return Err(bad(
            "not a map file of this herdsim (its header differs)".to_string()
        ));
    }
    let columns = map_header();
    let at = |name: &str| {
        columns
            .iter()
            .position(|c| c == name)
            .expect("a map column")
    };
    let (value, runs, stuck) = (at("map_value"), at("runs"), at("stuck"));
    let unresolved = at("unresolved");
    let (rows_at, id_at) = (at("map_rows"), at("map_id"));
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
            .ok_or_else(|| bad(format!("line {line_no} is not CSV")))?;
        let number = |i: usize| record.get(i).and_then(|v| v.parse::<f64>().ok());
        let (Some(row), Some(x_at), Some(runs), Some(stuck), Some(unresolved), Some(rows)) = (
            number(0),
            number(1),
            number(runs),
            number(stuck),
            number(unresolved),
            number(rows_at),
        ) else {
            return Err(bad(format!("line {line_no} lacks a number it needs")));
        };
        out.push(MapRow {
            row: row as usize,
            line: format!("{text}\n"),
            rows: rows as usize,
            id: record[id_at].to_string(),
            counts: CellCounts {
                x: record[value].to_string(),
                y: row as usize,
                x_at,
                stuck: stuck as u64,
                runs: (runs - unresolved).max(0.0) as u64,
                unresolved: unresolved as u64,
            },
        });
    }
    Ok(out)
}

/// A map file's cells as their counts, if it is the map `id` (all of its
/// rows: a merged map, or one made whole).
pub fn read_map_csv(
    file: &str,
    text: &str,
    id: &str,
    rows: usize,
) -> Result<Vec<CellCounts>, ReportError> {
    let read = read_rows(file, text)?;
    if let Some(other) = read.iter().find(|r| r.id != id) {
        return Err(ReportError::MapShards(format!(
            "'{file}' is map {}, not this command's map {id} (its scenario, axes or settings differ)",
            other.id
        )));
    }
    let mut seen = vec![false; rows];
    for r in &read {
        if let Some(s) = seen.get_mut(r.row) {
            *s = true;
        }
    }
    if let Some(missing) = seen.iter().position(|&s| !s) {
        return Err(ReportError::MapShards(format!(
            "'{file}' has no cells in row {missing}: merge every shard first (herdsim merge)"
        )));
    }
    Ok(read.into_iter().map(|r| r.counts).collect())
}

/// The shards of one map (files of slices of its rows, in any order)
/// joined into the file the whole map writes; refused unless they are
/// one map's and hold each of its rows exactly once.
pub fn merge_map_shards(files: &[(String, String)]) -> Result<String, ReportError> {
    let mut by_row: BTreeMap<usize, (&str, Vec<String>)> = BTreeMap::new();
    let mut map: Option<(String, usize, &str)> = None;
    for (file, text) in files {
        let mut rows_here: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for r in read_rows(file, text)? {
            match &map {
                None => map = Some((r.id.clone(), r.rows, file)),
                Some((id, rows, first)) if *id != r.id || *rows != r.rows => {
                    return Err(ReportError::MapShards(format!(
                        "'{file}' is from another map than '{first}' (map {} against {id})",
                        r.id
                    )));
                }
                Some(_) => {}
            }
            rows_here.entry(r.row).or_default().push(r.line);
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
    let missing: Vec<String> = (0..rows)
        .filter(|r| !by_row.contains_key(r))
        .map(|r| r.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(ReportError::MapShards(format!(
            "the shards lack rows {} of the map's {rows}: give every shard",
            missing.join(", ")
        )));
    }
    let mut text = line(&map_header());
    for (_, (_, lines)) in by_row {
        text.extend(lines);
    }
    Ok(text)
}

/// The header of a map's run journal (`FILE.runs`): what an interrupted map
/// continues from.
pub fn journal_header() -> String {
    line(&[
        "map_id",
        "x",
        "y",
        "replicate",
        "verdict",
        "recovery_ms",
        "amplification",
    ])
}

/// One run's journal line.
pub fn journal_line(id: &str, x: &str, y: &str, replicate: u32, outcome: &RunOutcome) -> String {
    line(&[
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
    ])
}

/// A float that reads back to the same bits (Rust's shortest round trip).
fn f64_exact(v: f64) -> String {
    format!("{v:?}")
}

/// A journal line read back: (x, y, replicate, outcome), if it belongs to
/// the map `id` and is whole.
pub fn read_journal_line(
    id: &str,
    record: &csv::StringRecord,
) -> Option<(String, String, u32, RunOutcome)> {
    if record.len() != 7 || &record[0] != id {
        return None;
    }
    let (stuck, unresolved) = match &record[4] {
        "recovered" => (false, false),
        "stuck" => (true, false),
        "unresolved" => (false, true),
        _ => return None,
    };
    let recovery_ms = match &record[5] {
        "" => None,
        v => Some(v.parse().ok()?),
    };
    Some((
        record[1].to_string(),
        record[2].to_string(),
        record[3].parse().ok()?,
        RunOutcome {
            stuck,
            unresolved,
            recovery_ms,
            amplification: record[6].parse().ok()?,
        },
    ))
}
