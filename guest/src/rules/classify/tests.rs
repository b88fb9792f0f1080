use super::*;

fn kind(p: &str) -> Kind {
    classify(&LogicalPath::parse(p).unwrap(), false)
}

/// The tables `classify_name` and `is_secret_name` binary-search.
const SEARCHED: [&[&str]; 10] = [
    SECRET_NAMES,
    SECRET_EXTS,
    LOCKFILES,
    AUTOMATION_NAMES,
    BINARY_EXTS,
    SOURCE_EXTS,
    CONFIG_EXTS,
    CONFIG_NAMES,
    DOC_EXTS,
    DOC_NAMES,
];

#[test]
fn generated_endings_hold_in_every_spelling() {
    for p in [
        "web/app.MIN.JS",
        "api/x.PB.GO",
        "py/m_PB2.py",
        "ui/a.Min.Css.",
    ] {
        assert_eq!(kind(p), Kind::Generated, "{p}");
    }
    // Positive control: names that only look alike.
    assert_eq!(kind("web/app.mini.js"), Kind::Source);
    assert_eq!(kind("api/x.go"), Kind::Source);
}

#[test]
fn lookup_tables_are_sorted_and_fit_the_folding_buffer() {
    for t in SEARCHED {
        assert!(
            t.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()),
            "{t:?}"
        );
    }
    for t in [
        SECRET_NAMES,
        LOCKFILES,
        AUTOMATION_NAMES,
        AUTOMATION_DIRS,
        GENERATED_DIRS,
    ] {
        assert!(t.iter().all(|e| crate::rules::fold::fold(e) == *e), "{t:?}");
    }
    assert!(VENDORED_DIRS
        .iter()
        .all(|e| crate::rules::fold::fold(e) == *e));
    for t in [SECRET_EXTS, BINARY_EXTS, SOURCE_EXTS, CONFIG_EXTS, DOC_EXTS] {
        assert!(t
            .iter()
            .all(|e| e.len() <= 16 && *e == e.to_ascii_lowercase()));
    }
    assert!(DOC_NAMES
        .iter()
        .all(|e| e.len() <= 16 && *e == e.to_ascii_uppercase()));
}

/// The plain reading of the precedence rules, with linear scans and lowercased copies:
/// the oracle for the table lookups.
fn reference_kind(name: &str) -> Kind {
    let lower = name.to_ascii_lowercase();
    let ext_l = extension(&lower);
    // Only the table lookups are the subject here; the secret rules have their own
    // tests, with a linear scan standing in for the sorted table.
    let plain_secret_table =
        SECRET_NAMES.contains(&lower.as_str()) || ext_l.is_some_and(|e| SECRET_EXTS.contains(&e));
    if plain_secret_table || is_secret_name(name) {
        return Kind::Secret;
    }
    if LOCKFILES.contains(&lower.as_str()) {
        return Kind::Lockfile;
    }
    if GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return Kind::Generated;
    }
    if CONFIG_NAMES.contains(&name) {
        return Kind::Config;
    }
    let stem_upper = name.split('.').next().unwrap_or("").to_ascii_uppercase();
    if DOC_NAMES.contains(&stem_upper.as_str()) {
        return Kind::Doc;
    }
    let Some(e) = ext_l else { return Kind::Text };
    if BINARY_EXTS.contains(&e) {
        Kind::Binary
    } else if SOURCE_EXTS.contains(&e) {
        Kind::Source
    } else if CONFIG_EXTS.contains(&e) {
        Kind::Config
    } else if DOC_EXTS.contains(&e) {
        Kind::Doc
    } else {
        Kind::Text
    }
}

#[test]
fn table_lookups_agree_with_the_plain_rules() {
    // Every table entry as a name, a stem and an extension, in three cases, joined with
    // each other and with near misses.
    let mut pieces: Vec<String> = SEARCHED
        .iter()
        .chain([&GENERATED_SUFFIXES])
        .flat_map(|t| t.iter())
        .flat_map(|e| {
            [
                e.to_string(),
                e.to_ascii_uppercase(),
                e.to_ascii_lowercase(),
            ]
        })
        .collect();
    pieces.extend(
        [
            "",
            "x",
            "id_rsa_work",
            "deploy.pub",
            "README",
            "a.b.c",
            "verylongextension17",
        ]
        .map(String::from),
    );
    let mut checked = 0;
    for stem in &pieces {
        for ext in pieces.iter().step_by(3) {
            for name in [
                stem.clone(),
                format!("{stem}.{ext}"),
                format!("{stem}{ext}"),
            ] {
                if name.is_empty() {
                    continue;
                }
                let got = if is_secret_name(&name) {
                    Kind::Secret
                } else if listed(LOCKFILES, name.to_ascii_lowercase().as_bytes()) {
                    Kind::Lockfile
                } else {
                    classify_name(&name)
                };
                assert_eq!(got, reference_kind(&name), "{name}");
                checked += 1;
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

#[test]
fn secrets_are_recognised() {
    for p in [
        ".env",
        ".env.local",
        "config/.env.production",
        "certs/server.pem",
        "tls.key",
        "store.p12",
        "app.jks",
        "id_rsa",
        "home/id_ed25519",
        "config/secrets.yml",
        "node_modules/x/.env",
        "deploy/id_rsa_deploy",
    ] {
        assert_eq!(kind(p), Kind::Secret, "{p}");
    }
    assert_eq!(kind("id_rsa.pub"), Kind::Text);
    assert_eq!(kind("keys.rs"), Kind::Source);
}

/// Every spelling an attacker or a careless commit might use, and their look-alikes
/// that must stay readable.
#[test]
fn secrets_are_recognised_in_any_case_family_and_copy() {
    for p in [
        ".ENV",
        ".Env.Production",
        ".envrc",
        ".env_local",
        ".env-staging",
        "prod.env",
        "config/Staging.ENV",
        "SECRETS.YAML",
        "secrets.yml",
        "Credentials",
        "credentials.ini",
        ".aws/credentials",
        ".docker/config.json",
        ".kube/config",
        ".NETRC",
        "_netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".pgpass",
        "kubeconfig",
        "server.pem.bak",
        "server.PEM.orig",
        "tls.key~",
        ".env.swp",
        ".id_rsa.swp",
        "id_rsa.bak",
        "id_dsa",
        "deploy_key",
        "github-deploy-key",
        "release.keystore",
        "cert.P12",
        "cert.pfx",
        "app.JKS",
    ] {
        assert_eq!(kind(p), Kind::Secret, "{p}");
    }
    for (p, k) in [
        (".env.example", Kind::Text),
        (".env.sample", Kind::Text),
        (".env.template", Kind::Text),
        ("id_rsa.pub", Kind::Text),
        ("deploy_key.pub", Kind::Text),
        ("secret.rs", Kind::Source),
        ("secret.txt", Kind::Doc),
        ("credentials.rs", Kind::Source),
        ("environment.rs", Kind::Source),
        ("docker/config.json", Kind::Config),
        ("kube/config", Kind::Text),
        ("envelope.txt", Kind::Doc),
        ("notes.bak", Kind::Text),
        (".bak", Kind::Text),
    ] {
        assert_eq!(kind(p), k, "{p}");
    }
}

#[test]
fn git_internals_in_any_case() {
    assert_eq!(kind(".GIT/config"), Kind::GitInternal);
    assert_eq!(kind("sub/.Git/hooks/pre-commit"), Kind::GitInternal);
    assert_eq!(kind(".gitignore"), Kind::Config);
}

#[test]
fn git_internals_win_over_everything() {
    assert_eq!(kind(".git/config"), Kind::GitInternal);
    assert_eq!(kind("sub/.git/HEAD"), Kind::GitInternal);
    assert_eq!(
        classify(&LogicalPath::parse(".git").unwrap(), true),
        Kind::GitInternal
    );
    assert_eq!(kind(".github/workflows/ci.yml"), Kind::Automation);
    assert_eq!(kind(".git/hooks/pre-commit"), Kind::GitInternal);
}

#[test]
fn guarding_kinds_hold_in_every_spelling_a_folding_file_system_opens() {
    // U+017F (long s), U+212A (Kelvin sign), a trailing dot, an NTFS stream, a
    // zero-width non-joiner: each opens the guarded file on some file system.
    for (p, k) in [
        ("id_r\u{17F}a", Kind::Secret),
        ("server.\u{212A}ey", Kind::Secret),
        (".env.", Kind::Secret),
        (".env:x", Kind::Secret),
        ("CARGO.LOCK", Kind::Lockfile),
        ("web/Package-Lock.json", Kind::Lockfile),
        ("NODE_MODULES/x/index.js", Kind::Generated),
        ("VENDOR/lib.c", Kind::Vendored),
        (".g\u{200C}it/config", Kind::GitInternal),
        (".GIT./config", Kind::GitInternal),
        (".VSCODE/settings.json", Kind::Automation),
        (".GitHub/Workflows/ci.yml", Kind::Automation),
    ] {
        assert_eq!(kind(p), k, "{p}");
    }
    // Positive controls: names that only look alike stay what they are.
    assert_eq!(kind("id_rsa.pub"), Kind::Text);
    assert_eq!(kind("vendors.txt"), Kind::Doc);
    assert_eq!(kind("src/workflows/ci.yml"), Kind::Config);
}

/// A name is generated output by the ending it has as given as well as by its folded
/// form: folding cuts a name at an NTFS stream separator, so `out:app.min.js` (a file
/// of that name on Linux) folds to `out`, whose ending says nothing. The previous
/// code guarded it by the name as given; a write to it must stay refused.
#[test]
fn a_generated_ending_past_a_stream_separator_still_makes_the_name_generated() {
    for p in [
        "out:app.min.js",
        "gen/x:y.pb.go",
        "gen/a:b_pb2.py",
        "ui/w:form1.designer.cs",
    ] {
        assert_eq!(kind(p), Kind::Generated, "{p}");
    }
    let pol = crate::rules::policy::Policy::from_json("").unwrap();
    let lp = LogicalPath::parse("out:app.min.js").unwrap();
    assert!(pol.write_denial(&lp, kind("out:app.min.js")).is_some());
    // Positive controls: the folded form still decides in every other spelling, and a
    // name past a separator without such an ending is what its extension says.
    assert_eq!(kind("APP.MIN.JS"), Kind::Generated);
    assert_eq!(kind("app.min.js:zz"), Kind::Generated);
    assert_eq!(kind("out:app.js"), Kind::Source);
    assert_eq!(kind("out:app.min.txt"), Kind::Doc);
}

#[test]
fn settings_that_run_commands_are_automation() {
    for p in [
        ".vscode/settings.json",
        ".vscode/tasks.json",
        ".cursor/mcp.json",
        ".mcp.json",
        ".claude/settings.json",
        ".gemini/settings.json",
        ".devcontainer/devcontainer.json",
        ".husky/pre-commit",
        ".githooks/pre-push",
        ".pre-commit-config.yaml",
        ".gitmodules",
        "sub/.gitattributes",
        ".github/workflows/release.yml",
        ".github/actions/setup/action.yml",
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        "Jenkinsfile",
        "app.code-workspace",
        ".idea/runConfigurations/x.xml",
        ".cargo/config.toml",
        "tools/.Cargo/config",
        ".config/mise.toml",
        ".config/mise/config.toml",
        ".nvim.lua",
        ".exrc",
        ".lintstagedrc.json",
        ".simple-git-hooks.json",
        ".aider.conf.yml",
        ".bazelrc",
        ".hg/hgrc",
        ".vs/tasks.vs.json",
        ".run/app.run.xml",
        "web.sublime-project",
    ] {
        assert_eq!(kind(p), Kind::Automation, "{p}");
    }
    // Positive controls: ordinary files and look-alike directories.
    for (p, k) in [
        ("src/settings.json", Kind::Config),
        ("vscode/settings.json", Kind::Config),
        (".gitignore", Kind::Config),
        ("docs/workflows.md", Kind::Doc),
        ("cargo/config.toml", Kind::Config),
        (".cargo/registry.toml", Kind::Config),
        ("config.toml", Kind::Config),
    ] {
        assert_eq!(kind(p), k, "{p}");
    }
    // A secret inside such a directory is still a secret.
    assert_eq!(kind(".vscode/.env"), Kind::Secret);
}

#[test]
fn git_shape_needs_head_with_objects_and_refs_or_commondir() {
    assert!(is_git_shape([true, true, true, false]));
    assert!(is_git_shape([true, false, false, true]));
    assert!(!is_git_shape([true, true, false, false]));
    assert!(!is_git_shape([false, true, true, true]));
}

#[test]
fn generated_vendored_and_lockfiles() {
    assert_eq!(kind("target/debug/app"), Kind::Generated);
    assert_eq!(kind("web/node_modules/react/index.js"), Kind::Generated);
    assert_eq!(kind("api/v1/service.pb.go"), Kind::Generated);
    assert_eq!(kind("app/target/generated-sources/A.java"), Kind::Generated);
    assert_eq!(kind("vendor/github.com/x/y.go"), Kind::Vendored);
    assert_eq!(kind("Cargo.lock"), Kind::Lockfile);
    assert_eq!(kind("web/package-lock.json"), Kind::Lockfile);
    assert_eq!(
        classify(&LogicalPath::parse("target").unwrap(), true),
        Kind::Generated
    );
    assert_eq!(
        classify(&LogicalPath::parse("src").unwrap(), true),
        Kind::Directory
    );
}

#[test]
fn contextual_build_dirs_need_their_build_file() {
    let only_cargo = |p: &LogicalPath| p.to_string() == "Cargo.toml";
    let k = |p: &str| classify_with(&LogicalPath::parse(p).unwrap(), false, &only_cargo);
    assert_eq!(k("target/debug/app"), Kind::Generated);
    assert_eq!(k("drivers/nvme/target/core.c"), Kind::Source);
    assert_eq!(k("tools/build/Makefile"), Kind::Config);
    assert_eq!(k("web/node_modules/x.js"), Kind::Generated);
}

#[test]
fn text_kinds_by_extension_and_name() {
    assert_eq!(kind("src/main.rs"), Kind::Source);
    assert_eq!(kind("pom.xml"), Kind::Config);
    assert_eq!(kind("Makefile"), Kind::Config);
    assert_eq!(kind("README.md"), Kind::Doc);
    assert_eq!(kind("LICENSE"), Kind::Doc);
    assert_eq!(kind("notes.weird"), Kind::Text);
    assert_eq!(kind("logo.PNG"), Kind::Binary);
}

#[test]
fn binary_sniffing_looks_for_nul() {
    assert!(looks_binary(b"abc\0def"));
    assert!(!looks_binary("héllo\nworld".as_bytes()));
    let mut late = vec![b'a'; SNIFF_BYTES + 10];
    late.push(0);
    assert!(!looks_binary(&late));
}

/// UTF-16 text has NUL bytes wherever its characters are ASCII: not binary for that.
#[test]
fn utf16_and_utf32_text_is_not_binary() {
    let le: Vec<u8> = "\u{feff}Grüße\r\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    assert!(!looks_binary(&le));
    let be: Vec<u8> = "\u{feff}x = 1\n"
        .encode_utf16()
        .flat_map(u16::to_be_bytes)
        .collect();
    assert!(!looks_binary(&be));
    assert!(
        !looks_binary(&be[2..]),
        "unmarked, one byte order reads as text"
    );
    assert!(!looks_binary(b"\xFF\xFE\0\0h\0\0\0i\0\0\0"));
    // Marked, but U+0000 follows: binary. And structures of small numbers are binary.
    assert!(looks_binary(b"\xFF\xFE\0\0\0\0\0\0\x01\0\0\0"));
    assert!(looks_binary(b"\x01\0\x02\0\x03\0\x04\0"));
}
