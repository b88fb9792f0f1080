//! `search_text` through the component.

use serde_json::{json, Value};

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

/// The host's batched reads (`host-fs.read-dir` / `read-file`) and plain WASI give the same
/// answers, refusals and skip counts included.
#[test]
fn batched_host_reads_and_plain_wasi_agree() {
    let fx = Fixture::new();
    #[cfg(unix)]
    {
        fx.symlink("../outside/secret.txt", "src/escape.txt");
        fx.symlink("lib.rs", "src/alias.rs");
        fx.symlink("../outside", "linked_dir");
    }
    fx.write("deep/a/b/c.rs", b"fn add_deep() {}\n");
    fx.write("big.txt", &vec![b'a'; 300_000]);
    let open = |batched: bool| {
        file_tools_host::Session::builder(runtime())
            .repo(&fx.repo)
            .batched_reads(batched)
            .policy(serde_json::json!({ "limits": { "max_search_file_bytes": 100000 } }))
            .build()
            .unwrap()
    };
    let (mut fast, mut plain) = (open(true), open(false));
    for (tool, args) in [
        (
            "list_dir",
            json!({ "max_depth": 10, "include_hidden": true }),
        ),
        (
            "list_dir",
            json!({ "max_depth": 10, "respect_ignore": false }),
        ),
        ("find_files", json!({ "patterns": ["**/*.rs", "*.txt"] })),
        ("search_text", json!({ "query": "add", "context_lines": 1 })),
        (
            "search_text",
            json!({ "query": "a+", "regex": true, "output": "count" }),
        ),
        (
            "search_text",
            json!({ "query": "SECRET", "include_hidden": true, "respect_ignore": false }),
        ),
    ] {
        let a = call(&mut fast, tool, args.clone());
        let b = call(&mut plain, tool, args.clone());
        let strip = |v: Value| {
            let mut v = v;
            if let Some(o) = v.as_object_mut() {
                o.remove("elapsed_ms");
            }
            v
        };
        assert_eq!(
            a.map(strip).map_err(|e| e.to_json()),
            b.map(strip).map_err(|e| e.to_json()),
            "{tool} {args}"
        );
    }
    let v = call(
        &mut fast,
        "search_text",
        json!({ "query": "a", "output": "count" }),
    )
    .unwrap();
    assert!(v["skipped"].to_string().contains("too_large"), "{v}");
}

/// Three sessions searching their shards in parallel give the one-session answer.
#[test]
fn sharded_parallel_search_matches_one_session() {
    use file_tools_host::tools::{SearchOutput, SearchTextArgs};
    let fx = Fixture::new();
    for i in 0..40 {
        fx.write(
            &format!("gen/d{}/f{i}.rs", i % 5),
            format!("fn add_{i}() {{}}\n// add again\n").as_bytes(),
        );
    }
    fx.write("gen/blob.bin", b"add\0add");
    let builder = file_tools_host::Session::builder(runtime()).repo(&fx.repo);
    let mut one = builder.clone().build().unwrap();
    let mut many = file_tools_host::ShardedSearch::new(&builder, 3).unwrap();
    assert_eq!(many.shards(), 3);
    for (query, output, max) in [
        ("add", SearchOutput::Matches, None),
        ("add", SearchOutput::Count, None),
        ("add", SearchOutput::Files, None),
        ("add", SearchOutput::Matches, Some(7)),
        ("nothing-matches-this", SearchOutput::Matches, None),
    ] {
        let args = SearchTextArgs {
            query: query.into(),
            regex: None,
            case_insensitive: None,
            path: None,
            include: vec![],
            exclude: vec![],
            context_lines: Some(1),
            max_matches: max,
            output: Some(output),
            include_hidden: Some(true),
            respect_ignore: None,
            shard: None,
            cursor: None,
        };
        let a = one.search_text(&args).unwrap();
        let b = many.search(&args).unwrap();
        assert_eq!(a.truncated, b.truncated, "{max:?}");
        let m = |r: &file_tools_host::tools::SearchTextResult| {
            r.matches
                .iter()
                .map(|m| {
                    format!(
                        "{}:{}:{}:{}:{:?}:{:?}",
                        m.path, m.line, m.column, m.text, m.before, m.after
                    )
                })
                .collect::<Vec<_>>()
        };
        let f = |r: &file_tools_host::tools::SearchTextResult| {
            r.files
                .iter()
                .map(|f| (f.path.clone(), f.count))
                .collect::<Vec<_>>()
        };
        let k = |r: &file_tools_host::tools::SearchTextResult| {
            r.skipped
                .iter()
                .map(|k| (k.reason.clone(), k.count))
                .collect::<Vec<_>>()
        };
        // The first matches in walk order are exact either way.
        assert_eq!(m(&a), m(&b));
        if a.truncated {
            // A search that stops early has partial counts, which depend on where it stopped.
            assert_eq!(m(&a).len(), 7);
            continue;
        }
        assert_eq!(a.total_matches, b.total_matches, "{query}");
        assert_eq!(a.files_searched, b.files_searched);
        assert_eq!(f(&a), f(&b));
        assert_eq!(k(&a), k(&b));
        assert!(!k(&a).is_empty());
    }
}

#[test]
fn literal_scan_finds_every_offset_in_the_component() {
    // The component's literal search runs on `simd128` vectors, the native unit tests on
    // portable lanes: needles at every offset across several 16- and 64-byte steps, after
    // filler full of near misses (the needle's own bytes, never the whole needle).
    let fx = Fixture::new();
    let needle = "EXPORT_SYMBOL_GPL";
    let offsets = 0..150usize;
    for at in offsets.clone() {
        let filler: String = "EXPORT_SYMBOL_GP".chars().cycle().take(at).collect();
        let text =
            format!("{filler}{needle} EXPORT_SYMBOL_GPX\nexport_symbol_gpl\nEXPORT_SYMBOL\n");
        fx.write(&format!("scan/f{at:03}.txt"), text.as_bytes());
    }
    // The long s folds to 's' under Unicode case folding.
    fx.write("scan/long_s.txt", "export_\u{17F}ymbol_gpl\n".as_bytes());
    let mut s = fx.session();
    let columns = |v: &Value| -> Vec<(String, u64, u64)> {
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let path = m["path"].as_str().unwrap().to_string();
                (
                    path,
                    m["line"].as_u64().unwrap(),
                    m["column"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let exact = call(
        &mut s,
        "search_text",
        json!({ "query": needle, "path": "scan", "max_matches": 1000 }),
    )
    .unwrap();
    let want: Vec<(String, u64, u64)> = offsets
        .clone()
        .map(|at| (format!("scan/f{at:03}.txt"), 1, at as u64 + 1))
        .collect();
    assert_eq!(columns(&exact), want);
    let folded = call(
        &mut s,
        "search_text",
        json!({ "query": "Export_Symbol_GPL", "path": "scan", "case_insensitive": true, "max_matches": 1000 }),
    )
    .unwrap();
    let mut want: Vec<(String, u64, u64)> = offsets
        .flat_map(|at| {
            let p = format!("scan/f{at:03}.txt");
            [(p.clone(), 1, at as u64 + 1), (p, 2, 1)]
        })
        .collect();
    want.push(("scan/long_s.txt".into(), 1, 1));
    want.sort();
    let mut got = columns(&folded);
    got.sort();
    assert_eq!(got, want);
}
