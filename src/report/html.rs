//! A report as one self-contained HTML file (`herdsim report`): the
//! workload in words, the comparison's tables, every picture inline as SVG,
//! and the command that reproduces it. No script, no external asset, no
//! network: it reads with JavaScript off and prints on its own. The
//! tables come from the same Markdown `compare --markdown` prints, turned
//! into HTML here (the few constructs it uses), so the two never disagree.

use std::fmt::Write;

/// What a report holds.
#[derive(Debug, Clone)]
pub struct ReportPage<'a> {
    /// The page's title (the scenario's name).
    pub title: &'a str,
    /// What the scenario is for, if it says.
    pub description: Option<&'a str>,
    /// What happened at each point, as Markdown (empty: no summary).
    pub summary: &'a str,
    /// The workload in words, a line each.
    pub workload: Vec<String>,
    /// The comparison, as `compare --markdown` prints it (after its first
    /// line, which names the command).
    pub markdown: &'a str,
    /// Each service of each chain point, as Markdown tables (empty: no
    /// chain).
    pub services: &'a str,
    /// Each picture: its caption and its SVG.
    pub figures: Vec<(&'a str, &'a str)>,
    /// The command that made the report.
    pub command: &'a str,
    /// herdsim's version.
    pub version: &'a str,
}

/// Text safe in HTML and SVG (text and attribute values).
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Inline Markdown: `code` and **strong**, the rest escaped.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        }
        if code {
            out.push_str(&escape(part));
        } else {
            let mut strong = false;
            for (j, piece) in escape(part).split("**").enumerate() {
                if j > 0 {
                    out.push_str(if strong { "</strong>" } else { "<strong>" });
                    strong = !strong;
                }
                out.push_str(piece);
            }
            if strong {
                out.push_str("</strong>");
            }
        }
    }
    if code {
        out.push_str("</code>");
    }
    out
}

/// A Markdown table's cells.
fn cells(line: &str) -> Vec<&str> {
    let line = line.trim().trim_start_matches('|').trim_end_matches('|');
    line.split('|').map(str::trim).collect()
}

/// The Markdown that `compare --markdown` writes, as HTML: paragraphs (a
/// line break at each line), tables (right-aligned where the separator
/// says `---:`), bullet lists and fenced code.
pub fn markdown_to_html(markdown: &str) -> String {
    let mut html = String::new();
    let lines: Vec<&str> = markdown.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim().is_empty() {
            i += 1;
        } else if line.starts_with("```") {
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].starts_with("```"))
                .unwrap_or(lines.len());
            let _ = writeln!(
                html,
                "<pre><code>{}</code></pre>",
                escape(&lines[i + 1..end].join("\n"))
            );
            i = end + 1;
        } else if line.starts_with('|') {
            let end = (i..lines.len())
                .find(|&j| !lines[j].starts_with('|'))
                .unwrap_or(lines.len());
            let header = cells(lines[i]);
            let right: Vec<bool> = lines
                .get(i + 1)
                .map(|l| cells(l).iter().map(|c| c.ends_with(':')).collect())
                .unwrap_or_default();
            let align = |k: usize| {
                if right.get(k).copied().unwrap_or(false) {
                    " class=\"num\""
                } else {
                    ""
                }
            };
            html.push_str("<div class=\"table\"><table>\n<thead><tr>");
            for (k, cell) in header.iter().enumerate() {
                let _ = write!(html, "<th{}>{}</th>", align(k), inline(cell));
            }
            html.push_str("</tr></thead>\n<tbody>\n");
            for row in &lines[(i + 2).min(end)..end] {
                html.push_str("<tr>");
                for (k, cell) in cells(row).iter().enumerate() {
                    let _ = write!(html, "<td{}>{}</td>", align(k), inline(cell));
                }
                html.push_str("</tr>\n");
            }
            html.push_str("</tbody></table></div>\n");
            i = end;
        } else if line.starts_with("- ") {
            html.push_str("<ul>\n");
            while i < lines.len() && lines[i].starts_with("- ") {
                let _ = writeln!(html, "<li>{}</li>", inline(&lines[i][2..]));
                i += 1;
            }
            html.push_str("</ul>\n");
        } else {
            let end = (i..lines.len())
                .find(|&j| {
                    let l = lines[j];
                    l.trim().is_empty()
                        || l.starts_with('|')
                        || l.starts_with("- ")
                        || l.starts_with("```")
                })
                .unwrap_or(lines.len());
            let text: Vec<String> = lines[i..end].iter().map(|l| inline(l)).collect();
            let _ = writeln!(html, "<p>{}</p>", text.join("<br>\n"));
            i = end;
        }
    }
    html
}

/// The page's style: readable on screen, tables that scroll sideways
/// rather than overflow, pictures that fit, and print rules that keep a
/// picture or a table row on one page.
const STYLE: &str = "\
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #1a1a1a; background: #fff; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.3em; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.5em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
p.lede { font-size: 1.1em; color: #333; }
p.note { color: #555; font-size: 0.9em; }
code, pre { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace; font-size: 0.92em; }
pre { background: #f5f5f5; padding: 10px 12px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
div.table { overflow-x: auto; margin: 0.8em 0; }
table { border-collapse: collapse; font-size: 0.88em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d0d0; padding: 3px 7px; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.num, th.num { text-align: right; white-space: nowrap; }
tbody tr:nth-child(even) { background: #fafafa; }
figure { margin: 1.2em 0; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.92em; margin-top: 0.3em; }
footer { margin-top: 2.5em; color: #555; font-size: 0.9em; }
@media print {
  body { font-size: 10.5pt; }
  main { max-width: none; padding: 0; }
  div.table { overflow: visible; }
  table { font-size: 8pt; }
  tr, figure { break-inside: avoid; }
  h2 { break-after: avoid; }
  pre { white-space: pre-wrap; }
}
@page { size: A4 landscape; margin: 12mm; }
";

/// The whole page.
pub fn report_html(page: &ReportPage<'_>) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"herdsim {}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n<main>\n<h1>{}</h1>\n",
        escape(page.version),
        escape(page.title),
        escape(page.title)
    );
    if let Some(description) = page.description {
        let _ = writeln!(html, "<p class=\"lede\">{}</p>", escape(description));
    }
    if !page.summary.is_empty() {
        html.push_str("<section id=\"summary\">\n<h2>What happened</h2>\n");
        html.push_str(&markdown_to_html(page.summary));
        html.push_str(
            "<p class=\"note\">Generated from the runs (on the server model, the time series \
             are replicate 0's). The numbers of this summary and of the per-service tables have \
             no thousands separators, so they paste as numbers.</p>\n</section>\n",
        );
    }
    html.push_str("<section id=\"workload\">\n<h2>The workload</h2>\n<ul>\n");
    for line in &page.workload {
        let _ = writeln!(html, "<li>{}</li>", inline(line));
    }
    html.push_str("</ul>\n</section>\n<section id=\"results\">\n<h2>Results</h2>\n");
    html.push_str(&markdown_to_html(page.markdown));
    html.push_str("</section>\n");
    if !page.services.is_empty() {
        html.push_str("<section id=\"services\">\n<h2>Each service of the chain</h2>\n");
        html.push_str(&markdown_to_html(page.services));
        html.push_str("</section>\n");
    }
    if !page.figures.is_empty() {
        html.push_str("<section id=\"pictures\">\n<h2>Pictures</h2>\n");
        for (caption, svg) in &page.figures {
            let _ = writeln!(
                html,
                "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                svg.trim(),
                inline(caption)
            );
        }
        html.push_str("</section>\n");
    }
    let _ = write!(
        html,
        "<section id=\"reproduce\">\n<h2>Reproduce</h2>\n<p>This report was made by herdsim {} with:</p>\n\
         <pre><code>{}</code></pre>\n<p>The same command and version give this file byte for byte, on any \
         machine and at any thread count (<code>RAYON_NUM_THREADS</code>): every run's generators \
         are seeded from the master seed and the run's place alone.</p>\n</section>\n\
         <footer>Self-contained: no script, no external file; the pictures are inline SVG.</footer>\n\
         </main>\n</body>\n</html>\n",
        escape(page.version),
        escape(page.command)
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_markdown_becomes_tables_lists_and_paragraphs() {
        let markdown = "Title line with `code`\nsecond line, **bold** & <more>\n\n\
                        | policy | calls |\n| --- | ---: |\n| none | 1,000 ± 2 |\n| full | 3 |\n\n\
                        - a note\n- another\n";
        let html = markdown_to_html(markdown);
        assert!(html.contains(
            "<p>Title line with <code>code</code><br>\nsecond line, <strong>bold</strong> &amp; &lt;more&gt;</p>"
        ));
        assert!(html.contains("<th>policy</th><th class=\"num\">calls</th>"));
        assert!(html.contains("<tr><td>none</td><td class=\"num\">1,000 ± 2</td></tr>"));
        assert_eq!(html.matches("<tr>").count(), 3);
        assert!(html.contains("<ul>\n<li>a note</li>\n<li>another</li>\n</ul>"));
    }

    #[test]
    fn a_page_is_self_contained_and_escapes_what_it_is_given() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>";
        let page = ReportPage {
            title: "a <title>",
            description: Some("what & why"),
            summary: "**full**: goodput fell",
            workload: vec!["1,000 clients".into()],
            markdown: "| a | b |\n| --- | ---: |\n| x | 1 |\n",
            services: "",
            figures: vec![("a picture", svg)],
            command: "herdsim report 'x y.toml' --out r.html",
            version: "0.1.0",
        };
        let html = report_html(&page);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>a &lt;title&gt;</title>"));
        assert!(html.contains("<p class=\"lede\">what &amp; why</p>"));
        assert!(
            html.contains("<h2>What happened</h2>\n<p><strong>full</strong>: goodput fell</p>")
        );
        assert!(!html.contains("id=\"services\""), "no chain, no services");
        assert!(html.contains(svg), "the picture inline");
        assert!(html.contains("herdsim report 'x y.toml' --out r.html"));
        for outside in ["<script", "<link", "src=", "href=", "@import", "url("] {
            assert!(
                !html.contains(outside),
                "{outside} in a self-contained page"
            );
        }
    }
}
