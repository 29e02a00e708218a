//! A metastability map as tidy CSV: one row per cell, its parameters in the
//! sweep file's columns, then what the map measured there.

use crate::base::format::csv_number;
use crate::experiment::map::{Map, RunOutcome};
use crate::report::csv::{checksum, line};
use crate::spec::params::{parameter_columns, parameter_fields};

/// The columns after the parameters.
pub const MAP_COLUMNS: [&str; 14] = [
    "map_x",
    "map_row",
    "round",
    "runs",
    "stuck",
    "storm_probability",
    "storm_low",
    "storm_high",
    "side",
    "recovered",
    "recovery_median_ms",
    "amplification_mean",
    "master_seed",
    "map_id",
];

/// The header: `cell`, the parameters, [`MAP_COLUMNS`], `row_checksum`.
pub fn map_header() -> Vec<String> {
    std::iter::once("cell")
        .chain(parameter_columns())
        .chain(MAP_COLUMNS)
        .chain(["row_checksum"])
        .map(str::to_string)
        .collect()
}

/// The whole file: the header, then a row per cell, row by row and along x
/// within a row, each ending in the checksum of the text before it.
pub fn map_csv(map: &Map) -> String {
    let s = &map.settings;
    let id = s.fingerprint();
    let mut text = line(&map_header());
    let cells = map.rows().into_iter().flatten().map(|i| &map.cells[i]);
    for (n, cell) in cells.enumerate() {
        let spec = s
            .spec(&cell.x, cell.y)
            .expect("a map's cells are checked when made");
        let storm = cell.storm();
        let mut fields = vec![n.to_string()];
        fields.extend(parameter_fields(&spec));
        fields.extend([
            csv_number(cell.x_at),
            cell.y.to_string(),
            cell.round.to_string(),
            storm.runs.to_string(),
            storm.stuck.to_string(),
            csv_number(storm.probability()),
            csv_number(storm.low),
            csv_number(storm.high),
            cell.side().name().to_string(),
            cell.recovered().to_string(),
            cell.recovery_median_ms()
                .map_or_else(String::new, csv_number),
            csv_number(cell.amplification_mean()),
            s.master_seed.to_string(),
            id.clone(),
        ]);
        let row = line(&fields);
        let row = row.trim_end_matches('\n');
        text.push_str(&format!("{row},{}\n", checksum(row)));
    }
    text
}

/// The header of a map's run journal (`FILE.runs`): what an interrupted map
/// continues from.
pub fn journal_header() -> String {
    line(&[
        "map_id",
        "x",
        "y",
        "replicate",
        "stuck",
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
        u8::from(outcome.stuck).to_string(),
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
    let stuck = match &record[4] {
        "0" => false,
        "1" => true,
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
            recovery_ms,
            amplification: record[6].parse().ok()?,
        },
    ))
}
