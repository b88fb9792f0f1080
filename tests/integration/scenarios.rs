//! Scenario fixtures for `edit_file` and `apply_patch`: each `tests/fixtures/scenarios/NNN_name/`
//! holds `input/` (the repository before), `request.json` (the tool, its arguments, and
//! optionally the policy, the expected error code and a warning to expect), an optional
//! `patch` file (the `patch` argument), and `expected/` (the whole repository after). A
//! scenario that expects an error must leave `input/` exactly as it was.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::*;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    if !from.exists() {
        return;
    }
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn scenarios() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/scenarios");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs
}

fn run(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let req: Value =
        serde_json::from_slice(&std::fs::read(dir.join("request.json")).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    copy_tree(&dir.join("input"), &repo);
    let mut args = req["args"].clone();
    if let Ok(patch) = std::fs::read_to_string(dir.join("patch")) {
        args["patch"] = json!(patch);
    }
    let policy = req.get("policy").cloned().unwrap_or(json!({}));
    let mut s = file_tools_host::Session::builder(runtime())
        .repo(&repo)
        .writable(true)
        .policy(policy)
        .build()
        .unwrap();
    let result = s.call(req["tool"].as_str().unwrap(), &args.to_string());
    let expected_dir = match (req.get("error").and_then(Value::as_str), &result) {
        (Some(want), Err(e)) if file_tools_host::code_name(e.code) == want => dir.join("input"),
        (Some(want), other) => return Err(format!("{name}: expected {want}, got {other:?}")),
        (None, Err(e)) => return Err(format!("{name}: unexpected error {}", e.to_json())),
        (None, Ok(v)) => {
            if let Some(w) = req.get("warning").and_then(Value::as_str) {
                if !v["warnings"].to_string().contains(w) {
                    return Err(format!(
                        "{name}: no warning containing {w:?} in {}",
                        v["warnings"]
                    ));
                }
            }
            dir.join("expected")
        }
    };
    let got = snapshot(&repo);
    let mut want = snapshot(&{
        let t = tmp.path().join("want");
        copy_tree(&expected_dir, &t);
        t
    });
    if !expected_dir.exists() {
        want.clear();
    }
    if got != want {
        let show = |m: &std::collections::BTreeMap<PathBuf, Vec<u8>>| {
            m.iter()
                .map(|(k, v)| format!("{}: {:?}", k.display(), String::from_utf8_lossy(v)))
                .collect::<Vec<_>>()
                .join("\n  ")
        };
        return Err(format!(
            "{name}: tree differs\n got:\n  {}\n want:\n  {}",
            show(&got),
            show(&want)
        ));
    }
    Ok(())
}

#[test]
fn every_scenario_produces_its_expected_tree() {
    let dirs = scenarios();
    assert!(dirs.len() >= 20, "scenario fixtures are missing");
    let failures: Vec<String> = dirs.iter().filter_map(|d| run(d).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
}
