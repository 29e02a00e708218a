//! The examples at the end of each command's `--help`: real commands, quick
//! on small workloads, run from the repository's root (they name its
//! `scenarios/`). A test runs every one of them, in order, so they cannot go
//! stale; a later example may read what an earlier one of the same command
//! wrote.

/// One example: what it does, and the command.
pub type Example = (&'static str, &'static str);

/// The examples' text, for `after_long_help`: `before` (the command's own
/// long help, if any), then each example as a line saying what it does and
/// the command indented below it.
pub fn with_examples(before: &str, examples: &[Example]) -> String {
    let mut text = String::new();
    if !before.is_empty() {
        text += before;
        text += "\n\n";
    }
    text += "Examples:";
    for (what, command) in examples {
        text += &format!("\n  {what}:\n{}", shell_lines(command));
    }
    text
}

/// `command` indented, broken into lines of at most 78 columns joined by
/// the shell's ` \` (so help wrapped to a terminal's width never breaks a
/// command where the shell would not read it).
fn shell_lines(command: &str) -> String {
    const WIDTH: usize = 78;
    // A flag and its value stay together.
    let mut words: Vec<String> = Vec::new();
    for word in command.split_whitespace() {
        match words.last_mut() {
            Some(flag)
                if flag.starts_with('-') && !flag.contains(' ') && !word.starts_with('-') =>
            {
                flag.push(' ');
                flag.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    let mut lines = vec![String::from("    ")];
    for word in &words {
        let line = lines.last_mut().expect("one line at least");
        if line.trim().is_empty() {
            line.push_str(word);
        } else if line.len() + 1 + word.len() + 2 > WIDTH {
            line.push_str(" \\");
            lines.push(format!("      {word}"));
        } else {
            line.push(' ');
            line.push_str(word);
        }
    }
    lines.join("\n")
}

/// The main job, shown at the top level and under `run`.
const DECORRELATED_HERD: Example = (
    "One workload, 1,000 clients under decorrelated jitter",
    "herdsim run --clients 1000 --policy decorrelated",
);

/// A server-model run, shown at the top level and under `run`.
const SERVER_OUTAGE: Example = (
    "A server behind a one-second outage, four replicates",
    "herdsim run --resource server --rate 800 --workers 4 --service exp:4ms \
     --timeout 50ms --trigger outage@2s..3s --duration 10s --seeds 4",
);

pub const TOP: [Example; 4] = [
    DECORRELATED_HERD,
    (
        "The four classic strategies side by side",
        "herdsim compare",
    ),
    SERVER_OUTAGE,
    ("Every workload parameter", "herdsim params"),
];

pub const RUN: [Example; 5] = [
    DECORRELATED_HERD,
    (
        "Twenty replicates with 95% confidence intervals, as JSON",
        "herdsim run --clients 200 --policy full --seeds 20 --json",
    ),
    (
        "The occ row: 50 writers retrying conflicts",
        "herdsim run --resource occ --clients 50 --policy full",
    ),
    SERVER_OUTAGE,
    (
        "The same run drawn over time, and its time series as CSV",
        "herdsim run --resource server --rate 800 --workers 4 --service exp:4ms \
         --timeout 50ms --trigger outage@2s..3s --duration 10s --plot server.svg \
         --series server.csv",
    ),
];

pub const SWEEP: [Example; 4] = [
    (
        "Three policies by three herd sizes, five seeds each",
        "herdsim sweep --policy full,equal,decorrelated --clients 10,100,1000 --seeds 5 \
         -o sweep.csv",
    ),
    (
        "A scenario file's grid, two seeds a point",
        "herdsim sweep scenarios/base-cap.toml --seeds 2 -o base-cap.csv",
    ),
    (
        "The first of two shards (run the second with --shard 2/2)",
        "herdsim sweep --policy full,none --clients 10,100 --seeds 3 --shard 1/2 \
         -o part1.csv",
    ),
    (
        "The second shard",
        "herdsim sweep --policy full,none --clients 10,100 --seeds 3 --shard 2/2 \
         -o part2.csv",
    ),
];

pub const MERGE: [Example; 3] = [
    (
        "Two shards of a sweep",
        "herdsim sweep --policy full,none --clients 10,100 --seeds 3 --shard 1/2 \
         -o part1.csv",
    ),
    (
        "The other shard",
        "herdsim sweep --policy full,none --clients 10,100 --seeds 3 --shard 2/2 \
         -o part2.csv",
    ),
    (
        "Joined into the file the whole sweep writes",
        "herdsim merge part1.csv part2.csv -o whole.csv",
    ),
];

pub const PLOT: [Example; 2] = [
    (
        "A sweep to draw",
        "herdsim sweep --policy full,equal,decorrelated --clients 10,100,1000 --seeds 5 \
         -o sweep.csv",
    ),
    (
        "Mean calls by herd size, one curve per policy, with 95% CI bands",
        "herdsim plot sweep.csv --x clients --y calls_mean --by policy --log-x -o calls.svg",
    ),
];

pub const COMPARE: [Example; 4] = [
    (
        "The four classic strategies, with the published figures",
        "herdsim compare",
    ),
    (
        "The same with 100 clients and ten seeds",
        "herdsim compare --clients 100 --seeds 10",
    ),
    (
        "A scenario file's points as a Markdown table",
        "herdsim compare scenarios/outage-30s.toml --seeds 5 --markdown",
    ),
    (
        "Every metric of every point as CSV, and replicate 0 drawn",
        "herdsim compare --seeds 10 --csv compare.csv --plot compare.svg -q",
    ),
];

pub const REPORT: [Example; 4] = [
    (
        "The four classic strategies as one HTML page",
        "herdsim report -o four.html -q",
    ),
    (
        "A server at two loads behind an outage, from flags alone",
        "herdsim report --resource server --rate 500,900 --workers 4 --service exp:4ms \
         --timeout 50ms --trigger outage@2s..3s --duration 10s --seeds 4 -o server.html -q",
    ),
    (
        "A comparison's CSV to report on",
        "herdsim compare --seeds 10 --csv four.csv -q",
    ),
    (
        "The report of that CSV, without running again",
        "herdsim report --from four.csv -o from-csv.html -q",
    ),
];

pub const MAP: [Example; 4] = [
    (
        "Storm probability by load and outage length, small and quick",
        "herdsim map scenarios/metastable-map.toml --x trigger --y rate --rate 300,900 \
         --seeds 4 --refine 1 -o map.csv --svg map.svg -q",
    ),
    (
        "That map's heatmap and boundaries again, from its CSV",
        "herdsim map scenarios/metastable-map.toml --x trigger --y rate --rate 300,900 \
         --seeds 4 --refine 1 --from map.csv --svg again.svg",
    ),
    (
        "Its first row alone, as a shard (`herdsim merge` joins the shards)",
        "herdsim map scenarios/metastable-map.toml --x trigger --y rate --rate 300,900 \
         --seeds 4 --refine 1 --shard 1/2 -o map-1.csv -q",
    ),
    (
        "How rare a storm is where none was seen: the cells below 5% split, towards a backlog \
         of 100 before one of 5",
        "herdsim map scenarios/metastable-map.toml --x trigger --y rate --rate 300,900 \
         --seeds 4 --refine 1 --high 100 --low 5 --splitting 100 --batches 4 -o rare.csv -q",
    ),
];

pub const ASSESS: [Example; 4] = [
    (
        "The SRE tutorial's service, quick and rough: 4 seeds a cell, one refinement round \
         (leave both out for the default precision, about 30 s on two cores)",
        "herdsim assess scenarios/sre-service.toml --seeds 4 --refine 1 -q",
    ),
    (
        "One stall kind, a budget to compare with, and the page with the curves",
        "herdsim assess scenarios/sre-service.toml --stall capacity:0 --suggest envoy:0.2,min:3 \
         --seeds 4 --refine 1 --report assess.html -q",
    ),
    (
        "Headroom after two blips, a quarter and a whole second of outage",
        "herdsim assess scenarios/sre-service.toml --stall outage --blip 250ms --blip 1s \
         --seeds 4 --refine 1 -q",
    ),
    (
        "How rare a storm after a 1 s outage is: splitting towards a backlog of 800 before one \
         of 20",
        "herdsim assess scenarios/sre-service.toml --stall outage --blip 1s --high 800 --low 20 \
         --splitting 100 --batches 4 --seeds 4 --refine 1 -q",
    ),
];

pub const TUNE: [Example; 3] = [
    (
        "gRPC's retryThrottling on the SRE tutorial's service, small and quick: three \
         maxTokens by two tokenRatios, 2 seeds",
        "herdsim tune scenarios/sre-service.toml --control grpc --param grpc=5,20,100 \
         --param ratio=0.1,1 --seeds 2 --refine 1 -q",
    ),
    (
        "Envoy's budget at a 1.5× bound, to CSV and the picture of its front",
        "herdsim tune scenarios/sre-service.toml --control envoy --param envoy=0.1,0.5 \
         --param min=1,10 --bound 1.5 --seeds 2 --refine 0 -o envoy-tune.csv \
         --svg envoy-tune.svg -q",
    ),
    (
        "That search's front again, from its CSV",
        "herdsim tune scenarios/sre-service.toml --control envoy --param envoy=0.1,0.5 \
         --param min=1,10 --bound 1.5 --seeds 2 --refine 0 --from envoy-tune.csv",
    ),
];

pub const EXACT: [Example; 3] = [
    (
        "A small Markovian service solved exactly: its stationary figures and the mean time \
         to a storm with no trigger",
        "herdsim exact scenarios/exact-small.toml",
    ),
    (
        "The same service after a 100 ms outage: the storm probability and the time back to calm",
        "herdsim exact scenarios/exact-small.toml --trigger outage@1s..1.1s",
    ),
    (
        "metafor's chain at a shorter timeout, its figures under the reference table's names",
        "herdsim exact --chain metafor --timeout 5s --json",
    ),
];

pub const DIFF: [Example; 2] = [
    (
        "Am I affected by botocore 1.44? The same AWS config under 1.43 and under the current release",
        "herdsim diff scenarios/configs/aws-config scenarios/configs/aws-config --select-a sdk=botocore==1.43.67 --rate 500 --workers 1 --service exp:1ms --timeout 100ms --stall outage --seeds 4 --refine 0 -q",
    ),
    (
        "The same as JSON",
        "herdsim diff scenarios/configs/aws-config scenarios/configs/aws-config --select-a sdk=botocore==1.43.67 --rate 500 --workers 1 --service exp:1ms --timeout 100ms --stall outage --seeds 4 --refine 0 -q --json",
    ),
];

pub const CONFORM: [Example; 3] = [
    (
        "A trace of 300 calls by full jitter, each failing five times (synthetic)",
        "herdsim policy full --base 10ms --cap 1s --retries 4 --samples 300 --trace trace.csv",
    ),
    (
        "Held to the policy that made it: it conforms (exit code 0)",
        "herdsim conform trace.csv --policy full --base 10ms --cap 1s --max-attempts 5",
    ),
    (
        "The same test as JSON, for a CI pipeline",
        "herdsim conform trace.csv --policy full --base 10ms --cap 1s --max-attempts 5 --json",
    ),
];

pub const POLICY: [Example; 3] = [
    (
        "Three policies' delays, retry by retry",
        "herdsim policy full,equal,decorrelated",
    ),
    (
        "Full jitter from 10 ms to 1 s, eight retries, drawn",
        "herdsim policy full --base 10ms --cap 1s --retries 8 --plot delays.svg",
    ),
    (
        "The same table as CSV",
        "herdsim policy full --base 10ms --cap 1s --retries 8 --csv delays.csv",
    ),
];
