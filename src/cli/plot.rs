//! `herdsim plot` and the `--plot` options: pictures written as SVG.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use super::sweep::{check_output, write_whole};
use crate::report::svg::{Curve, Figure, curves};

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A CSV file written by `herdsim sweep` or `herdsim compare --csv`
    #[arg(value_name = "FILE.csv")]
    input: PathBuf,

    /// The column along the x axis, such as clients
    #[arg(long, value_name = "COLUMN")]
    x: String,

    /// The column along the y axis, such as calls_mean; its 95% CI band is
    /// drawn from the matching _ci95 column when there is one
    #[arg(long, value_name = "COLUMN")]
    y: String,

    /// One curve per value of this column, such as policy
    #[arg(long, value_name = "COLUMN")]
    by: Option<String>,

    /// Keep only rows where COLUMN equals VALUE (repeatable), such as metric=calls
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    filters: Vec<(String, String)>,

    /// Logarithmic x axis
    #[arg(long)]
    log_x: bool,

    /// Logarithmic y axis
    #[arg(long)]
    log_y: bool,

    /// The SVG file to write
    #[arg(long, short, value_name = "FILE.svg")]
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

/// The CI column that goes with `y`: `calls_mean` → `calls_ci95`, `mean` → `ci95`.
fn band_column(y: &str) -> Option<String> {
    if y == "mean" {
        Some("ci95".to_string())
    } else {
        y.strip_suffix("_mean").map(|m| format!("{m}_ci95"))
    }
}

pub fn plot(args: &PlotArgs) -> Result<(), CliError> {
    check_output(&args.out, args.force)?;
    let shown = args.input.display().to_string();
    let usage = |m: String| CliError::Usage(m);
    let mut reader = csv::Reader::from_path(&args.input)
        .map_err(|e| usage(format!("cannot read '{shown}': {e}")))?;
    let header = reader
        .headers()
        .map_err(|e| usage(format!("'{shown}': {e}")))?
        .clone();
    let column = |name: &str, flag: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            usage(format!(
                "invalid value '{name}' for '--{flag}': '{shown}' has no such column (it has {})",
                header.iter().collect::<Vec<_>>().join(", ")
            ))
        })
    };
    let x = column(&args.x, "x")?;
    let y = column(&args.y, "y")?;
    let by = args.by.as_deref().map(|b| column(b, "by")).transpose()?;
    let band = band_column(&args.y).and_then(|b| header.iter().position(|h| h == b));
    let filters = args
        .filters
        .iter()
        .map(|(c, v)| Ok((column(c, "where")?, v.as_str())))
        .collect::<Result<Vec<_>, CliError>>()?;

    // Groups in order of first appearance, points in x order.
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<(f64, f64, Option<f64>)>> = BTreeMap::new();
    for (n, record) in reader.records().enumerate() {
        let r = record.map_err(|e| usage(format!("'{shown}' row {}: {e}", n + 2)))?;
        if filters.iter().any(|&(c, v)| r.get(c) != Some(v)) {
            continue;
        }
        let number = |i: usize| r.get(i).and_then(|v| v.parse::<f64>().ok());
        let (Some(xv), Some(yv)) = (number(x), number(y)) else {
            continue;
        };
        let label = by.and_then(|b| r.get(b)).unwrap_or(&args.y).to_string();
        if !groups.contains_key(&label) {
            order.push(label.clone());
        }
        groups
            .entry(label)
            .or_default()
            .push((xv, yv, band.and_then(number)));
    }
    let series: Vec<Curve> = order
        .into_iter()
        .map(|label| {
            let mut points = groups.remove(&label).unwrap_or_default();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Curve { label, points }
        })
        .collect();
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
    let figure =
        curves(&title, &args.x, &y_label, &series, args.log_x, args.log_y).map_err(usage)?;
    write_svg(&args.out, args.force, &figure)
}

/// Writes a figure whole (never half a file), as the other outputs are.
pub fn write_svg(path: &Path, force: bool, figure: &Figure) -> Result<(), CliError> {
    write_whole(path, force, &figure.svg)
}
