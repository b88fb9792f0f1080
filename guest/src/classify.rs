//! Classification of paths by name (and of content, for binary data).
//!
//! Precedence, first match wins: git internals, secrets, generated output, vendored code,
//! lock files, binary by extension, then source, config, doc or plain text. A policy may
//! override the result for chosen globs (see `policy`).

use serde::{Deserialize, Serialize};

use crate::path::LogicalPath;

/// The classification of a path; one-to-one with the WIT `file-kind` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Source,
    Config,
    Doc,
    Text,
    Secret,
    GitInternal,
    Generated,
    Vendored,
    Lockfile,
    Binary,
    Directory,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Config => "config",
            Kind::Doc => "doc",
            Kind::Text => "text",
            Kind::Secret => "secret",
            Kind::GitInternal => "git_internal",
            Kind::Generated => "generated",
            Kind::Vendored => "vendored",
            Kind::Lockfile => "lockfile",
            Kind::Binary => "binary",
            Kind::Directory => "directory",
        }
    }
}

/// Directory names that are build output wherever they appear.
const GENERATED_DIRS: &[&str] = &[
    "node_modules",
    "generated-sources",
    "generated-test-sources",
    "__pycache__",
    ".gradle",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".parcel-cache",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "bazel-out",
    "bazel-bin",
    "bazel-testlogs",
    ".dart_tool",
    "Pods",
    "DerivedData",
];

/// Directory names that are build output only beside a build file that makes them:
/// `drivers/nvme/target` in a C tree is source, `target` beside `Cargo.toml` is not.
const CONTEXT_DIRS: &[(&str, &[&str])] = &[
    (
        "target",
        &["Cargo.toml", "pom.xml", "build.sbt", "project.clj"],
    ),
    (
        "build",
        &[
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
            "CMakeLists.txt",
            "package.json",
            "setup.py",
            "pyproject.toml",
            "meson.build",
        ],
    ),
    ("dist", &["package.json", "setup.py", "pyproject.toml"]),
    (
        "out",
        &[
            "package.json",
            "tsconfig.json",
            "build.gradle",
            "build.gradle.kts",
        ],
    ),
    ("_build", &["mix.exs", "dune-project", "rebar.config"]),
];

const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "vendors",
    "third_party",
    "third-party",
    "thirdparty",
];

const SECRET_NAMES: &[&str] = &[
    ".env",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    "secrets.toml",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "service-account.json",
    ".dockercfg",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    "master.key",
    "wp-config.php",
];

const SECRET_EXTS: &[&str] = &[
    "pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "kdbx", "tfstate", "tfvars", "gpg",
    "age", "p8", "der",
];

const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "mix.lock",
    "flake.lock",
    "packages.lock.json",
    "gradle.lockfile",
    "pubspec.lock",
    "Podfile.lock",
    "Package.resolved",
    "conan.lock",
    "deno.lock",
    "cabal.project.freeze",
];

const GENERATED_SUFFIXES: &[&str] = &[
    ".pb.go",
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.cc",
    ".pb.h",
    ".min.js",
    ".min.css",
    ".g.dart",
    ".freezed.dart",
    ".designer.cs",
    ".generated.ts",
    ".generated.go",
];

const BINARY_EXTS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tif", "tiff", "psd", "pdf", "zip", "gz",
    "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "war", "ear", "class", "o", "obj", "a", "lib",
    "so", "dylib", "dll", "exe", "bin", "wasm", "pyc", "pyo", "woff", "woff2", "ttf", "otf", "eot",
    "mp3", "mp4", "m4a", "mov", "avi", "mkv", "wav", "ogg", "flac", "sqlite", "sqlite3", "db",
    "dat", "iso", "dmg", "deb", "rpm", "whl", "cwasm", "rlib", "lockb",
];

const SOURCE_EXTS: &[&str] = &[
    "rs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "go", "py", "pyi", "js", "mjs", "cjs",
    "ts", "mts", "cts", "tsx", "jsx", "java", "kt", "kts", "scala", "swift", "m", "mm", "rb",
    "php", "cs", "fs", "vb", "sh", "bash", "zsh", "fish", "ps1", "pl", "pm", "lua", "hs", "ml",
    "mli", "ex", "exs", "erl", "hrl", "clj", "cljs", "dart", "r", "jl", "sql", "vue", "svelte",
    "css", "scss", "sass", "less", "html", "htm", "zig", "nim", "v", "sv", "vhd", "asm", "s", "S",
    "proto", "graphql", "wit", "wat", "el", "lisp", "scm", "groovy", "tf", "sol", "cu", "f90",
    "pas", "d", "cmake", "mk", "awk", "bzl", "star", "nix", "elm", "purs",
];

const CONFIG_EXTS: &[&str] = &[
    "toml",
    "yaml",
    "yml",
    "json",
    "jsonc",
    "json5",
    "xml",
    "ini",
    "cfg",
    "conf",
    "config",
    "properties",
    "gradle",
    "plist",
    "editorconfig",
    "env_example",
    "lock_example",
    "csproj",
    "sln",
    "props",
    "targets",
    "hcl",
    "nomad",
];

const CONFIG_NAMES: &[&str] = &[
    "Makefile",
    "makefile",
    "GNUmakefile",
    "Dockerfile",
    "Containerfile",
    "CMakeLists.txt",
    "Jenkinsfile",
    "Vagrantfile",
    "Procfile",
    "Gemfile",
    "Rakefile",
    "Pipfile",
    "BUILD",
    "BUILD.bazel",
    "WORKSPACE",
    "Kconfig",
    "Kbuild",
    ".gitignore",
    ".gitattributes",
    ".gitmodules",
    ".dockerignore",
    ".ignore",
    ".editorconfig",
    ".prettierrc",
    ".eslintrc",
    ".babelrc",
    "justfile",
    "Justfile",
    "go.mod",
    "build.rs",
    "rust-toolchain",
];

const DOC_EXTS: &[&str] = &[
    "md", "markdown", "rst", "txt", "adoc", "asciidoc", "org", "tex", "rtf", "man",
];

const DOC_NAMES: &[&str] = &[
    "README",
    "LICENSE",
    "LICENCE",
    "COPYING",
    "CHANGELOG",
    "CHANGES",
    "NEWS",
    "AUTHORS",
    "CONTRIBUTING",
    "NOTICE",
    "MAINTAINERS",
    "CREDITS",
    "TODO",
    "INSTALL",
];

/// Classifies a logical path by name alone. Directories whose name is build output only in
/// context (`target`, `build`, `dist`, `out`, `_build`) count as generated, the cautious
/// reading; [`classify_with`] looks for the build file that makes them.
pub fn classify(path: &LogicalPath, is_dir: bool) -> Kind {
    classify_with(path, is_dir, &|_| true)
}

/// Classifies a logical path; `has_file` says whether a file exists (used only for the
/// directories listed in `CONTEXT_DIRS`).
pub fn classify_with(
    path: &LogicalPath,
    is_dir: bool,
    has_file: &dyn Fn(&LogicalPath) -> bool,
) -> Kind {
    let mut marks = DirMarks::default();
    let mut dir = LogicalPath::root();
    for part in path.parent().parts() {
        dir = dir.join(part);
        marks = marks.enter(&dir, has_file);
    }
    marks.classify(path, is_dir, has_file)
}

/// What the directories above an entry settle about it: the built-in half of a walk's
/// per-directory scope, so that each entry is then classified by its own name alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirMarks {
    git: bool,
    generated: bool,
    vendored: bool,
}

impl DirMarks {
    /// The marks of directory `dir`, whose parent has these marks.
    pub fn enter(self, dir: &LogicalPath, has_file: &dyn Fn(&LogicalPath) -> bool) -> DirMarks {
        let name = dir.name();
        DirMarks {
            git: self.git || name == ".git",
            generated: self.generated || is_generated_dir(dir, has_file),
            vendored: self.vendored || VENDORED_DIRS.contains(&name),
        }
    }

    /// The kind of `path`, an entry of a directory with these marks. Precedence as in the
    /// module docs: git internals, secrets, generated, vendored, then the name.
    pub fn classify(
        self,
        path: &LogicalPath,
        is_dir: bool,
        has_file: &dyn Fn(&LogicalPath) -> bool,
    ) -> Kind {
        let name = path.name();
        if self.git || name == ".git" {
            return Kind::GitInternal;
        }
        if !is_dir && is_secret_name(name) {
            return Kind::Secret;
        }
        if self.generated || (is_dir && is_generated_dir(path, has_file)) {
            return Kind::Generated;
        }
        if self.vendored || (is_dir && VENDORED_DIRS.contains(&name)) {
            return Kind::Vendored;
        }
        if is_dir {
            return Kind::Directory;
        }
        classify_name(name)
    }
}

/// True when the directory `dir` holds build output: by name alone, or by name beside the
/// build file that makes it.
fn is_generated_dir(dir: &LogicalPath, has_file: &dyn Fn(&LogicalPath) -> bool) -> bool {
    let name = dir.name();
    if GENERATED_DIRS.contains(&name) {
        return true;
    }
    CONTEXT_DIRS.iter().any(|(d, makers)| {
        *d == name && {
            let parent = dir.parent();
            makers.iter().any(|m| has_file(&parent.join(m)))
        }
    })
}

fn is_secret_name(name: &str) -> bool {
    if SECRET_NAMES.contains(&name) || name.starts_with(".env.") {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    // Private SSH keys under other names (id_rsa_work, deploy_key) and their public halves
    // are told apart by the ".pub" ending.
    if (lower.starts_with("id_rsa")
        || lower.starts_with("id_ed25519")
        || lower.starts_with("id_ecdsa"))
        && !lower.ends_with(".pub")
    {
        return true;
    }
    extension(&lower).is_some_and(|e| SECRET_EXTS.contains(&e))
}

fn classify_name(name: &str) -> Kind {
    if LOCKFILES.contains(&name) {
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
    let Some(ext) = extension(name) else {
        return Kind::Text;
    };
    let lower = ext.to_ascii_lowercase();
    let ext_l = lower.as_str();
    if BINARY_EXTS.contains(&ext_l) {
        Kind::Binary
    } else if SOURCE_EXTS.contains(&ext) || SOURCE_EXTS.contains(&ext_l) {
        Kind::Source
    } else if CONFIG_EXTS.contains(&ext_l) {
        Kind::Config
    } else if DOC_EXTS.contains(&ext_l) {
        Kind::Doc
    } else {
        Kind::Text
    }
}

fn extension(name: &str) -> Option<&str> {
    let idx = name.rfind('.')?;
    if idx == 0 {
        // A dotfile such as `.bashrc` has no extension.
        return None;
    }
    Some(&name[idx + 1..])
}

/// How many leading bytes are sniffed for binary content.
pub const SNIFF_BYTES: usize = 8192;

/// True when the content looks binary: a NUL byte in its first 8 KiB.
pub fn looks_binary(content: &[u8]) -> bool {
    memchr::memchr(0, &content[..content.len().min(SNIFF_BYTES)]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(p: &str) -> Kind {
        classify(&LogicalPath::parse(p).unwrap(), false)
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

    #[test]
    fn git_internals_win_over_everything() {
        assert_eq!(kind(".git/config"), Kind::GitInternal);
        assert_eq!(kind("sub/.git/HEAD"), Kind::GitInternal);
        assert_eq!(
            classify(&LogicalPath::parse(".git").unwrap(), true),
            Kind::GitInternal
        );
        assert_eq!(kind(".github/workflows/ci.yml"), Kind::Config);
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
}
