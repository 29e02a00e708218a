//! The docs say what the code does: the parameter tables come from the
//! registry. (Every command the docs show, the README's main job among
//! them, is run and checked by `book.rs`.)

use std::fs;

use assert_cmd::cargo::cargo_bin_cmd;
use herdsim::report::{ParamNames, params_markdown};
use herdsim::spec::params::PARAMS;

fn read(file: &str) -> String {
    fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The text between `<!-- name -->` and `<!-- /end -->` in `text`.
fn block<'a>(text: &'a str, name: &str, end: &str) -> &'a str {
    let open = format!("<!-- {name} -->\n");
    let start = text.find(&open).unwrap_or_else(|| panic!("no {open}")) + open.len();
    let end = text[start..]
        .find(&format!("<!-- /{end} -->"))
        .unwrap_or_else(|| panic!("no end of {name}"));
    &text[start..start + end]
}

#[test]
fn the_parameter_tables_list_exactly_the_registry() {
    // A table that lacks a parameter, lists one that does not exist, or
    // says another default or range than the registry fails here.
    let page = read("docs/src/reference/parameters.md");
    assert_eq!(
        block(&page, "generated: herdsim params --markdown", "generated"),
        params_markdown(ParamNames::Flags),
        "docs/src/reference/parameters.md: run scripts/book-refresh"
    );
    assert_eq!(
        block(&read("scenarios/README.md"), "params:keys", "params:keys"),
        params_markdown(ParamNames::Keys),
        "scenarios/README.md: paste `herdsim params --markdown --keys`"
    );
    let keys = params_markdown(ParamNames::Keys);
    for param in &PARAMS {
        assert!(
            keys.contains(&format!("| `{}` |", param.key)),
            "{}",
            param.key
        );
    }
    assert_eq!(keys.lines().count(), PARAMS.len() + 2);
}

#[test]
fn every_parameter_is_a_flag_of_run_and_sweep_with_its_default() {
    for command in ["run", "sweep"] {
        let out = cargo_bin_cmd!("herdsim")
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        for param in &PARAMS {
            assert!(
                help.contains(&format!("--{} ", param.flag())),
                "{command}: {}",
                param.key
            );
        }
        if command == "run" {
            assert!(help.contains("Default: 20s\n") && help.contains("Default: unlimited\n"));
            let short = String::from_utf8(
                cargo_bin_cmd!("herdsim")
                    .args([command, "-h"])
                    .output()
                    .unwrap()
                    .stdout,
            )
            .unwrap();
            assert!(short.contains("[default: 20s]") && short.contains("[default: unlimited]"));
            // The metric says where occ counts a retry.
            assert!(
                help.contains("on occ, when the write reaches the row"),
                "{help}"
            );
        } else {
            // The long help names every axis and column from the registry.
            assert!(help.contains("down_from_ms, down_to_ms"), "{help}");
            assert!(help.contains("policy, clients, capacity, base"), "{help}");
        }
    }
}
