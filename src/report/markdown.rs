//! `--markdown`: Markdown tables, for READMEs and results pages.

use std::fmt::Write;

use crate::study::compare::Comparison;

/// A Markdown table: the first column left-aligned, the rest (numbers)
/// right-aligned.
pub(crate) fn markdown_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i == 0 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

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
    out += &markdown_table(&header, &rows);
    out.push('\n');
    for note in super::comparison_notes(comparison) {
        let _ = writeln!(out, "- {note}");
    }
    out
}

/// How a parameter table names its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamNames {
    /// As command-line flags (`--max-attempts`), for the README.
    Flags,
    /// As scenario keys (`max_attempts`), for `scenarios/README.md`.
    Keys,
}

/// Every registry parameter as a Markdown table: name, meaning, default,
/// accepted values, CSV columns. The README and `scenarios/README.md` hold
/// this table as it is (a test checks), and `herdsim params --markdown`
/// prints it.
pub fn params_markdown(names: ParamNames) -> String {
    let mut out = String::new();
    let first = match names {
        ParamNames::Flags => "flag",
        ParamNames::Keys => "key",
    };
    let _ = writeln!(
        out,
        "| {first} | meaning | default | accepted | CSV columns |\n| --- | --- | --- | --- | --- |"
    );
    for param in &crate::spec::params::PARAMS {
        let name = match names {
            ParamNames::Flags => format!("`--{}`", param.flag()),
            ParamNames::Keys => format!("`{}`", param.key),
        };
        let columns: Vec<String> = param.columns.iter().map(|c| format!("`{c}`")).collect();
        // Words in angle brackets would read as HTML: they go in code spans.
        let cell = |text: &str| {
            if text.contains('<') {
                format!("`{text}`")
            } else {
                text.to_string()
            }
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} |",
            cell(param.doc),
            cell(&param.default_text()),
            cell(param.accepts),
            columns.join(", ")
        );
    }
    out
}
