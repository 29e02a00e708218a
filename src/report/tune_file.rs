//! `herdsim tune`'s files: the settings CSV (one row per setting, its
//! figures and its place on the front), read back for `--from` (shards
//! joined), and the run journal (`FILE.runs`) an interrupted search
//! continues from. Every line ends in the checksum of the text before it,
//! as a sweep file's rows do; numbers are written to the digits that read
//! back to the same bits, so a front drawn from the file is the front the
//! search found.

use std::collections::HashMap;

use crate::experiment::tune::{Front, Measure, SettingFigures, TuneRun, TuneSettings};
use crate::measure::server_metrics::Storm;
use crate::report::csv::{LineFault, checked_record, checksum, f64_exact, line};

/// The settings CSV's columns: the fixed ones, with the searched fields'
/// names after `rule`.
pub fn tune_header(settings: &TuneSettings) -> Vec<String> {
    let mut header: Vec<String> = ["tune_row", "round", "rule"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(settings.fields.iter().map(|f| f.name.clone()));
    header.extend(
        [
            "seeds",
            "amplification_mean",
            "amplification_ci95",
            "success_mean",
            "success_ci95",
            "stall_runs",
            "stall_stuck",
            "stall_unresolved",
            "storm_low",
            "storm_high",
            "within_bound",
            "survives_stall",
            "on_front",
            "best",
            "knee",
            "bound",
            "partial",
            "stall",
            "control",
            "master_seed",
            "tune_id",
            "row_checksum",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header
}

/// The settings CSV of `figures` (in the order given: made, or read
/// back), with their places on `front`.
pub fn tune_csv(settings: &TuneSettings, figures: &[SettingFigures], front: &Front) -> String {
    let id = settings.fingerprint();
    let mut text = line(&tune_header(settings));
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    for (i, f) in figures.iter().enumerate() {
        let mut fields = vec![f.row.to_string(), f.round.to_string(), f.rule.clone()];
        fields.extend(f.values.iter().cloned());
        fields.extend([
            f.seeds.to_string(),
            f64_exact(f.amplification.0),
            f64_exact(f.amplification.1),
            f64_exact(f.success.0),
            f64_exact(f.success.1),
            f.storm.runs.to_string(),
            f.storm.stuck.to_string(),
            f.storm.unresolved.to_string(),
            f64_exact(f.storm.low),
            f64_exact(f.storm.high),
            yes(f.within(settings.bound)),
            if f.decided() {
                yes(f.survives())
            } else {
                "unknown".to_string()
            },
            yes(front.points.contains(&i)),
            yes(front.best == Some(i)),
            yes(front.knee == Some(i)),
            f64_exact(settings.bound),
            f64_exact(settings.partial),
            settings.stall.clone(),
            settings.family.key().to_string(),
            settings.master_seed.to_string(),
            id.clone(),
        ]);
        let body = line(&fields);
        let body = body.trim_end_matches('\n');
        text.push_str(&format!("{body},{}\n", checksum(body)));
    }
    text
}

/// The settings of a search's CSV (`text`, from `file`), if it is one of
/// `settings`'s (a shard's or the whole's), or why not, naming the file
/// and its line.
pub fn read_tune_csv(
    file: &str,
    text: &str,
    settings: &TuneSettings,
) -> Result<Vec<SettingFigures>, String> {
    let header = tune_header(settings);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    if first != line(&header).trim_end() {
        return Err(format!(
            "'{file}' is not a settings file of this search (its header is not tune's for \
             these fields)"
        ));
    }
    let id = settings.fingerprint();
    let fields = settings.fields.len();
    let column = |name: &str| header.iter().position(|h| h == name).expect("a column");
    let mut out = Vec::new();
    for (n, text) in lines.enumerate() {
        let at = |why: String| format!("'{file}' line {}: {why}", n + 2);
        let record = checked_record(text, header.len() - 1).map_err(|fault| {
            at(match fault {
                LineFault::Changed => "the line was changed since it was written (its \
                                       row_checksum does not match)"
                    .to_string(),
                LineFault::Fields => format!("expected {} fields", header.len()),
            })
        })?;
        let get = |name: &str| &record[column(name)];
        if get("tune_id") != id {
            return Err(at(format!(
                "a setting of search {}, not of this command's {id} (its scenario, control or \
                 flags differ)",
                get("tune_id")
            )));
        }
        let number = |name: &str| {
            get(name)
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| at(format!("{name} '{}' is not a number", get(name))))
        };
        let count = |name: &str| {
            get(name)
                .parse::<u64>()
                .map_err(|_| at(format!("{name} '{}' is not a count", get(name))))
        };
        let values: Vec<String> = (0..fields).map(|i| record[3 + i].to_string()).collect();
        let row = count("tune_row")? as usize;
        if row >= settings.row_count() {
            return Err(at(format!("tune_row {row} is not a row of this search")));
        }
        out.push(SettingFigures {
            x_at: crate::experiment::tune::position(&values[settings.x_index()])
                .unwrap_or(f64::NAN),
            values,
            rule: get("rule").to_string(),
            row,
            round: count("round")? as u32,
            seeds: count("seeds")? as u32,
            amplification: (number("amplification_mean")?, number("amplification_ci95")?),
            success: (number("success_mean")?, number("success_ci95")?),
            storm: Storm::of_counts(
                count("stall_stuck")?,
                count("stall_runs")?,
                count("stall_unresolved")?,
            ),
        });
    }
    Ok(out)
}

/// The header of a search's run journal.
pub fn tune_journal_header() -> String {
    line(&[
        "tune_id",
        "rule",
        "measure",
        "replicate",
        "amplification",
        "success",
        "verdict",
        "row_checksum",
    ])
}

/// One run's journal line, its checksum last.
pub fn tune_journal_line(
    id: &str,
    rule: &str,
    measure: Measure,
    replicate: u32,
    run: &TuneRun,
) -> String {
    let verdict = match (run.stuck, run.unresolved) {
        (true, _) => "stuck",
        (false, true) => "unresolved",
        (false, false) => "recovered",
    };
    let text = line(&[
        id.to_string(),
        rule.to_string(),
        measure.name().to_string(),
        replicate.to_string(),
        f64_exact(run.amplification),
        f64_exact(run.success),
        verdict.to_string(),
    ]);
    let text = text.trim_end_matches('\n');
    format!("{text},{}\n", checksum(text))
}

/// A journal's runs by (rule, measure, replicate), if every line after
/// the header is a run of the search `id` with `seeds` replicates, as
/// herdsim wrote it; else why not, naming the line. A last line cut short
/// (an interrupted write) is left out.
pub fn read_tune_journal(
    text: &str,
    id: &str,
    seeds: u32,
) -> Result<HashMap<(String, Measure, u32), TuneRun>, String> {
    let mut runs = HashMap::new();
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some(tune_journal_header().trim_end()) {
        return Err("line 1: not a tune journal's header".to_string());
    }
    for (n, whole) in lines.enumerate() {
        let at = |why: &str| format!("line {}: {why}", n + 2);
        let Some(text) = whole.strip_suffix('\n') else {
            break;
        };
        let record = checked_record(text, 7).map_err(|fault| {
            at(match fault {
                LineFault::Changed => "the line was changed since it was written",
                LineFault::Fields => "not a journal line (7 fields and a checksum expected)",
            })
        })?;
        if &record[0] != id {
            return Err(at(
                "a run of another search (its scenario, control or flags differ)",
            ));
        }
        let measure = Measure::named(&record[2]).ok_or_else(|| at("no such measure"))?;
        let replicate = record[3]
            .parse::<u32>()
            .ok()
            .filter(|&r| r < seeds)
            .ok_or_else(|| at("the replicate is not one of this search's seeds"))?;
        let number = |i: usize| {
            record[i]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        let (Some(amplification), Some(success)) = (number(4), number(5)) else {
            return Err(at("its figures are not what a run gives"));
        };
        let (stuck, unresolved) = match &record[6] {
            "recovered" | "draining" => (false, false),
            "stuck" => (true, false),
            "unresolved" => (false, true),
            _ => {
                return Err(at(
                    "its verdict is none of recovered, draining, stuck, unresolved",
                ));
            }
        };
        runs.insert(
            (record[1].to_string(), measure, replicate),
            TuneRun {
                amplification,
                success,
                stuck,
                unresolved,
            },
        );
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_line_reads_back_to_its_run_and_a_changed_one_is_refused() {
        let run = TuneRun {
            amplification: 1.123_456_789_012_345,
            success: 0.999_9,
            stuck: true,
            unresolved: false,
        };
        let mut text = tune_journal_header();
        text.push_str(&tune_journal_line(
            "abc",
            "grpc:10,ratio:0.1",
            Measure::Stall,
            3,
            &run,
        ));
        let runs = read_tune_journal(&text, "abc", 16).unwrap();
        assert_eq!(
            runs[&("grpc:10,ratio:0.1".to_string(), Measure::Stall, 3)],
            run
        );
        assert!(read_tune_journal(&text, "other", 16).is_err());
        assert!(read_tune_journal(&text, "abc", 3).is_err());
        let changed = text.replace("stuck", "recovered");
        assert!(read_tune_journal(&changed, "abc", 16).is_err());
        // A line cut short by a kill is left out, not refused.
        let cut = &text[..text.len() - 5];
        assert!(read_tune_journal(cut, "abc", 16).unwrap().is_empty());
    }
}
