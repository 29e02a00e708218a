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

use crate::common::{usage_error, workdir};

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

/// A parser's name, valid texts to vary, and a call of it.
type Parser<'a> = (&'a str, &'a [&'a str], &'a dyn Fn(&str));

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
    let others: [Parser; 7] = [
        ("duration", &["1.5s", "250µs", "1_000ms", "2m"], &|t| {
            let _ = parse_duration(t);
        }),
        ("shard", &["2/8", "1/1"], &|t| {
            let _ = Shard::from_str(t);
        }),
        (
            "mix service",
            &[
                "mix:0.5/exp:1ms/exp:10ms",
                "mix:0.5/lognormal:1ms/0.5/exp:1ms",
            ],
            &|t| {
                let _ = Service::from_str(t);
            },
        ),
        (
            "dist",
            &["lognormal:1ms/0.5", "exp:1ms", "const:2ms"],
            &|t| {
                let _ = Dist::from_str(t);
            },
        ),
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
        (
            "scenario",
            &["clients = [10, 20]\nbase = \"1ms\"\n"],
            &|t| {
                let _ = Scenario::from_toml("s.toml", t);
            },
        ),
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

/// Writes `text` as `name` in a fresh directory for `test`; the file's path.
fn scenario_file(test: &str, name: &str, text: &str) -> std::path::PathBuf {
    let dir = workdir(test);
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `herdsim sweep FILE --out out.csv -q EXTRA`: its one-line usage error,
/// checked to leave no output behind.
fn sweep_error(test: &str, text: &str, extra: &[&str]) -> String {
    let path = scenario_file(test, "s.toml", text);
    let dir = path.parent().unwrap();
    let out = dir.join("out.csv");
    let mut args = vec![
        "sweep",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend(extra);
    let err = usage_error(&args);
    assert!(!out.exists(), "{err}");
    // Name the file as the user did, whatever the directory.
    err.replace(path.to_str().unwrap(), "s.toml")
}

#[test]
fn a_multibyte_character_in_a_mix_service_is_a_usage_error() {
    for service in [
        "mix:0.5/é/exp:1ms",
        "mix:0.5/éexp:1ms/exp:2ms",
        "mix:0.5/€/€",
    ] {
        let err = usage_error(&["run", "--resource", "server", "--service", service, "-q"]);
        assert!(err.contains("--service"), "{err}");
    }
}

#[test]
fn a_layer_value_cannot_smuggle_another_service_or_setting() {
    let err = sweep_error(
        "layer-plus",
        "resource = \"server\"\ndepth = 2\n[[layer]]\npolicy = \"full+workers=3\"\n",
        &[],
    );
    assert!(
        err.starts_with("error: s.toml:4: key 'layer': [[layer]] 1: key 'policy': invalid value 'full+workers=3'"),
        "{err}"
    );
    assert!(err.contains("cannot hold '+'"), "{err}");
    // Ran before as a budget and one worker.
    let err = sweep_error(
        "layer-equals",
        "resource = \"server\"\ndepth = 2\n[[layer]]\nbudget = \"ratio:0.1,min:0,workers=1\"\n",
        &[],
    );
    assert!(
        err.contains("s.toml:4") && err.contains("cannot hold '='"),
        "{err}"
    );
    // A value its key refuses is named where it stands.
    let err = sweep_error(
        "layer-bad-value",
        "resource = \"server\"\ndepth = 3\n[[layer]]\nworkers = 2\n[[layer]]\nworkers = 2\npolicy = \"slow\"\n",
        &[],
    );
    assert!(
        err.starts_with(
            "error: s.toml:7: key 'layer': [[layer]] 2: key 'policy': invalid value 'slow'"
        ),
        "{err}"
    );
}

#[test]
fn a_layer_setting_given_twice_is_a_usage_error() {
    let err = usage_error(&[
        "run",
        "--resource",
        "server",
        "--depth",
        "2",
        "--layer-specs",
        "workers=1,workers=9",
        "--duration",
        "1s",
        "-q",
    ]);
    assert!(
        err.contains("--layer-specs") && err.contains("given twice"),
        "{err}"
    );
}

#[test]
fn layer_tables_must_fit_every_depth_of_the_file() {
    // On the slot model the table was silently dropped.
    let err = sweep_error("layer-no-depth", "[[layer]]\nworkers = 3\n", &[]);
    assert!(
        err.starts_with("error: s.toml:1: key 'layer': 1 [[layer]] table for the default depth 1"),
        "{err}"
    );
    let err = sweep_error(
        "layer-depths",
        "resource = \"server\"\ndepth = [2, 3]\n[[layer]]\nworkers = 3\n",
        &[],
    );
    assert!(
        err.contains("depth 3 (line 2)") && err.contains("2 at depth 3"),
        "{err}"
    );
    // A --depth flag that does not fit the file's tables names both.
    let err = sweep_error(
        "layer-depth-flag",
        "resource = \"server\"\ndepth = 2\n[[layer]]\nworkers = 3\n",
        &["--depth", "3"],
    );
    assert!(
        err.starts_with("error: s.toml:3: key 'layer'") && err.contains("together with --depth"),
        "{err}"
    );
    assert!(!err.contains("--layer-specs"), "{err}");
}

#[test]
fn cross_parameter_errors_name_the_file_line_and_key_the_user_wrote() {
    // A [[layer]] table's setting, not --layer-specs.
    let err = sweep_error(
        "cross-layer",
        "resource = \"server\"\ndepth = 2\ntimeout = \"100ms\"\n[[layer]]\npolicy = \"no-backoff\"\n",
        &[],
    );
    assert!(
        err.starts_with("error: s.toml:5: [[layer]] 1: key 'policy': invalid value 'no-backoff'"),
        "{err}"
    );
    assert!(
        err.contains("max_attempts") && !err.contains("--layer-specs"),
        "{err}"
    );
    // Two top-level keys, each by its line.
    let err = sweep_error(
        "cross-keys",
        "resource = \"server\"\nusers = 10\nrate = 100\n",
        &[],
    );
    assert!(
        err.starts_with("error: s.toml:2: key 'users': invalid value '10'")
            && err.contains("together with key 'rate' at s.toml:3"),
        "{err}"
    );
    // The same with the rate from a flag.
    let err = sweep_error(
        "cross-flag",
        "resource = \"server\"\nusers = 10\n",
        &["--rate", "100"],
    );
    assert!(
        err.contains("s.toml:2: key 'users'") && err.contains("together with --rate"),
        "{err}"
    );
    // A variant's keys, by the variant and the line.
    let err = sweep_error(
        "cross-variant",
        "resource = \"server\"\n[[variant]]\nusers = 10\n[[variant]]\nrate = 100\nusers = 5\n",
        &[],
    );
    assert!(
        err.starts_with("error: s.toml:6: [[variant]] 2: key 'users': invalid value '5' (point 1)")
            && err.contains("together with [[variant]] 2's key 'rate' at s.toml:5"),
        "{err}"
    );
    // A resource nobody gave is its default, not --resource.
    let err = sweep_error(
        "cross-default",
        "throttle = \"aws-adaptive:0.4,beta:0.7\"\n",
        &[],
    );
    assert!(
        err.starts_with("error: s.toml:1: key 'throttle'")
            && err.contains("is at its default, slot"),
        "{err}"
    );
    assert!(!err.contains("together with --resource"), "{err}");
    let err = usage_error(&["run", "--throttle", "aws-adaptive:0.4,beta:0.7", "-q"]);
    assert!(
        err.contains("--throttle") && err.contains("is at its default, slot"),
        "{err}"
    );
    assert!(!err.contains("together with --resource"), "{err}");
}

#[test]
fn a_sub_microsecond_fraction_is_refused_however_large_the_duration() {
    for (flag, value) in [
        ("--base", "1.0000001s"),
        ("--base", "10000000.0000001s"),
        ("--cap", "8759.9999999999h"),
    ] {
        let err = usage_error(&["run", flag, value, "--clients", "10", "-q"]);
        assert!(
            err.contains(flag) && err.contains("resolution is 1us"),
            "{err}"
        );
    }
    let err = sweep_error("duration-file", "base = \"10000000.0000001s\"\n", &[]);
    assert!(
        err.starts_with("error: s.toml:1: key 'base'") && err.contains("resolution"),
        "{err}"
    );
}
