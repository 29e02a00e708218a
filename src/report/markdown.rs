//! `--markdown`: Markdown tables, for READMEs and results pages.

use std::fmt::Write;

use crate::study::compare::Comparison;

/// `herdsim compare --markdown`: the command that made it, the scenario, the
/// table and the notes.
pub fn compare_markdown(comparison: &Comparison<'_>, command: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Made with `{command}` (this is its standard output).\n"
    );
    for line in super::comparison_title(comparison) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let (header, rows) = super::comparison_cells(comparison);
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i == 0 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
    for note in super::comparison_notes(comparison) {
        let _ = writeln!(out, "- {note}");
    }
    out
}
