//! A `herdsim compare --csv` file read back for a report (`herdsim report
//! --from`): results made earlier, on another machine or a cluster, shared
//! without running them again. The file keeps every point's parameters and
//! figures, not its runs, so such a report has the table but no time
//! series.

use std::collections::BTreeMap;

use crate::base::format::format_number;
use crate::report::error::ReportError;
use crate::spec::params::parameter_columns;

/// A compare file's report parts.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareFile {
    /// The workload in words: point 0's parameters, what varies, the seeds.
    pub workload: Vec<String>,
    /// The table, as Markdown.
    pub markdown: String,
    /// Points in the file.
    pub points: usize,
    /// Rows in the file.
    pub rows: usize,
}

/// The decimals a figure of `v`'s size is shown with.
fn decimals(v: f64) -> usize {
    match v.abs() {
        a if a >= 100.0 => 1,
        a if a >= 1.0 => 3,
        _ => 4,
    }
}

/// A figure for people: thousands grouped, decimals by size.
fn shown(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(v) => format_number(v, decimals(v)),
        Err(_) => text.to_string(),
    }
}

/// `mean ± half` for people (both to the mean's decimals), or the mean
/// alone.
fn with_error(mean: &str, half: Option<f64>) -> String {
    match (mean.parse::<f64>(), half) {
        (Err(_), _) if mean.is_empty() => "–".to_string(),
        (Ok(m), Some(h)) if h.is_finite() => {
            format!(
                "{} ± {}",
                format_number(m, decimals(m)),
                format_number(h, decimals(m))
            )
        }
        _ => shown(mean),
    }
}

/// What a numeric column of a compare file holds, where it is not empty.
#[derive(Clone, Copy, PartialEq)]
enum Number {
    /// Any finite number.
    Finite,
    /// A finite number from 0 (a spread, a half-width).
    FromZero,
    /// A whole number from 0 (a count of runs, a point, a seed).
    Whole,
}

/// The numeric columns a compare file may have, and what each holds.
const NUMERIC_COLUMNS: [(&str, Number); 17] = [
    ("point", Number::Whole),
    ("replicates", Number::Whole),
    ("master_seed", Number::Whole),
    ("mean", Number::Finite),
    ("sd", Number::FromZero),
    ("ci95", Number::FromZero),
    ("min", Number::Finite),
    ("max", Number::Finite),
    ("published", Number::Finite),
    ("published_low", Number::Finite),
    ("published_high", Number::Finite),
    ("published_runs", Number::Whole),
    ("herdsim_mean", Number::Finite),
    ("herdsim_sd", Number::FromZero),
    ("herdsim_n", Number::Whole),
    ("reference_mean", Number::Finite),
    ("reference_sd", Number::FromZero),
];

/// Checks every numeric field of `records` (under `header`): empty, or
/// what its column holds (a z-score finite too). NaN or infinite figures
/// would be shown as verdicts; the first bad field, by line and column.
fn check_numbers(header: &[String], records: &[csv::StringRecord]) -> Result<(), String> {
    let columns: Vec<(usize, &str, Number)> = NUMERIC_COLUMNS
        .iter()
        .chain(&[("z", Number::Finite), ("reference_n", Number::Whole)])
        .filter_map(|&(name, kind)| {
            header
                .iter()
                .position(|h| h == name)
                .map(|i| (i, name, kind))
        })
        .collect();
    for (n, record) in records.iter().enumerate() {
        for &(i, name, kind) in &columns {
            let text = record.get(i).unwrap_or_default();
            if text.is_empty() {
                continue;
            }
            let fits = match kind {
                Number::Whole => !text.starts_with('+') && text.parse::<u64>().is_ok(),
                Number::Finite => text.parse::<f64>().is_ok_and(f64::is_finite),
                Number::FromZero => text.parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0),
            };
            if !fits {
                let expected = match kind {
                    Number::Whole => "a whole number from 0",
                    Number::Finite => "a finite number",
                    Number::FromZero => "a finite number from 0",
                };
                let line = record.position().map_or(n + 2, |p| p.line() as usize);
                return Err(format!(
                    "line {line}: column '{name}': '{text}' is not {expected}"
                ));
            }
        }
    }
    Ok(())
}

/// Reads `text` (a compare file named `file`) into a report's parts.
pub fn read_compare_file(file: &str, text: &str) -> Result<CompareFile, ReportError> {
    let bad = |why: String| ReportError::Unreadable {
        row: None,
        why: format!("'{file}': {why}"),
    };
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    let at = |name: &str| header.iter().position(|h| h == name);
    let study = at("reference_row").is_some();
    let needed: &[&str] = if study {
        &[
            "point",
            "metric",
            "herdsim_mean",
            "herdsim_sd",
            "herdsim_n",
            "z",
            "verdict",
        ]
    } else {
        &[
            "point",
            "metric",
            "mean",
            "ci95",
            "min",
            "max",
            "published",
            "verdict",
        ]
    };
    if let Some(missing) = needed.iter().find(|n| at(n).is_none()) {
        return Err(bad(format!(
            "no column '{missing}': not a `herdsim compare --csv` file"
        )));
    }
    let records: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if records.is_empty() {
        return Err(bad("no rows".to_string()));
    }
    check_numbers(&header, &records).map_err(bad)?;
    let parameters: Vec<(usize, &str)> = parameter_columns()
        .into_iter()
        .filter(|c| !crate::spec::params::DERIVED_COLUMNS.contains(c))
        .filter_map(|c| at(c).map(|i| (i, c)))
        .collect();
    // Each point's parameters, from its first row.
    let point = at("point").expect("checked");
    let mut points: BTreeMap<usize, &csv::StringRecord> = BTreeMap::new();
    for r in &records {
        let p = r[point]
            .parse()
            .map_err(|_| bad(format!("point '{}' is not a number", &r[point])))?;
        points.entry(p).or_insert(r);
    }
    let first = points.values().next().expect("a row");
    let varying: Vec<(usize, &str)> = parameters
        .iter()
        .copied()
        .filter(|&(i, _)| points.values().any(|r| r[i] != first[i]))
        .collect();
    let label = |r: &csv::StringRecord| {
        let parts: Vec<String> = varying
            .iter()
            .filter(|&&(i, _)| !r[i].is_empty())
            .map(|&(i, c)| format!("{c}={}", &r[i]))
            .collect();
        if parts.is_empty() {
            format!("point {}", &r[point])
        } else {
            parts.join(" ")
        }
    };
    let mut workload = vec![format!(
        "Point 0: {}",
        parameters
            .iter()
            .filter(|&&(i, _)| !first[i].is_empty())
            .map(|&(i, c)| format!("{c} = {}", &first[i]))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    for &(i, c) in &varying {
        let mut values: Vec<&str> = Vec::new();
        for r in points.values() {
            if !values.contains(&&r[i]) {
                values.push(&r[i]);
            }
        }
        let values: Vec<&str> = values
            .into_iter()
            .map(|v| if v.is_empty() { "–" } else { v })
            .collect();
        workload.push(format!("Varies: `{c}` over {}", values.join(", ")));
    }
    if let (Some(r), Some(s)) = (at("replicates"), at("master_seed")) {
        workload.push(format!(
            "{} points × {} replicate seeds from master seed {}",
            points.len(),
            &first[r],
            &first[s]
        ));
    }
    let field =
        |r: &csv::StringRecord, name: &str| at(name).map_or(String::new(), |i| r[i].to_string());
    let number = |r: &csv::StringRecord, name: &str| field(r, name).parse::<f64>().ok();
    let (header_row, rows): (&[&str], Vec<Vec<String>>) = if study {
        let se = |r: &csv::StringRecord, side: &str| {
            Some(number(r, &format!("{side}_sd"))? / number(r, &format!("{side}_n"))?.sqrt())
        };
        (
            &[
                "point",
                "reference row",
                "metric",
                "herdsim ± se",
                "reference ± se",
                "z",
                "verdict",
            ],
            records
                .iter()
                .map(|r| {
                    vec![
                        label(r),
                        field(r, "reference_row"),
                        field(r, "metric"),
                        with_error(&field(r, "herdsim_mean"), se(r, "herdsim")),
                        with_error(&field(r, "reference_mean"), se(r, "reference")),
                        field(r, "z"),
                        field(r, "verdict"),
                    ]
                })
                .collect(),
        )
    } else {
        (
            &[
                "point",
                "metric",
                "mean ± 95% CI",
                "min",
                "max",
                "published",
                "verdict",
            ],
            records
                .iter()
                .map(|r| {
                    vec![
                        label(r),
                        field(r, "metric"),
                        with_error(&field(r, "mean"), number(r, "ci95")),
                        shown(&field(r, "min")),
                        shown(&field(r, "max")),
                        shown(&field(r, "published")),
                        field(r, "verdict"),
                    ]
                })
                .collect(),
        )
    };
    let header_row: Vec<String> = header_row.iter().map(|h| h.to_string()).collect();
    let markdown = format!(
        "Read from `{file}` ({} rows): the figures as that comparison wrote them; its runs are \
         not redone, so there are no time series here.\n\n{}",
        records.len(),
        super::markdown::markdown_table(&header_row, &rows)
    );
    Ok(CompareFile {
        workload,
        markdown,
        points: points.len(),
        rows: records.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compare_file_becomes_a_long_table_labelled_by_what_varies() {
        let text = "point,policy,clients,replicates,master_seed,metric,mean,sd,ci95,min,max,published,published_low,published_high,published_runs,published_source,verdict\n\
                    0,none,1000,100,42,calls,500500,0,0,500500,500500,28000,27500,28500,,seed 002 table,17.9× higher\n\
                    1,full,1000,100,42,calls,4726,17,3.4,4690,4770,3400,3350,3450,,seed 002 table,39% higher\n";
        let read = read_compare_file("c.csv", text).unwrap();
        assert_eq!((read.points, read.rows), (2, 2));
        assert!(read.workload[0].starts_with("Point 0: policy = none, clients = 1000"));
        assert_eq!(read.workload[1], "Varies: `policy` over none, full");
        assert!(read.markdown.contains(
            "| policy=full | calls | 4,726.0 ± 3.4 | 4,690.0 | 4,770.0 | 3,400.0 | 39% higher |"
        ));
        let err = read_compare_file("x.csv", "a,b\n1,2\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("not a `herdsim compare --csv` file")
        );
    }
}
