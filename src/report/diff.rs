//! `herdsim diff`'s report: two assessments of one service, each under its
//! own configuration, figure by figure, with the z-score of every
//! difference that has one and a summary line that names the figure that
//! moved most and the settings behind it.

use serde_json::json;

use super::assessment::{Answer, Part};
use super::format_number;
use super::table::aligned_text_first;
use crate::spec::RunSpec;
use crate::spec::params::PARAMS;

/// |z| from which a difference is more than the seeds' noise.
pub const NOTABLE_Z: f64 = 3.0;

/// One figure of both assessments.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DiffRow {
    /// What the figure is.
    pub figure: String,
    /// As the assessments show it.
    pub a: String,
    pub b: String,
    /// B − A, in the figure's unit, where both have a value.
    pub difference: Option<f64>,
    /// The difference's z-score, where the figure has a spread.
    pub z: Option<f64>,
    /// For a boundary (margin, headroom): whether the surely-survived and
    /// surely-down places of the two do not overlap.
    pub apart: Option<bool>,
    /// The figure's unit, for the difference.
    pub unit: &'static str,
    /// Decimals the difference is shown with.
    #[serde(skip)]
    pub decimals: usize,
}

/// A figure of `answer` by name.
fn figure(answer: &Answer, name: &str) -> Option<f64> {
    answer
        .figures
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| *v)
}

/// A table's figures as numbers, by column ([`Part::Table`]'s).
type Numbers = [(&'static str, Vec<Option<f64>>)];

/// The table `name` of `answer`: its rows and its numbers.
fn table<'a>(answer: &'a Answer, name: &str) -> Option<(&'a [Vec<String>], &'a Numbers)> {
    answer.parts.iter().find_map(|p| match p {
        Part::Table {
            name: n,
            rows,
            numbers,
            ..
        } if *n == name => Some((rows.as_slice(), numbers.as_slice())),
        _ => None,
    })
}

/// Column `column` of a table's numbers.
fn column(numbers: &Numbers, column: &str, row: usize) -> Option<f64> {
    numbers
        .iter()
        .find(|(n, _)| *n == column)
        .and_then(|(_, v)| v.get(row).copied().flatten())
}

/// The z-score of `b − a` for means with 95% half-widths `ci_a`, `ci_b`.
fn z_of_means(a: f64, ci_a: f64, b: f64, ci_b: f64) -> Option<f64> {
    let se = ((ci_a / 1.96).powi(2) + (ci_b / 1.96).powi(2)).sqrt();
    if se > 0.0 {
        Some((b - a) / se)
    } else if a == b {
        Some(0.0)
    } else {
        None
    }
}

/// The two-proportion z-score of `b − a` for `k` of `n` each (pooled).
fn z_of_shares((ka, na): (f64, f64), (kb, nb): (f64, f64)) -> Option<f64> {
    if na == 0.0 || nb == 0.0 {
        return None;
    }
    let pooled = (ka + kb) / (na + nb);
    let se = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    if se > 0.0 {
        Some((kb / nb - ka / na) / se)
    } else {
        Some(0.0)
    }
}

/// A boundary table's rows (`margin`, `headroom`) side by side.
fn boundaries(a: &Answer, b: &Answer, name: &str, what: &str, unit: &'static str) -> Vec<DiffRow> {
    let (Some((rows_a, na)), Some((rows_b, nb))) = (table(a, name), table(b, name)) else {
        return Vec::new();
    };
    let (value, below, above) = match name {
        "margin" => ("margin_s", "surely_survived_s", "surely_down_s"),
        _ => ("headroom_rho", "surely_survived_rho", "surely_down_rho"),
    };
    rows_a
        .iter()
        .zip(rows_b)
        .enumerate()
        .map(|(i, (ra, rb))| {
            let (va, vb) = (column(na, value, i), column(nb, value, i));
            // Apart when one's surely-down place is at or before the
            // other's surely-survived one.
            let apart = match (
                column(na, below, i),
                column(na, above, i),
                column(nb, below, i),
                column(nb, above, i),
            ) {
                (Some(la), Some(ha), Some(lb), Some(hb)) => Some(ha <= lb || hb <= la),
                _ => None,
            };
            DiffRow {
                figure: format!("{what}, {}", ra[0]),
                a: ra[1].clone(),
                b: rb[1].clone(),
                difference: va.zip(vb).map(|(x, y)| y - x),
                z: None,
                apart,
                unit,
                decimals: 2,
            }
        })
        .collect()
}

/// Every figure both assessments have, side by side.
pub fn diff_rows(a: &Answer, b: &Answer) -> Vec<DiffRow> {
    let mut rows = boundaries(a, b, "margin", "margin", "s");
    rows.extend(boundaries(a, b, "headroom", "headroom", "ρ"));
    let mean = |name: &str, ci: &str, figure_name: &str, decimals: usize, unit: &'static str| {
        let (va, vb) = (figure(a, name), figure(b, name));
        let (ca, cb) = (figure(a, ci).unwrap_or(0.0), figure(b, ci).unwrap_or(0.0));
        let shown = |v: Option<f64>, c: f64| {
            v.map_or("-".to_string(), |v| {
                format!(
                    "{} ± {}",
                    format_number(v, decimals),
                    format_number(c, decimals)
                )
            })
        };
        DiffRow {
            figure: figure_name.to_string(),
            a: shown(va, ca),
            b: shown(vb, cb),
            difference: va.zip(vb).map(|(x, y)| y - x),
            z: va.zip(vb).and_then(|(x, y)| z_of_means(x, ca, y, cb)),
            apart: None,
            unit,
            decimals,
        }
    };
    rows.push(mean(
        "outage_attempts_per_request",
        "outage_attempts_ci95",
        "attempts per request in a full outage",
        3,
        "",
    ));
    let partial = figure(a, "partial_failing_share").unwrap_or(f64::NAN);
    let share = format_number(partial * 100.0, 0);
    rows.push(mean(
        "partial_success",
        "partial_success_ci95",
        &format!("success with {share}% of attempts failing"),
        5,
        "",
    ));
    rows.push(mean(
        "partial_attempts_per_request",
        "partial_attempts_ci95",
        &format!("attempts per request with {share}% failing"),
        3,
        "",
    ));
    let stuck =
        |x: &Answer| figure(x, "after_partial_stuck").zip(figure(x, "after_partial_decided"));
    let shown = |s: Option<(f64, f64)>| s.map_or("-".to_string(), |(k, n)| format!("{k} of {n}"));
    let (sa, sb) = (stuck(a), stuck(b));
    rows.push(DiffRow {
        figure: format!("runs stuck after 10 s of {share}% failing"),
        a: shown(sa),
        b: shown(sb),
        difference: sa
            .zip(sb)
            .filter(|((_, na), (_, nb))| *na > 0.0 && *nb > 0.0)
            .map(|((ka, na), (kb, nb))| kb / nb - ka / na),
        z: sa.zip(sb).and_then(|(x, y)| z_of_shares(x, y)),
        apart: None,
        unit: "share",
        decimals: 3,
    });
    let recovery = |x: &Answer| figure(x, "recovery_median_ms");
    let recovered = |x: &Answer| {
        let (k, n) = (figure(x, "recovered_runs"), figure(x, "recovery_runs"));
        match (recovery(x), k.zip(n)) {
            (Some(ms), Some((k, n))) => {
                format!("{} ms ({k} of {n} recovered)", format_number(ms, 0))
            }
            (None, Some((k, n))) => format!("- ({k} of {n} recovered)"),
            _ => "-".to_string(),
        }
    };
    rows.push(DiffRow {
        figure: "median recovery after the blip".to_string(),
        a: recovered(a),
        b: recovered(b),
        difference: recovery(a).zip(recovery(b)).map(|(x, y)| y - x),
        z: None,
        apart: None,
        unit: "ms",
        decimals: 0,
    });
    rows
}

/// The settings of `b` that differ from `a`'s, `key a → b`, in registry
/// order.
pub fn settings_that_differ(a: &RunSpec, b: &RunSpec) -> Vec<String> {
    PARAMS
        .iter()
        .filter_map(|p| {
            let (x, y) = ((p.show)(a), (p.show)(b));
            (x != y).then(|| {
                let none = || p.absent.unwrap_or("none").to_string();
                format!(
                    "{} {} → {}",
                    p.key,
                    x.unwrap_or_else(none),
                    y.unwrap_or_else(none)
                )
            })
        })
        .collect()
}

/// The summary line: the figure that moved most beyond the noise, the
/// boundaries whose intervals are apart, and the settings behind them.
pub fn summary(rows: &[DiffRow], settings: &[String]) -> String {
    let notable: Vec<&DiffRow> = rows
        .iter()
        .filter(|r| r.z.is_some_and(|z| z.abs() >= NOTABLE_Z) || r.apart == Some(true))
        .collect();
    let most = rows
        .iter()
        .filter(|r| r.z.is_some_and(|z| z.abs() >= NOTABLE_Z))
        .max_by(|x, y| x.z.unwrap().abs().total_cmp(&y.z.unwrap().abs()));
    let apart: Vec<String> = rows
        .iter()
        .filter(|r| r.apart == Some(true))
        .map(|r| format!("{}: {} → {}", r.figure, r.a, r.b))
        .collect();
    let mut parts = Vec::new();
    if notable.is_empty() {
        parts.push(format!(
            "A and B do not differ beyond the seeds' noise (every |z| < {NOTABLE_Z}, every \
             boundary's interval overlapping)"
        ));
    } else {
        if let Some(r) = most {
            parts.push(format!(
                "B differs most in {}: {} → {} (z = {})",
                r.figure,
                r.a,
                r.b,
                format_number(r.z.unwrap(), 1)
            ));
        }
        if !apart.is_empty() {
            parts.push(format!("boundaries apart: {}", apart.join("; ")));
        }
    }
    parts.push(if settings.is_empty() {
        "no setting differs".to_string()
    } else {
        format!("settings that differ: {}", settings.join(", "))
    });
    parts.join("; ")
}

/// The report as text.
pub fn diff_text(heading: &[String], rows: &[DiffRow], summary_line: &str) -> String {
    let mut out = heading.join("\n");
    out.push_str("\n\n");
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.figure.clone(),
                r.a.clone(),
                r.b.clone(),
                match (r.difference, r.unit) {
                    (Some(d), unit) => {
                        let text = format_number(d, r.decimals);
                        if unit.is_empty() || unit == "share" {
                            text
                        } else {
                            format!("{text} {unit}")
                        }
                    }
                    (None, _) => "-".to_string(),
                },
                match (r.z, r.apart) {
                    (Some(z), _) => format_number(z, 1),
                    (None, Some(true)) => "apart".to_string(),
                    (None, Some(false)) => "overlap".to_string(),
                    (None, None) => "-".to_string(),
                },
            ]
        })
        .collect();
    out += &aligned_text_first(&["figure", "A", "B", "B − A", "z"], &table, 3);
    out.push('\n');
    out += summary_line;
    out.push('\n');
    out
}

/// The report as JSON.
pub fn diff_json(
    heading: &[String],
    rows: &[DiffRow],
    settings: &[String],
    summary_line: &str,
) -> String {
    let value = json!({
        "heading": heading,
        "figures": rows,
        "settings_that_differ": settings,
        "summary": summary_line,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("a report serialises");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_scores_of_means_and_shares() {
        // 1.0 ± 0.196 against 2.0 ± 0.196: se 0.1 each, √2·0.1 apart.
        let z = z_of_means(1.0, 0.196, 2.0, 0.196).unwrap();
        assert!((z - 1.0 / (0.02_f64).sqrt()).abs() < 1e-9, "{z}");
        assert_eq!(z_of_means(3.0, 0.0, 3.0, 0.0), Some(0.0));
        assert_eq!(z_of_means(3.0, 0.0, 1.0, 0.0), None);
        // 0 of 16 against 16 of 16: pooled 0.5, se √(0.25·(2/16)).
        let z = z_of_shares((0.0, 16.0), (16.0, 16.0)).unwrap();
        assert!((z - 1.0 / (0.25_f64 * 0.125).sqrt()).abs() < 1e-9, "{z}");
        assert_eq!(z_of_shares((0.0, 0.0), (1.0, 4.0)), None);
    }

    #[test]
    fn the_summary_names_the_largest_z_and_the_settings() {
        let row = |figure: &str, z: Option<f64>, apart: Option<bool>| DiffRow {
            figure: figure.to_string(),
            a: "a".to_string(),
            b: "b".to_string(),
            difference: Some(1.0),
            z,
            apart,
            unit: "",
            decimals: 1,
        };
        let rows = vec![
            row("x", Some(2.0), None),
            row("y", Some(-8.0), None),
            row("z", Some(4.0), None),
            row("m", None, Some(false)),
        ];
        let line = summary(&rows, &["base 1s → 50ms".to_string()]);
        assert!(
            line.starts_with("B differs most in y: a → b (z = -8.0)"),
            "{line}"
        );
        assert!(
            line.ends_with("settings that differ: base 1s → 50ms"),
            "{line}"
        );
        let calm = summary(&rows[..1], &[]);
        assert!(calm.starts_with("A and B do not differ"), "{calm}");
        let apart = summary(&[row("margin, outage", None, Some(true))], &[]);
        assert!(
            apart.contains("boundaries apart: margin, outage: a → b"),
            "{apart}"
        );
    }
}
