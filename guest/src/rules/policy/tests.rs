use super::*;

fn p(s: &str) -> LogicalPath {
    LogicalPath::parse(s).unwrap()
}

#[test]
fn defaults_deny_secrets_and_git_but_allow_source() {
    let pol = Policy::from_json("").unwrap();
    let r = pol.check_read(&p(".env"), Kind::Secret).unwrap_err();
    assert_eq!(r.reason.as_deref(), Some("secret"));
    assert!(pol.check_read(&p("src/a.rs"), Kind::Source).is_ok());
    assert!(pol.check_write(&p("src/a.rs"), Kind::Source).is_ok());
    let w = pol
        .check_write(&p("Cargo.lock"), Kind::Lockfile)
        .unwrap_err();
    assert_eq!(w.reason.as_deref(), Some("lockfile"));
}

#[test]
fn block_wins_over_allow_and_covers_subtrees() {
    let pol =
        Policy::from_json(r#"{"read":{"allow":["src/**"],"block":["src/private"]}}"#).unwrap();
    assert!(pol.check_read(&p("src/a.rs"), Kind::Source).is_ok());
    // Hidden paths answer as missing ones; the rule is still told apart internally.
    let e = pol
        .check_read(&p("src/private/k.rs"), Kind::Source)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let scope = pol.scope_of(&p("src/private"));
    assert_eq!(
        pol.read_denial_in(&scope, &p("src/private/k.rs"), Kind::Source),
        Some("blocked")
    );
    let e = pol.check_read(&p("docs/a.md"), Kind::Doc).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let scope = pol.scope_of(&p("docs"));
    assert_eq!(
        pol.read_denial_in(&scope, &p("docs/a.md"), Kind::Doc),
        Some("not_allowed")
    );
}

#[test]
fn read_only_refuses_every_write() {
    let pol = Policy::from_json(r#"{"read_only":true}"#).unwrap();
    let e = pol.check_write(&p("a.txt"), Kind::Text).unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("read_only"));
}

#[test]
fn overrides_reclassify() {
    let pol = Policy::from_json(r#"{"overrides":[{"pattern":".env.example","kind":"config"},{"pattern":"private","kind":"secret"}]}"#).unwrap();
    assert_eq!(pol.kind_of(&p(".env.example"), false), Kind::Config);
    assert_eq!(pol.kind_of(&p(".env"), false), Kind::Secret);
    assert_eq!(pol.kind_of(&p("private/notes.md"), false), Kind::Secret);
}

#[test]
fn unknown_fields_and_bad_globs_are_refused() {
    assert_eq!(
        Policy::from_json(r#"{"read_onyl":true}"#).unwrap_err().code,
        ErrorCode::InvalidInput
    );
    assert_eq!(
        Policy::from_json(r#"{"read":{"block":["a[b"]}}"#)
            .unwrap_err()
            .code,
        ErrorCode::InvalidInput
    );
}

#[test]
fn guarding_rules_match_every_spelling_granting_ones_only_where_names_fold() {
    let pol = Policy::from_json(
        r#"{"read":{"block":["private/**"]},"write":{"block":["ci/**"]},"reserved":["policy.toml"]}"#,
    )
    .unwrap();
    for hidden in [
        "PRIVATE/plan.txt",
        "Private./plan.txt",
        "priv\u{200B}ate/plan.txt",
    ] {
        assert!(pol.hides(&p(hidden), Kind::Text), "{hidden}");
    }
    assert!(!pol.hides(&p("public/plan.txt"), Kind::Text));
    let e = pol
        .check_write(&p("CI/deploy.sh"), Kind::Source)
        .unwrap_err();
    assert_eq!(e.reason.as_deref(), Some("blocked"));
    assert!(pol.check_write(&p("src/deploy.sh"), Kind::Source).is_ok());
    assert!(pol.is_host_file(&p("POLICY.toml")));
    assert!(pol.is_host_file(&p("policy.TOML.")));
    assert!(!pol.is_host_file(&p("policy.tom")));

    // An allow list grants: another spelling is another file unless names fold.
    let unknown = Policy::from_json(r#"{"write":{"allow":["src/**"]}}"#).unwrap();
    assert!(unknown.check_write(&p("src/a.rs"), Kind::Source).is_ok());
    assert!(unknown.check_write(&p("SRC/a.rs"), Kind::Source).is_err());
    let folding =
        Policy::from_json(r#"{"write":{"allow":["src/**"]},"case_insensitive":true}"#).unwrap();
    assert!(folding.check_write(&p("SRC/a.rs"), Kind::Source).is_ok());
    assert!(folding.check_write(&p("lib/a.rs"), Kind::Source).is_err());
    // Only spellings every folding file system joins: `ſrc` and `straße` are names of
    // their own on NTFS, so a granting rule does not reach them.
    let wide =
        Policy::from_json(r#"{"read":{"allow":["src/**","strasse/**"]},"case_insensitive":true}"#)
            .unwrap();
    assert!(!wide.hides(&p("Src/a.rs"), Kind::Source));
    assert!(!wide.hides(&p("STRASSE/a.rs"), Kind::Source));
    for other in ["ſrc/a.rs", "s\u{200C}rc/a.rs", "src./a.rs", "straße/a.rs"] {
        assert!(wide.hides(&p(other), Kind::Source), "{other}");
    }
    // A walk descends where the allow list may grant something, in the same spelling.
    assert!(wide.may_allow_below(&p("SRC")));
    assert!(!wide.may_allow_below(&p("ſrc")));
}

#[test]
fn overrides_that_guard_fold_and_overrides_that_relax_do_not() {
    let pol = Policy::from_json(
        r#"{"overrides":[{"pattern":"keys/**","kind":"secret"},{"pattern":"fixtures/**","kind":"text"}]}"#,
    )
    .unwrap();
    assert_eq!(pol.kind_of(&p("KEYS/a.txt"), false), Kind::Secret);
    assert_eq!(pol.kind_of(&p("fixtures/a.rs"), false), Kind::Text);
    assert_eq!(pol.kind_of(&p("FIXTURES/a.rs"), false), Kind::Source);
}
