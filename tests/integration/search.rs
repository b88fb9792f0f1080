//! `search_text` through the component.

use serde_json::json;

use crate::support::*;

#[test]
fn literal_search_respects_ignore_rules_and_skips_secrets() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(&mut s, "search_text", json!({ "query": "add" })).unwrap();
    let hits: Vec<(String, u64)> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hits,
        [
            ("docs/guide.md".to_string(), 1),
            ("src/lib.rs".into(), 1),
            ("vendor/lib/v.rs".into(), 1)
        ]
    );
    assert_eq!(v["total_matches"], 3);
    // The secret holds no "add", but a search for its content must not find it either.
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": SECRET_MARK, "include_hidden": true, "respect_ignore": false }),
    )
    .unwrap();
    assert_eq!(v["total_matches"], 0);
    let skipped = v["skipped"].to_string();
    assert!(skipped.contains("secret"), "{skipped}");
    assert!(skipped.contains("binary"), "{skipped}");
}

#[test]
fn regex_case_context_and_globs() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "^pub fn (add|sub)", "regex": true, "include": ["src/**"] }),
    )
    .unwrap();
    assert_eq!(v["total_matches"], 2);
    let m = &v["matches"][1];
    assert_eq!(
        (m["path"].as_str(), m["line"].as_u64(), m["column"].as_u64()),
        (Some("src/lib.rs"), Some(5), Some(1))
    );
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "USE", "case_insensitive": true, "context_lines": 1, "path": "docs" }),
    )
    .unwrap();
    assert_eq!(v["total_matches"], 2);
    assert_eq!(v["matches"][0]["after"], json!(["Use sub() to subtract."]));
    assert_eq!(v["matches"][1]["before"], json!(["Use add() to add."]));
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "add", "exclude": ["*.md", "vendor/**"] }),
    )
    .unwrap();
    assert_eq!(v["total_matches"], 1);
}

#[test]
fn output_modes_and_truncation() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "a", "output": "files" }),
    )
    .unwrap();
    assert!(v["matches"].as_array().unwrap().is_empty());
    assert!(v["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "src/lib.rs" && f["count"] == 4));
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "a", "output": "count" }),
    )
    .unwrap();
    assert!(v["files"].as_array().unwrap().is_empty());
    assert!(v["total_matches"].as_u64().unwrap() >= 10);
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "a", "max_matches": 2 }),
    )
    .unwrap();
    assert_eq!(v["matches"].as_array().unwrap().len(), 2);
    assert_eq!(v["truncated"], true);
}

#[test]
fn search_in_one_file_and_refusals() {
    let fx = Fixture::new();
    let mut s = fx.session();
    let v = call(
        &mut s,
        "search_text",
        json!({ "query": "a - b", "path": "src/lib.rs" }),
    )
    .unwrap();
    assert_eq!(v["matches"][0]["line"], 6);
    assert_eq!(
        code(&call(&mut s, "search_text", json!({ "query": "" }))),
        "INVALID_INPUT"
    );
    assert_eq!(
        code(&call(
            &mut s,
            "search_text",
            json!({ "query": "(", "regex": true })
        )),
        "INVALID_INPUT"
    );
    assert_eq!(
        code(&call(
            &mut s,
            "search_text",
            json!({ "query": "x", "path": ".env" })
        )),
        "POLICY_DENIED"
    );
    assert_eq!(
        code(&call(
            &mut s,
            "search_text",
            json!({ "query": "x", "path": "nope" })
        )),
        "NOT_FOUND"
    );
    let huge = "(((a{1,50}){1,50}){1,50})";
    assert_eq!(
        code(&call(
            &mut s,
            "search_text",
            json!({ "query": huge, "regex": true })
        )),
        "INVALID_INPUT"
    );
}

#[test]
fn oversized_files_are_skipped_and_counted() {
    let fx = Fixture::new();
    fx.write("big.txt", "add\n".repeat(1000).as_bytes());
    let mut s = fx.session_with(
        json!({ "limits": { "max_search_file_bytes": 1000 } }),
        true,
        Default::default(),
    );
    let v = call(&mut s, "search_text", json!({ "query": "add" })).unwrap();
    assert!(v["skipped"].to_string().contains("too_large"));
    assert_eq!(v["total_matches"], 3);
}

#[test]
fn shards_partition_the_matches() {
    let fx = Fixture::new();
    for i in 0..40 {
        fx.write(&format!("many/f{i}.txt"), b"needle\n");
    }
    let mut s = fx.session();
    let mut total = 0;
    for index in 0..3 {
        let v = call(
            &mut s,
            "search_text",
            json!({ "query": "needle", "shard": { "index": index, "count": 3 } }),
        )
        .unwrap();
        let n = v["total_matches"].as_u64().unwrap();
        assert!(n > 0 && n < 40);
        total += n;
    }
    assert_eq!(total, 40);
    assert_eq!(
        code(&call(
            &mut s,
            "search_text",
            json!({ "query": "x", "shard": { "index": 3, "count": 3 } })
        )),
        "INVALID_INPUT"
    );
}
