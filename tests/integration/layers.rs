//! The layers of the source tree: each module uses only the layers before
//! its own, so there is no cycle between them, and the core does no I/O.

use std::fs;
use std::path::Path;

/// The layers, in order: a layer may use those before it.
const LAYERS: [&[&str]; 11] = [
    &["base"],
    &["model", "policy", "control"],
    &["spec"],
    &["measure", "exact"],
    &["sim"],
    &["import", "conform"],
    &["experiment"],
    &["study"],
    &["report"],
    &["cli"],
    &["main"],
];

fn rank(layer: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&layer))
        .unwrap_or_else(|| panic!("src/{layer} is in no layer: add it to LAYERS"))
}

/// Every `.rs` file under `dir`, with its layer (the top folder of src/).
fn sources(dir: &Path, layer: Option<&str>, out: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let layer = layer.map_or(name.clone(), str::to_string);
        if path.is_dir() {
            sources(&path, Some(&layer), out);
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            out.push((layer, fs::read_to_string(&path).unwrap()));
        }
    }
}

#[test]
fn each_layer_uses_only_the_layers_before_it() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        None,
        &mut files,
    );
    assert!(files.len() > 50, "read the tree");
    let mut violations = Vec::new();
    for (layer, text) in &files {
        let own = rank(layer);
        // Code only: a doc comment may point anywhere.
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for (i, _) in code.match_indices("crate::") {
            let used: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // Re-exports at the crate root (`crate::PolicyKind`) and macros
            // are not layers.
            if used.chars().next().is_some_and(char::is_uppercase) || used.is_empty() {
                continue;
            }
            if rank(&used) > own {
                violations.push(format!("{layer} uses {used}"));
            }
        }
        if own < rank("experiment") {
            for io in ["std::fs", "std::io", "println!", "eprintln!", "clap::"] {
                assert!(!code.contains(io), "{layer} (the core) uses {io}");
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(violations.is_empty(), "{violations:#?}");
}
