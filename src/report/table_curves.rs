//! Curves read from a results table (a sweep file, or `compare --csv`'s long
//! format) for `herdsim plot`: one curve per group, points in x order, with
//! the 95% CI column that goes with y as a band.

use std::collections::BTreeMap;
use std::io::Read;

use crate::base::time::Nanos;
use crate::report::error::ReportError;
use crate::report::svg::Curve;

/// What to read from a table.
#[derive(Debug, Clone, Copy)]
pub struct CurveQuery<'a> {
    /// The x column.
    pub x: &'a str,
    /// The y column.
    pub y: &'a str,
    /// The columns whose values name the curves (one curve per combination);
    /// one curve named `y` if none.
    pub by: &'a [String],
    /// Only rows whose column (first) holds the value (second).
    pub filters: &'a [(String, String)],
}

/// One curve read from a table: its label and points `(x, y, half-width)`,
/// the half-width as the table's band column gives it (checked by the
/// caller, whose errors name it, before [`TableCurve::banded`] draws it).
#[derive(Debug, Clone, PartialEq)]
pub struct TableCurve {
    /// The group's label (the `--by` value).
    pub label: String,
    /// Points in x order.
    pub points: Vec<(f64, f64, Option<f64>)>,
}

impl TableCurve {
    /// The curve to draw: each band `y ± half-width`.
    pub fn banded(&self) -> Curve {
        Curve {
            label: self.label.clone(),
            points: self
                .points
                .iter()
                .map(|&(x, y, h)| (x, y, h.map(|h| (y - h, y + h))))
                .collect(),
        }
    }
}

/// The curves read from a table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableCurves {
    /// One curve per group, in the order the groups first appear.
    pub curves: Vec<TableCurve>,
    /// Rows left out because x or y is not a number there.
    pub skipped: usize,
    /// How x values that are not plain numbers were read, for the axis's
    /// label: `ms` for durations (`100ms`), `ms, trigger windows' total
    /// length` for trigger lists (`outage@2s..2.5s`).
    pub x_unit: Option<&'static str>,
}

/// An x value as a number: a number as it is, a duration in ms, or a trigger
/// list as the total length of its windows in ms (a sweep over trigger
/// lengths then plots against the length), with the unit it was read in.
fn x_number(text: &str) -> Option<(f64, Option<&'static str>)> {
    if let Ok(v) = text.parse::<f64>() {
        return Some((v, None));
    }
    if let Ok(us) = crate::base::time::parse_duration(text) {
        return Some((us.ticks() as f64 / 1e3, Some("ms")));
    }
    let triggers = text.parse::<crate::model::server::Triggers>().ok()?;
    if triggers.0.is_empty() {
        return None;
    }
    let ns: Nanos = triggers.0.iter().map(|t| t.to - t.from).sum();
    Some((ns.ticks() as f64 / 1e6, Some("total window length, ms")))
}

/// The CI column that goes with `y`: `calls_mean` → `calls_ci95`, `mean` → `ci95`.
fn band_column(y: &str) -> Option<String> {
    if y == "mean" {
        Some("ci95".to_string())
    } else {
        y.strip_suffix("_mean").map(|m| format!("{m}_ci95"))
    }
}

/// The curves `query` asks of the table `reader` reads: groups in the order
/// they first appear, points in x order; rows whose x or y is not a number
/// (x: see [`x_number`]) are left out, and counted. A table with a column
/// named twice is refused: which one a name means would be a guess.
pub fn curves_of_table<R: Read>(
    mut reader: csv::Reader<R>,
    query: &CurveQuery<'_>,
) -> Result<TableCurves, ReportError> {
    let header = reader
        .headers()
        .map_err(|e| ReportError::Unreadable {
            row: None,
            why: e.to_string(),
        })?
        .clone();
    if let Some(twice) = header
        .iter()
        .enumerate()
        .find(|(i, h)| header.iter().skip(i + 1).any(|other| other == *h))
        .map(|(_, h)| h.to_string())
    {
        return Err(ReportError::ColumnTwice { name: twice });
    }
    let column = |name: &str, flag: &'static str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| ReportError::NoColumn {
                flag,
                name: name.to_string(),
                columns: header.iter().map(str::to_string).collect(),
            })
    };
    let x = column(query.x, "x")?;
    let y = column(query.y, "y")?;
    let by = query
        .by
        .iter()
        .map(|b| column(b, "by"))
        .collect::<Result<Vec<_>, ReportError>>()?;
    let band = band_column(query.y).and_then(|b| header.iter().position(|h| h == b));
    let filters = query
        .filters
        .iter()
        .map(|(c, v)| Ok((column(c, "where")?, v.as_str())))
        .collect::<Result<Vec<_>, ReportError>>()?;

    let mut skipped = 0;
    let mut x_unit = None;
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<(f64, f64, Option<f64>)>> = BTreeMap::new();
    let records = reader
        .records()
        .enumerate()
        .map(|(n, record)| {
            record.map_err(|e| ReportError::Unreadable {
                row: Some(n + 2),
                why: e.to_string(),
            })
        })
        .collect::<Result<Vec<_>, ReportError>>()?;
    // With several --by columns, a value more than half the rows share is
    // the baseline, and labels leave it out (`budget=…` rather than every
    // other column's `none`); a row with nothing but baselines is
    // "baseline".
    let mut baseline: BTreeMap<usize, String> = BTreeMap::new();
    if by.len() > 1 {
        for &i in &by {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            let kept = records
                .iter()
                .filter(|r| filters.iter().all(|&(c, v)| r.get(c) == Some(v)));
            let mut rows = 0;
            for r in kept {
                *counts.entry(r.get(i).unwrap_or_default()).or_default() += 1;
                rows += 1;
            }
            if let Some((value, _)) = counts.into_iter().find(|&(_, n)| 2 * n > rows) {
                baseline.insert(i, value.to_string());
            }
        }
    }
    for r in &records {
        if filters.iter().any(|&(c, v)| r.get(c) != Some(v)) {
            continue;
        }
        let number = |i: usize| r.get(i).and_then(|v| v.parse::<f64>().ok());
        let (Some((xv, unit)), Some(yv)) = (r.get(x).and_then(x_number), number(y)) else {
            skipped += 1;
            continue;
        };
        x_unit = x_unit.or(unit);
        let label = match by.as_slice() {
            [] => query.y.to_string(),
            [one] => shown(r.get(*one).unwrap_or_default()).to_string(),
            several => {
                let named: Vec<String> = several
                    .iter()
                    .zip(query.by)
                    .filter_map(|(&i, name)| {
                        let value = r.get(i).unwrap_or_default();
                        let shown = baseline.get(&i).is_none_or(|b| b != value);
                        shown.then(|| format!("{name}={}", self::shown(value)))
                    })
                    .collect();
                if named.is_empty() {
                    "baseline".to_string()
                } else {
                    named.join(", ")
                }
            }
        };
        if !groups.contains_key(&label) {
            order.push(label.clone());
        }
        groups
            .entry(label)
            .or_default()
            .push((xv, yv, band.and_then(number)));
    }
    let curves = order
        .into_iter()
        .map(|label| {
            let mut points = groups.remove(&label).unwrap_or_default();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            TableCurve { label, points }
        })
        .collect();
    Ok(TableCurves {
        curves,
        skipped,
        x_unit,
    })
}

/// A `--by` value as a legend shows it: a sweep writes a parameter left at
/// its default (no budget, unlimited attempts) as an empty cell, which a
/// legend must not leave blank.
fn shown(value: &str) -> &str {
    if value.is_empty() { "default" } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, query: &CurveQuery<'_>) -> Result<TableCurves, ReportError> {
        curves_of_table(csv::Reader::from_reader(text.as_bytes()), query)
    }

    #[test]
    fn a_parameter_left_at_its_default_is_labelled_so() {
        let table = "budget,rate,stuck_mean,stuck_ci95\n,100,1,0\n\"grpc:10,ratio:1\",100,0,0\n";
        let by = ["budget".to_string()];
        let query = CurveQuery {
            x: "rate",
            y: "stuck_mean",
            by: &by,
            filters: &[],
        };
        let labels: Vec<String> = read(table, &query)
            .unwrap()
            .curves
            .into_iter()
            .map(|c| c.label)
            .collect();
        assert_eq!(labels, ["default", "grpc:10,ratio:1"]);
    }

    #[test]
    fn curves_group_sort_and_carry_their_band() {
        let table = "policy,clients,calls_mean,calls_ci95,metric\n\
                     full,100,50,2,a\nfull,10,5,1,a\nnone,10,55,0,a\nnone,20,x,0,a\nfull,30,9,1,b\n";
        let filters = [("metric".to_string(), "a".to_string())];
        let by = ["policy".to_string()];
        let query = CurveQuery {
            x: "clients",
            y: "calls_mean",
            by: &by,
            filters: &filters,
        };
        let TableCurves {
            curves,
            skipped,
            x_unit,
        } = read(table, &query).unwrap();
        assert_eq!(x_unit, None, "plain numbers");
        assert_eq!(skipped, 1, "none at 20 has no number");
        assert_eq!(curves.len(), 2);
        assert_eq!(curves[0].label, "full");
        assert_eq!(
            curves[0].points,
            [(10.0, 5.0, Some(1.0)), (100.0, 50.0, Some(2.0))]
        );
        assert_eq!(
            curves[1].points,
            [(10.0, 55.0, Some(0.0))],
            "the non-numeric row is left out"
        );
        let colour = ["colour".to_string()];
        let missing = CurveQuery {
            by: &colour,
            ..query
        };
        assert!(matches!(
            read(table, &missing),
            Err(ReportError::NoColumn { flag: "by", .. })
        ));
    }

    #[test]
    fn durations_and_trigger_lists_are_read_as_milliseconds() {
        let table = "trigger,policy,max_attempts,stuck_mean\n\
                     outage@2s..2.5s,a,4,1\n\
                     outage@2s..2.1s+spike:2@3s..3.05s,a,4,0.5\n\
                     250us,a,1,0\n\
                     none,a,1,0\n";
        let by = ["policy".to_string(), "max_attempts".to_string()];
        let query = CurveQuery {
            x: "trigger",
            y: "stuck_mean",
            by: &by,
            filters: &[],
        };
        let read = read(table, &query).unwrap();
        assert_eq!(read.skipped, 1, "no trigger has no length");
        assert_eq!(read.x_unit, Some("total window length, ms"));
        let labels: Vec<&str> = read.curves.iter().map(|c| c.label.as_str()).collect();
        // Every row's policy is a: the baseline, left out of the labels; no
        // max_attempts value is more than half the rows', so both show.
        assert_eq!(labels, ["max_attempts=4", "max_attempts=1"]);
        assert_eq!(
            read.curves[0].points,
            [(150.0, 0.5, None), (500.0, 1.0, None)]
        );
        assert_eq!(read.curves[1].points, [(0.25, 0.0, None)]);
    }
}
