//! Curves read from a results table (a sweep file, or `compare --csv`'s long
//! format) for `herdsim plot`: one curve per group, points in x order, with
//! the 95% CI column that goes with y as a band.

use std::collections::BTreeMap;
use std::io::Read;

use crate::report::error::ReportError;
use crate::report::svg::Curve;

/// What to read from a table.
#[derive(Debug, Clone, Copy)]
pub struct CurveQuery<'a> {
    /// The x column.
    pub x: &'a str,
    /// The y column.
    pub y: &'a str,
    /// The column whose values name the curves; one curve named `y` if none.
    pub by: Option<&'a str>,
    /// Only rows whose column (first) holds the value (second).
    pub filters: &'a [(String, String)],
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
/// are left out, and counted (the second value). A table with a column
/// named twice is refused: which one a name means would be a guess.
pub fn curves_of_table<R: Read>(
    mut reader: csv::Reader<R>,
    query: &CurveQuery<'_>,
) -> Result<(Vec<Curve>, usize), ReportError> {
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
    let by = query.by.map(|b| column(b, "by")).transpose()?;
    let band = band_column(query.y).and_then(|b| header.iter().position(|h| h == b));
    let filters = query
        .filters
        .iter()
        .map(|(c, v)| Ok((column(c, "where")?, v.as_str())))
        .collect::<Result<Vec<_>, ReportError>>()?;

    let mut skipped = 0;
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<(f64, f64, Option<f64>)>> = BTreeMap::new();
    for (n, record) in reader.records().enumerate() {
        let r = record.map_err(|e| ReportError::Unreadable {
            row: Some(n + 2),
            why: e.to_string(),
        })?;
        if filters.iter().any(|&(c, v)| r.get(c) != Some(v)) {
            continue;
        }
        let number = |i: usize| r.get(i).and_then(|v| v.parse::<f64>().ok());
        let (Some(xv), Some(yv)) = (number(x), number(y)) else {
            skipped += 1;
            continue;
        };
        let label = by.and_then(|b| r.get(b)).unwrap_or(query.y).to_string();
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
            Curve { label, points }
        })
        .collect();
    Ok((curves, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, query: &CurveQuery<'_>) -> Result<(Vec<Curve>, usize), ReportError> {
        curves_of_table(csv::Reader::from_reader(text.as_bytes()), query)
    }

    #[test]
    fn curves_group_sort_and_carry_their_band() {
        let table = "policy,clients,calls_mean,calls_ci95,metric\n\
                     full,100,50,2,a\nfull,10,5,1,a\nnone,10,55,0,a\nnone,20,x,0,a\nfull,30,9,1,b\n";
        let filters = [("metric".to_string(), "a".to_string())];
        let query = CurveQuery {
            x: "clients",
            y: "calls_mean",
            by: Some("policy"),
            filters: &filters,
        };
        let (curves, skipped) = read(table, &query).unwrap();
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
        let missing = CurveQuery {
            by: Some("colour"),
            ..query
        };
        assert!(matches!(
            read(table, &missing),
            Err(ReportError::NoColumn { flag: "by", .. })
        ));
    }
}
