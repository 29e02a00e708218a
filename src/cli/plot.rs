//! `herdsim plot` and the `--plot` options: pictures written as SVG.

use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use super::output::{
    MAX_TABLE_BYTES, check_distinct, check_output, read_input, warn_extensions, write_svg,
};
use crate::base::format::csv_number;
use crate::report::error::ReportError;
use crate::report::svg::{Curve, curves};
use crate::report::table_curves::{CurveQuery, TableCurve, curves_of_table};

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A CSV file written by `herdsim sweep` or `herdsim compare --csv`
    #[arg(value_name = "FILE.csv")]
    input: PathBuf,

    /// The column along the x axis, such as clients; durations (100ms) are
    /// read as ms, and trigger lists (outage@2s..2.5s) as their windows'
    /// total length in ms
    #[arg(long, value_name = "COLUMN", allow_hyphen_values = true)]
    x: String,

    /// The column along the y axis, such as calls_mean; its 95% CI band is
    /// drawn from the matching _ci95 column when there is one
    #[arg(long, value_name = "COLUMN", allow_hyphen_values = true)]
    y: String,

    /// One curve per value of this column, such as policy; several columns
    /// (policy,max_attempts) give one curve per combination
    #[arg(
        long,
        value_name = "COLUMN[,COLUMN…]",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    by: Vec<String>,

    /// Keep only rows where COLUMN equals VALUE (repeatable), such as metric=calls
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter, allow_hyphen_values = true)]
    filters: Vec<(String, String)>,

    /// Logarithmic x axis
    #[arg(long)]
    log_x: bool,

    /// Logarithmic y axis
    #[arg(long)]
    log_y: bool,

    /// The SVG file to write
    #[arg(long, short, value_name = "FILE.svg", allow_hyphen_values = true)]
    out: PathBuf,

    /// Replace the SVG file if it exists
    #[arg(long)]
    force: bool,
}

fn parse_filter(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(c, v)| (c.to_string(), v.to_string()))
        .ok_or_else(|| "expected COLUMN=VALUE, such as metric=calls".to_string())
}

pub fn plot(args: &PlotArgs) -> Result<(), CliError> {
    warn_extensions(&[("--out", Some(&args.out), "svg")]);
    check_distinct(&[("the input", &args.input), ("--out", &args.out)])?;
    check_output(&args.out, args.force)?;
    let shown = args.input.display().to_string();
    let usage = |m: String| CliError::Usage(m);
    let text = read_input(&args.input, "table", MAX_TABLE_BYTES)?;
    let reader = csv::Reader::from_reader(text.as_bytes());
    let query = CurveQuery {
        x: &args.x,
        y: &args.y,
        by: &args.by,
        filters: &args.filters,
    };
    let read = curves_of_table(reader, &query).map_err(|e| {
        usage(match e {
            ReportError::NoColumn {
                flag,
                name,
                columns,
            } => format!(
                "invalid value '{name}' for '--{flag}': '{shown}' has no such column (it has {})",
                columns.join(", ")
            ),
            ReportError::Unreadable {
                row: Some(row),
                why,
            } => format!("'{shown}' row {row}: {why}"),
            ReportError::Unreadable { row: None, why } => format!("'{shown}': {why}"),
            other => format!("'{shown}': {other}"),
        })
    })?;
    let skipped = read.skipped;
    if skipped > 0 {
        super::warn(&format!(
            "{skipped} row{} of '{shown}' left out: --x {} or --y {} is not a number there",
            if skipped == 1 { "" } else { "s" },
            args.x,
            args.y
        ));
    }
    let name = Path::new(&args.input)
        .file_stem()
        .map_or(shown.clone(), |s| s.to_string_lossy().into_owned());
    let mut y_label = args.y.clone();
    if !args.filters.is_empty() {
        let kept: Vec<String> = args
            .filters
            .iter()
            .map(|(c, v)| format!("{c}={v}"))
            .collect();
        y_label += &format!(" ({})", kept.join(", "));
    }
    let title = format!("{name}: {y_label} against {}", args.x);
    let x_label = match read.x_unit {
        Some(unit) => format!("{} ({unit})", args.x),
        None => args.x.clone(),
    };
    check_finite(args, &shown, &read.curves)?;
    let drawn: Vec<Curve> = read.curves.iter().map(TableCurve::banded).collect();
    let figure = curves(&title, &x_label, &y_label, &drawn, args.log_x, args.log_y)?;
    write_svg(&args.out, args.force, &figure)
}

/// The CI column `plot` draws as y's band: `calls_mean` → `calls_ci95`.
fn band_name(y: &str) -> String {
    match y.strip_suffix("_mean") {
        Some(metric) => format!("{metric}_ci95"),
        None => "ci95".to_string(),
    }
}

/// Refuses a point no picture can place: an x, y or CI half-width that is
/// not a finite number (NaN, inf, or past f64's largest, such as 1e400), a
/// negative half-width, or a band whose ends pass the largest finite
/// number (y = 5, ci95 = 1e308); naming the column, the value and where.
fn check_finite(args: &PlotArgs, shown: &str, curves: &[TableCurve]) -> Result<(), CliError> {
    let band = band_name(&args.y);
    for curve in curves {
        for &(x, y, ci) in &curve.points {
            let at = format!("at {} = {} (curve {})", args.x, csv_number(x), curve.label);
            let refuse = |what: String| {
                Err(CliError::Usage(format!(
                    "'{shown}': {what}: a picture needs finite numbers (below about 1.8e308)"
                )))
            };
            if !x.is_finite() {
                return refuse(format!("--x column {} holds {x}", args.x));
            }
            if !y.is_finite() {
                return refuse(format!("--y column {} is {} {at}", args.y, csv_number(y)));
            }
            if let Some(half) = ci {
                if !(half.is_finite() && half >= 0.0) {
                    return refuse(format!(
                        "the band column {band} is {} {at}, not a half-width from 0",
                        csv_number(half)
                    ));
                }
                if !((y - half).is_finite() && (y + half).is_finite()) {
                    return refuse(format!(
                        "{} {} ± {band} {} {at} passes the largest finite number",
                        args.y,
                        csv_number(y),
                        csv_number(half)
                    ));
                }
            }
        }
    }
    Ok(())
}
