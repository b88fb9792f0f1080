//! `read_file`, `read_many` and `file_info` through the component.

use serde_json::json;

use crate::support::*;

#[test]
fn reads_a_file_with_hash_counts_and_style() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "read_file", json!({ "path": "src/lib.rs" })).unwrap();
    let content = std::fs::read(fx.repo.join("src/lib.rs")).unwrap();
    assert_eq!(v["content"].as_str().unwrap().as_bytes(), &content[..]);
    assert_eq!(v["sha256"], sha256(&content));
    assert_eq!(v["total_lines"], 7);
    assert_eq!(v["line_ending"], "lf");
    assert_eq!(v["kind"], "source");
    assert_eq!(v["truncated"], false);
}

#[test]
fn reads_a_range_with_line_numbers() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "read_file",
        json!({ "path": "src/lib.rs", "start_line": 5, "max_lines": 2, "line_numbers": true }),
    )
    .unwrap();
    assert_eq!(
        v["content"],
        "     5\tpub fn sub(a: i32, b: i32) -> i32 {\n     6\t    a - b\n"
    );
    assert_eq!(
        (v["start_line"].as_u64(), v["end_line"].as_u64()),
        (Some(5), Some(6))
    );
    assert_eq!(v["truncated"], true);
    assert!(v["summary"].as_str().unwrap().contains("start_line=7"));
}

#[test]
fn crlf_and_bom_are_reported() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "read_file", json!({ "path": "crlf.txt" })).unwrap();
    assert_eq!(v["line_ending"], "crlf");
    assert_eq!(v["content"], "one\r\ntwo\r\nthree\r\n");
    let v = call(&mut s, "read_file", json!({ "path": "bom.txt" })).unwrap();
    assert_eq!(v["bom"], true);
    assert_eq!(v["content"], "with bom\n");
}

#[test]
fn refusals_carry_the_right_codes() {
    let fx = Fixture::new();
    let mut s = fx.session();
    for (p, want, reason) in [
        (".env", "POLICY_DENIED", Some("secret")),
        ("config/server.pem", "POLICY_DENIED", Some("secret")),
        (".git/config", "POLICY_DENIED", Some("git_internal")),
        ("missing.rs", "NOT_FOUND", None),
        ("src", "NOT_A_FILE", None),
        ("image.png", "UNSUPPORTED_BINARY", None),
        ("data.bin", "UNSUPPORTED_BINARY", None),
        ("src/main.rs/x", "NOT_FOUND", None),
    ] {
        let r = call(&mut s, "read_file", json!({ "path": p }));
        assert_eq!(code(&r), want, "{p}");
        let e = r.unwrap_err();
        assert_eq!(e.reason.as_deref(), reason, "{p}");
        assert!(!e.message.is_empty());
    }
    // A secret that does not exist is still refused as a secret (no existence oracle).
    let r = call(
        &mut s,
        "read_file",
        json!({ "path": "nowhere/.env.production" }),
    );
    assert_eq!(code(&r), "POLICY_DENIED");
}

#[test]
fn large_files_need_a_range_and_are_streamed() {
    let fx = Fixture::new();
    let mut big = String::new();
    for i in 1..=200_000 {
        big.push_str(&format!("line {i:07} of the big file\n"));
    }
    fx.write("big.txt", big.as_bytes());
    let mut s = fx.session_with(
        json!({ "limits": { "max_whole_read_bytes": 1_000_000 } }),
        true,
        Default::default(),
    );
    let r = call(&mut s, "read_file", json!({ "path": "big.txt" }));
    assert_eq!(code(&r), "FILE_TOO_LARGE");
    let v = call(
        &mut s,
        "read_file",
        json!({ "path": "big.txt", "start_line": 150_000, "max_lines": 2 }),
    )
    .unwrap();
    assert_eq!(
        v["content"],
        "line 0150000 of the big file\nline 0150001 of the big file\n"
    );
    assert_eq!(v["total_lines"], 200_000);
    assert_eq!(v["sha256"], sha256(big.as_bytes()));
}

#[test]
fn byte_budget_truncates_at_a_line() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "read_file",
        json!({ "path": "src/lib.rs", "max_bytes": 40 }),
    )
    .unwrap();
    assert_eq!(v["content"], "pub fn add(a: i32, b: i32) -> i32 {\n");
    assert_eq!(v["truncated"], true);
}

#[test]
fn read_many_gives_each_file_its_own_outcome() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "read_many",
        json!({ "paths": ["src/main.rs", ".env", "nope.txt", "../outside/secret.txt"] }),
    )
    .unwrap();
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    assert_eq!(files[0]["ok"], true);
    assert_eq!(files[1]["error"]["code"], "POLICY_DENIED");
    assert_eq!(files[2]["error"]["code"], "NOT_FOUND");
    assert_eq!(files[3]["error"]["code"], "PATH_REJECTED");
    let many: Vec<String> = (0..21).map(|i| format!("f{i}.txt")).collect();
    assert_eq!(
        code(&call(&mut s, "read_many", json!({ "paths": many }))),
        "LIMIT_EXCEEDED"
    );
    assert_eq!(
        code(&call(&mut s, "read_many", json!({ "paths": [] }))),
        "INVALID_INPUT"
    );
}

#[test]
fn typed_api_matches_the_json_api() {
    use file_tools_host::tools::{ReadFileArgs, ReadManyArgs};
    let fx = Fixture::new();
    let mut s = fx.session();
    let typed = s
        .read_file(&ReadFileArgs {
            path: "src/main.rs".into(),
            start_line: None,
            max_lines: None,
            max_bytes: None,
            line_numbers: None,
        })
        .unwrap();
    let json = call(&mut s, "read_file", json!({ "path": "src/main.rs" })).unwrap();
    assert_eq!(typed.content, json["content"].as_str().unwrap());
    assert_eq!(typed.sha256, json["sha256"].as_str().unwrap());
    let e = s
        .read_file(&ReadFileArgs {
            path: ".env".into(),
            start_line: None,
            max_lines: None,
            max_bytes: None,
            line_numbers: None,
        })
        .unwrap_err();
    assert_eq!(e.code, file_tools_host::ErrorCode::PolicyDenied);
    let many = s
        .read_many(&ReadManyArgs {
            paths: vec!["README.md".into(), "x".into()],
            max_lines: None,
            max_bytes: None,
            line_numbers: None,
        })
        .unwrap();
    assert!(many.files[0].outcome.is_ok());
    assert_eq!(
        many.files[1].outcome.as_ref().unwrap_err().code,
        file_tools_host::ErrorCode::NotFound
    );
}

#[test]
fn file_info_reports_metadata_and_permissions() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "file_info", json!({ "path": "src/main.rs" })).unwrap();
    assert_eq!(v["type"], "file");
    assert_eq!(v["kind"], "source");
    assert_eq!(v["readable"], true);
    assert_eq!(v["writable"], true);
    assert_eq!(
        v["sha256"],
        sha256(&std::fs::read(fx.repo.join("src/main.rs")).unwrap())
    );
    assert!(v["modified"].as_str().unwrap().ends_with('Z'));
    let v = call(&mut s, "file_info", json!({ "path": ".env" })).unwrap();
    assert_eq!(
        (
            v["kind"].as_str(),
            v["readable"].as_bool(),
            v["read_denied_reason"].as_str()
        ),
        (Some("secret"), Some(false), Some("secret"))
    );
    assert!(v["sha256"].is_null());
    let v = call(&mut s, "file_info", json!({ "path": "Cargo.lock" })).unwrap();
    assert_eq!(
        (v["writable"].as_bool(), v["write_denied_reason"].as_str()),
        (Some(false), Some("lockfile"))
    );
    assert_eq!(
        code(&call(&mut s, "file_info", json!({ "path": ".git/config" }))),
        "POLICY_DENIED"
    );
    assert_eq!(
        code(&call(&mut s, "file_info", json!({ "path": "none" }))),
        "NOT_FOUND"
    );
    let typed = s.file_info("src").unwrap();
    assert_eq!(typed.kind, file_tools_host::FileKind::Directory);
}

/// A private key under an innocent name is withheld like a secret file: no read, no hash,
/// no size, no returned search line, no edit that would show it; the key never appears in
/// any output (`call` checks every output for the secret marker). Positive controls: a
/// public key reads, and the policy can exempt the path.
#[test]
fn a_key_under_an_innocent_name_is_withheld_by_its_content() {
    let fx = Fixture::new();
    let key = format!("notes about the deploy\n-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET_MARK}\n-----END OPENSSH PRIVATE KEY-----\n");
    fx.write("notes.txt", key.as_bytes());
    fx.write(
        "public.txt",
        b"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n",
    );
    fx.write(
        "token.md",
        b"use token ghp_abcdefghijklmnopqrstuvwxyz0123456789 here\n",
    );
    let mut s = fx.session();
    for p in ["notes.txt", "token.md"] {
        let e = call(&mut s, "read_file", json!({ "path": p })).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("secret_content"), "{p}");
        let info = call(&mut s, "file_info", json!({ "path": p })).unwrap();
        assert!(
            info["sha256"].is_null() && info["size"] == 0 && !info["readable"].as_bool().unwrap(),
            "{info}"
        );
        assert!(
            info["summary"].as_str().unwrap().contains("size withheld"),
            "{info}"
        );
        let e = call(
            &mut s,
            "edit_file",
            json!({ "path": p, "edits": [{ "old_text": "notes", "new_text": "n" }] }),
        )
        .unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("secret_content"), "{p}");
    }
    let found = call(
        &mut s,
        "search_text",
        json!({ "query": "deploy", "context_lines": 3 }),
    )
    .unwrap();
    assert!(
        found["matches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["path"] != "notes.txt"),
        "{found}"
    );
    // Passed over without a word: a skip reason that appeared only when the query met
    // the file would tell the query met the secret.
    assert!(
        !found["skipped"].to_string().contains("secret_content"),
        "{found}"
    );
    let found = call(&mut s, "search_text", json!({ "query": "token" })).unwrap();
    assert!(!found.to_string().contains("ghp_"), "{found}");
    // Positive controls.
    assert!(call(&mut s, "read_file", json!({ "path": "public.txt" })).is_ok());
    let mut s = fx.session_with(
        json!({ "sniff_exempt": ["token.md"] }),
        true,
        Default::default(),
    );
    let r = call(&mut s, "read_file", json!({ "path": "token.md" })).unwrap();
    assert!(r["content"].as_str().unwrap().contains("ghp_"));
}

/// The component finds token prefixes with vector code the native unit tests do not run:
/// every format is planted at every offset across two of its 64-byte blocks (and their
/// tails), and each file is refused, beside the same text one character short of a token.
#[test]
fn the_component_finds_every_token_format_at_every_offset() {
    let fx = Fixture::new();
    let tokens = [
        "AKIAABCDEFGHIJKLMNOP",
        "AIzaabcdefghijklmnopqrstuvwxyz012345678",
        "ghs_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        "glpat-abcdefghijklmnopqrst",
        "xoxb-1234567890",
        "sk_live_abcdefghijklmnopqrst",
        "rk_live_abcdefghijklmnopqrst",
        "sk-ant-abcdefghijklmnopqrst",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "pypi-AgEabcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmn",
        "ASIAABCDEFGHIJKLMNOP",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "xoxa-1234567890",
        "sk-proj-abcdefghijklmnopqrst",
    ];
    let mut planted = Vec::new();
    for (t, token) in tokens.iter().enumerate() {
        for offset in (0..140).step_by(7).chain([63, 64, 65, 127, 128]) {
            let pad = " ".repeat(offset);
            let name = format!("t{t}_{offset}.txt");
            fx.write(&name, format!("{pad}{token}\n").as_bytes());
            // One body character short: not a token.
            let short = &token[..token.len() - 1];
            let control = format!("c{t}_{offset}.txt");
            fx.write(&control, format!("{pad}{short}").as_bytes());
            planted.push((name, control));
        }
    }
    let mut s = fx.session();
    for (name, control) in &planted {
        let e = call(&mut s, "read_file", json!({ "path": name })).unwrap_err();
        assert_eq!(e.reason.as_deref(), Some("secret_content"), "{name}");
        assert!(
            call(&mut s, "read_file", json!({ "path": control })).is_ok(),
            "{control}"
        );
    }
}

/// A hard link inside the repository to a file outside it reads that file's content under
/// an innocent name: such files are not read, hashed or searched unless the policy allows
/// hard links (`call` checks every output for the outside sentinel).
#[cfg(unix)]
#[test]
fn hard_links_are_not_read_unless_the_policy_allows_them() {
    let fx = Fixture::new();
    std::fs::hard_link(fx.outside.join("secret.txt"), fx.repo.join("innocent.txt")).unwrap();
    let mut s = fx.session();
    let e = call(&mut s, "read_file", json!({ "path": "innocent.txt" })).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("hardlinked"));
    let info = call(&mut s, "file_info", json!({ "path": "innocent.txt" })).unwrap();
    assert!(
        info["sha256"].is_null() && info["readable"] == false,
        "{info}"
    );
    let found = call(&mut s, "search_text", json!({ "query": "SENTINEL" })).unwrap();
    assert_eq!(found["total_matches"], 0, "{found}");
    // Positive control: with the policy's consent the same file reads (its content is
    // the sentinel, so the leak check is left out here).
    let mut s = fx.session_with(
        json!({ "allow_hardlinks": true }),
        false,
        Default::default(),
    );
    let r = s.call("read_file", r#"{"path":"innocent.txt"}"#).unwrap();
    assert_eq!(r["content"], SENTINEL_MARK);
}

/// What the attacker review found, pinned: counting regex matches, query by query, must not
/// spell out a sniffed token or key. A file holding one counts for nothing in every output
/// mode. Positive control: the same queries count a harmless file.
#[test]
fn counts_do_not_spell_out_a_sniffed_secret() {
    let fx = Fixture::new();
    fx.write(
        "tok.txt",
        b"intro line\ntoken = ghp_SUPERSECRETabcdefghijklmnopqrstuvwxy\n",
    );
    fx.write(
        "key.txt",
        b"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\n-----END RSA PRIVATE KEY-----\n",
    );
    fx.write("plain.txt", b"token = gxp_harmless\nMIIEharmless\n");
    let mut s = fx.session();
    // (query, file, count in every output): a file holding a token or a key counts for
    // nothing, whatever line the query meets in it (an answer that depended on which line
    // matched would let queries probe the secret); plain files count as usual.
    for (query, file, want) in [
        ("ghp_S[A-M]", "tok.txt", 0),
        ("^MIIEp[A-Z]", "key.txt", 0),
        ("intro", "tok.txt", 0),
        ("intro|ghp_S[A-M]", "tok.txt", 0),
        ("gxp_h", "plain.txt", 1),
        ("^MIIEh", "plain.txt", 1),
    ] {
        for output in ["count", "files", "matches"] {
            let r = call(
                &mut s,
                "search_text",
                json!({ "query": query, "regex": true, "output": output, "include": [file] }),
            )
            .unwrap();
            assert_eq!(r["total_matches"], want, "{query} {output}: {r}");
            if file == "tok.txt" {
                assert_eq!(r["matches"], json!([]), "{r}");
            }
        }
    }
}
