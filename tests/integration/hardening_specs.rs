//! Issue 34's mini-language and scenario hardening: every parser of a value
//! refuses (or reads) multibyte text without panicking, `[[layer]]` tables
//! and `layer_specs` refuse what would read as something else, durations are
//! exact, and cross-parameter errors from a scenario say where they come
//! from.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;

use herdsim::base::time::parse_duration;
use herdsim::control::{ControlSpec, Family};
use herdsim::experiment::scenario::Scenario;
use herdsim::experiment::sweep::Shard;
use herdsim::model::server::{Dist, Service, Triggers};
use herdsim::spec::params::{PARAMS, param};
use herdsim::spec::server::parse_layer_specs;

/// Characters of two, three and four bytes, a combining accent, and one
/// that looks like a separator.
const MULTIBYTE: [char; 6] = ['é', 'µ', '€', '𝄞', '\u{301}', '／'];

/// Valid values of each parameter (and of the parsers beside the registry),
/// the texts the variants below are made from.
fn examples(key: &str) -> Vec<&'static str> {
    let specific: &[&str] = match key {
        "service" => &[
            "mix:0.5/exp:1ms/exp:10ms",
            "mix:0.1/lognormal:1ms/0.5/const:2ms",
            "lognormal:1ms/0.5",
            "weibull:1ms/2",
            "normal:10ms/2ms",
        ],
        "trigger" => &[
            "outage@1s..1.5s+spike:2@3s..4s",
            "fail:0.5@1s..2s",
            "ramp:1/3@1s..2s",
            "user-fail:0.1@1s..2s",
        ],
        "budget" => &[
            "ratio:0.1,min:1",
            "tokens:500,cost:5,refund:1,timeout-cost:10",
            "finagle:0.2,ttl:10s,min:10",
        ],
        "breaker" => &["cumulative:0.1", "classic:5,reset:1s"],
        "throttle" => &["sre:2", "none"],
        "layer_specs" => &[
            "workers=8,timeout=300ms+max_attempts=2",
            "budget=ratio:0.1,min:0,policy=full",
        ],
        "down" => &["5s..15s"],
        "arrivals" => &["uniform:10ms", "poisson:2"],
        "timeout_choices" => &["100ms/200ms"],
        "policy" => &["decorrelated", "full", "no-backoff", "grpc-retry"],
        "workers" => &["inf", "4"],
        "retry_after" => &["floor+jitter"],
        _ => &[],
    };
    let mut all = specific.to_vec();
    if let Some(p) = param(key) {
        all.push(Box::leak(p.default_text().into_boxed_str()));
    }
    all.extend(["100ms", "1.5s", "250us", "µs", "10", "0.5", "none"]);
    all
}

/// `text` with one multibyte character inserted at every character
/// boundary, and put in place of every character.
fn variants(text: &str) -> Vec<String> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut out = Vec::new();
    for c in MULTIBYTE {
        for (n, &at) in bounds.iter().enumerate() {
            out.push(format!("{}{c}{}", &text[..at], &text[at..]));
            if let Some(&next) = bounds.get(n + 1) {
                out.push(format!("{}{c}{}", &text[..at], &text[next..]));
            }
        }
        out.push(c.to_string());
        out.push(format!("{c}{c}"));
    }
    out
}

#[test]
fn no_parser_panics_on_multibyte_text_at_any_position() {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut panics: Vec<String> = Vec::new();
    let mut tried = 0usize;
    let mut attempt = |what: &str, text: &str, f: &dyn Fn(&str)| {
        tried += 1;
        if catch_unwind(AssertUnwindSafe(|| f(text))).is_err() {
            panics.push(format!("{what}: {text:?}"));
        }
    };
    for p in PARAMS.iter() {
        for example in examples(p.key) {
            for text in variants(example) {
                attempt(p.key, &text, &|t| {
                    let _ = p.check(t);
                });
            }
        }
    }
    let others: [(&str, &[&str], &dyn Fn(&str)); 7] = [
        ("duration", &["1.5s", "250µs", "1_000ms", "2m"], &|t| {
            let _ = parse_duration(t);
        }),
        ("shard", &["2/8", "1/1"], &|t| {
            let _ = Shard::from_str(t);
        }),
        (
            "mix service",
            &["mix:0.5/exp:1ms/exp:10ms", "mix:0.5/lognormal:1ms/0.5/exp:1ms"],
            &|t| {
                let _ = Service::from_str(t);
            },
        ),
        ("dist", &["lognormal:1ms/0.5", "exp:1ms", "const:2ms"], &|t| {
            let _ = Dist::from_str(t);
        }),
        ("triggers", &["outage@1s..2s+slow:2@3s..4s"], &|t| {
            let _ = Triggers::from_str(t);
        }),
        (
            "layer specs",
            &["workers=2,budget=ratio:0.1,min:0+timeout=1s"],
            &|t| {
                let _ = parse_layer_specs(t);
            },
        ),
        ("scenario", &["clients = [10, 20]\nbase = \"1ms\"\n"], &|t| {
            let _ = Scenario::from_toml("s.toml", t);
        }),
    ];
    for (what, texts, parse) in others {
        for example in texts {
            for text in variants(example) {
                attempt(what, &text, parse);
            }
        }
    }
    for family in [Family::Budget, Family::Breaker, Family::Throttle] {
        for example in ["ratio:0.1,min:1", "cumulative:0.1", "sre:2,window:10s"] {
            for text in variants(example) {
                attempt("control", &text, &|t| {
                    let _ = ControlSpec::parse(family, t);
                });
            }
        }
    }
    std::panic::set_hook(quiet);
    assert!(tried > 10_000, "{tried} texts tried");
    let mut parsers: Vec<&str> = panics
        .iter()
        .map(|p| p.split(':').next().unwrap_or_default())
        .collect();
    parsers.dedup();
    assert!(
        panics.is_empty(),
        "{} panics in {parsers:?}, such as {:?}",
        panics.len(),
        &panics[..panics.len().min(10)]
    );
}
