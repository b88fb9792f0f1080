//! Classification of paths by name (and of content, for binary data).
//!
//! Precedence, first match wins: git internals, secrets, generated output, vendored code,
//! automation (settings that make other programs run commands), lock files, binary by
//! extension, then source, config, doc or plain text. A policy may override the result for
//! chosen globs (see `policy`).
//!
//! Every name that decides a guarding kind (git internals, secrets, generated, vendored,
//! automation, lock files) is compared in its folded form (see `fold`), so that any spelling
//! a case-folding file system opens as the same file gets the same kind.

use serde::{Deserialize, Serialize};

use crate::rules::path::LogicalPath;

/// The classification of a path; one-to-one with the WIT `file-kind` enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
    Automation,
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
            Kind::Automation => "automation",
        }
    }

    /// Whether the kind guards something (refuses or withholds): what a policy override to
    /// it adds must match every spelling of a path, as guarding rules do (see `fold`).
    pub fn guards(self) -> bool {
        matches!(
            self,
            Kind::Secret
                | Kind::GitInternal
                | Kind::Generated
                | Kind::Vendored
                | Kind::Lockfile
                | Kind::Binary
                | Kind::Automation
        )
    }
}

/// Directory names that are build output wherever they appear (folded forms).
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
    "pods",
    "deriveddata",
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

/// Secret file names, lowercase (names are folded before the lookup).
const SECRET_NAMES: &[&str] = &[
    ".boto",
    ".dockercfg",
    ".env",
    ".envrc",
    ".git-credentials",
    ".htpasswd",
    ".netrc",
    ".npmrc",
    ".pgpass",
    ".pypirc",
    ".s3cfg",
    "_netrc",
    "credentials",
    "credentials.json",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_rsa",
    "kubeconfig",
    "master.key",
    "secrets.json",
    "secrets.toml",
    "secrets.yaml",
    "secrets.yml",
    "service-account.json",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    "wp-config.php",
];

/// Endings of backups and editor copies: a copy of a secret is a secret.
const COPY_SUFFIXES: &[&str] = &[
    ".backup", ".bak", ".old", ".orig", ".save", ".swo", ".swp", ".tmp", "~",
];

/// `.env` files meant to be committed: examples, not secrets.
const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template"];

/// Name stems of credential and secret files, and the endings they are secrets with.
const SECRET_STEMS: &[&str] = &["credential", "credentials", "secrets"];
const SECRET_STEM_EXTS: &[&str] = &[
    "",
    "cfg",
    "conf",
    "env",
    "ini",
    "json",
    "properties",
    "toml",
    "txt",
    "xml",
    "yaml",
    "yml",
];

/// Name prefixes of private SSH keys (their public halves end in `.pub`).
const KEY_PREFIXES: &[&str] = &["id_dsa", "id_ecdsa", "id_ed25519", "id_rsa", "id_xmss"];

/// Secret files known by their directory and name (both folded).
const SECRET_PATHS: &[(&str, &str)] = &[(".docker", "config.json"), (".kube", "config")];

const SECRET_EXTS: &[&str] = &[
    "age", "der", "gpg", "jks", "kdbx", "key", "keystore", "p12", "p8", "pem", "pfx", "ppk",
    "tfstate", "tfvars",
];

/// Lock file names, folded and sorted.
const LOCKFILES: &[&str] = &[
    "bun.lock",
    "bun.lockb",
    "cabal.project.freeze",
    "cargo.lock",
    "composer.lock",
    "conan.lock",
    "deno.lock",
    "flake.lock",
    "gemfile.lock",
    "go.sum",
    "gradle.lockfile",
    "mix.lock",
    "npm-shrinkwrap.json",
    "package-lock.json",
    "package.resolved",
    "packages.lock.json",
    "pdm.lock",
    "pipfile.lock",
    "pnpm-lock.yaml",
    "podfile.lock",
    "poetry.lock",
    "pubspec.lock",
    "uv.lock",
    "yarn.lock",
];

/// Directories whose every file other programs obey to run commands: editors' tasks and
/// settings, coding agents' settings and MCP servers, dev containers, hook managers, CI
/// (folded names). `.github/workflows` and `.github/actions` are matched beside them.
const AUTOMATION_DIRS: &[&str] = &[
    ".amazonq",
    ".buildkite",
    ".circleci",
    ".claude",
    ".codex",
    ".continue",
    ".cursor",
    ".devcontainer",
    ".fleet",
    ".gemini",
    ".githooks",
    ".hg",
    ".husky",
    ".idea",
    ".kiro",
    ".lefthook",
    ".roo",
    ".run",
    ".theia",
    ".vs",
    ".vscode",
    ".windsurf",
    ".woodpecker",
    ".zed",
];

/// Files that run commands by their directory's name and their own (folded): cargo's
/// configuration (`build.rustc-wrapper`, a target `runner`) and mise's in its folders.
const AUTOMATION_PATHS: &[(&str, &str)] = &[
    (".cargo", "config"),
    (".cargo", "config.toml"),
    (".mise", "config.toml"),
    ("mise", "config.toml"),
];

/// File names, at any depth, that make another program run commands (folded, sorted).
const AUTOMATION_NAMES: &[&str] = &[
    ".aider.conf.yml",
    ".bazelrc",
    ".devcontainer.json",
    ".drone.yml",
    ".exrc",
    ".gitattributes",
    ".gitlab-ci.yml",
    ".gitmodules",
    ".gvimrc",
    ".huskyrc",
    ".huskyrc.json",
    ".lazy.lua",
    ".lefthook-local.yml",
    ".lefthook.yml",
    ".lintstagedrc",
    ".lintstagedrc.cjs",
    ".lintstagedrc.js",
    ".lintstagedrc.json",
    ".lintstagedrc.mjs",
    ".lintstagedrc.yaml",
    ".lintstagedrc.yml",
    ".mcp.json",
    ".mise.local.toml",
    ".mise.toml",
    ".nvim.lua",
    ".nvimrc",
    ".pnpmfile.cjs",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    ".simple-git-hooks.cjs",
    ".simple-git-hooks.js",
    ".simple-git-hooks.json",
    ".travis.yml",
    ".vimrc",
    ".woodpecker.yml",
    ".yarnrc",
    ".yarnrc.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "jenkinsfile",
    "lefthook-local.yml",
    "lefthook.yml",
    "lint-staged.config.cjs",
    "lint-staged.config.js",
    "lint-staged.config.mjs",
    "mise.local.toml",
    "mise.toml",
    "simple-git-hooks.cjs",
    "simple-git-hooks.js",
    "simple-git-hooks.json",
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

/// The extensions [`GENERATED_SUFFIXES`] end in: a name with another extension (most
/// names) is not compared with each suffix.
const GENERATED_SUFFIX_EXTS: &[&str] = &["cc", "cs", "css", "dart", "go", "h", "js", "py", "ts"];

const BINARY_EXTS: &[&str] = &[
    "7z", "a", "avi", "bin", "bmp", "bz2", "class", "cwasm", "dat", "db", "deb", "dll", "dmg",
    "dylib", "ear", "eot", "exe", "flac", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg", "lib",
    "lockb", "m4a", "mkv", "mov", "mp3", "mp4", "o", "obj", "ogg", "otf", "pdf", "png", "psd",
    "pyc", "pyo", "rar", "rlib", "rpm", "so", "sqlite", "sqlite3", "tgz", "tif", "tiff", "ttf",
    "war", "wasm", "wav", "webp", "whl", "woff", "woff2", "xz", "zip", "zst",
];

const SOURCE_EXTS: &[&str] = &[
    "asm", "awk", "bash", "bzl", "c", "cc", "cjs", "clj", "cljs", "cmake", "cpp", "cs", "css",
    "cts", "cu", "cxx", "d", "dart", "el", "elm", "erl", "ex", "exs", "f90", "fish", "fs", "go",
    "graphql", "groovy", "h", "hh", "hpp", "hrl", "hs", "htm", "html", "hxx", "java", "jl", "js",
    "jsx", "kt", "kts", "less", "lisp", "lua", "m", "mjs", "mk", "ml", "mli", "mm", "mts", "nim",
    "nix", "pas", "php", "pl", "pm", "proto", "ps1", "purs", "py", "pyi", "r", "rb", "rs", "s",
    "sass", "scala", "scm", "scss", "sh", "sol", "sql", "star", "sv", "svelte", "swift", "tf",
    "ts", "tsx", "v", "vb", "vhd", "vue", "wat", "wit", "zig", "zsh",
];

const CONFIG_EXTS: &[&str] = &[
    "cfg",
    "conf",
    "config",
    "csproj",
    "editorconfig",
    "env_example",
    "gradle",
    "hcl",
    "ini",
    "json",
    "json5",
    "jsonc",
    "lock_example",
    "nomad",
    "plist",
    "properties",
    "props",
    "sln",
    "targets",
    "toml",
    "xml",
    "yaml",
    "yml",
];

const CONFIG_NAMES: &[&str] = &[
    ".babelrc",
    ".dockerignore",
    ".editorconfig",
    ".eslintrc",
    ".gitattributes",
    ".gitignore",
    ".gitmodules",
    ".ignore",
    ".prettierrc",
    "BUILD",
    "BUILD.bazel",
    "CMakeLists.txt",
    "Containerfile",
    "Dockerfile",
    "GNUmakefile",
    "Gemfile",
    "Jenkinsfile",
    "Justfile",
    "Kbuild",
    "Kconfig",
    "Makefile",
    "Pipfile",
    "Procfile",
    "Rakefile",
    "Vagrantfile",
    "WORKSPACE",
    "build.rs",
    "go.mod",
    "justfile",
    "makefile",
    "rust-toolchain",
];

const DOC_EXTS: &[&str] = &[
    "adoc", "asciidoc", "man", "markdown", "md", "org", "rst", "rtf", "tex", "txt",
];

const DOC_NAMES: &[&str] = &[
    "AUTHORS",
    "CHANGELOG",
    "CHANGES",
    "CONTRIBUTING",
    "COPYING",
    "CREDITS",
    "INSTALL",
    "LICENCE",
    "LICENSE",
    "MAINTAINERS",
    "NEWS",
    "NOTICE",
    "README",
    "TODO",
];

/// Classifies a logical path by name alone. Directories whose name is build output only in
/// context (`target`, `build`, `dist`, `out`, `_build`) count as generated, the cautious
/// reading; [`classify_with`] looks for the build file that makes them.
#[cfg(test)]
pub fn classify(path: &LogicalPath, is_dir: bool) -> Kind {
    classify_with(path, is_dir, &|_| true)
}

/// Classifies a logical path; `has_file` says whether a file exists (used only for the
/// directories listed in `CONTEXT_DIRS`).
#[cfg(test)]
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
    automation: bool,
}

impl DirMarks {
    /// The marks of directory `dir`, whose parent has these marks.
    pub fn enter(self, dir: &LogicalPath, has_file: &dyn Fn(&LogicalPath) -> bool) -> DirMarks {
        let name = crate::rules::fold::fold(dir.name());
        DirMarks {
            git: self.git || name == ".git",
            generated: self.generated || is_generated_dir(dir, &name, has_file),
            vendored: self.vendored || VENDORED_DIRS.contains(&&*name),
            automation: self.automation || is_automation_dir(dir, &name),
        }
    }

    /// These marks for a directory git would take for a repository of its own (see
    /// [`GIT_SHAPE`]): everything below it is git internals.
    pub fn as_git(self) -> DirMarks {
        DirMarks { git: true, ..self }
    }

    /// The marks as the low four bits of a byte.
    pub fn bits(self) -> u8 {
        u8::from(self.git)
            | u8::from(self.generated) << 1
            | u8::from(self.vendored) << 2
            | u8::from(self.automation) << 3
    }

    /// Whether everything below is git internals.
    pub fn is_git(self) -> bool {
        self.git
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
        let mut buf = [0; 64];
        let folded = crate::rules::fold::fold_name_in(name, &mut buf);
        if self.git || folded == ".git" {
            return Kind::GitInternal;
        }
        if !is_dir && (is_secret_folded(&folded) || is_secret_path(path, &folded)) {
            return Kind::Secret;
        }
        if self.generated || (is_dir && is_generated_dir(path, &folded, has_file)) {
            return Kind::Generated;
        }
        if self.vendored || (is_dir && VENDORED_DIRS.contains(&&*folded)) {
            return Kind::Vendored;
        }
        if is_dir {
            return Kind::Directory;
        }
        if self.automation || is_automation_name(&folded) || is_automation_path(path, &folded) {
            return Kind::Automation;
        }
        if listed(LOCKFILES, folded.as_bytes()) {
            return Kind::Lockfile;
        }
        // Generated by its ending in every spelling (`app.MIN.JS` opens `app.min.js` where
        // names fold), and by its ending as given (folding cuts a name at a stream
        // separator: `out:app.min.js` folds to `out`).
        if has_generated_suffix(&folded) || has_generated_suffix(name) {
            return Kind::Generated;
        }
        classify_plain_name(name)
    }
}

/// The entries that make git take a directory for a repository of its own, as its
/// discovery does (a `HEAD` file with `objects/` and `refs/` beside it, or with a
/// `commondir` file that points at them elsewhere), in folded forms: (name, is a directory).
pub const GIT_SHAPE: &[(&str, bool)] = &[
    ("head", false),
    ("objects", true),
    ("refs", true),
    ("commondir", false),
];

/// Whether an entry of type `ty` fills the slot of [`GIT_SHAPE`] whose second field is
/// `dir`, counted as git counts it: `objects` and `refs` need only let git in (it asks
/// `access(X_OK)`, which follows links: a link to a directory passes, and so does an
/// executable file), `HEAD` (a symbolic link to `refs/...` will do) and `commondir` may be
/// anything but a directory. Counting every entry is the cautious reading.
pub fn fills_git_slot(dir: bool, ty: crate::fs::port::EntryType) -> bool {
    dir || ty != crate::fs::port::EntryType::Dir
}

/// Whether a directory that has the entries `has` (each of [`GIT_SHAPE`], in its order)
/// would be taken by git for a repository.
pub fn is_git_shape(has: [bool; 4]) -> bool {
    let [head, objects, refs, commondir] = has;
    head && ((objects && refs) || commondir)
}

/// Whether classifying the directory `name` looks into the tree (for the build file beside
/// it that makes it build output), so that its kind may change while its name does not.
pub fn looks_beside(name: &str) -> bool {
    CONTEXT_DIRS
        .iter()
        .any(|(d, _)| crate::rules::fold::folds_to(name, d))
}

/// True when the directory `dir` (whose name folds to `name`) holds build output: by name
/// alone, or by name beside the build file that makes it.
fn is_generated_dir(
    dir: &LogicalPath,
    name: &str,
    has_file: &dyn Fn(&LogicalPath) -> bool,
) -> bool {
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

/// Whether every file below the directory `dir` (whose name folds to `name`) is
/// automation: one of [`AUTOMATION_DIRS`], or `.github/workflows` and `.github/actions`.
fn is_automation_dir(dir: &LogicalPath, name: &str) -> bool {
    if AUTOMATION_DIRS.contains(&name) {
        return true;
    }
    (name == "workflows" || name == "actions") && {
        let parent = dir.as_str().rsplit('/').nth(1).unwrap_or("");
        crate::rules::fold::fold(parent) == ".github"
    }
}

/// Whether a file whose name folds to `name` makes another program run commands.
fn is_automation_name(name: &str) -> bool {
    listed(AUTOMATION_NAMES, name.as_bytes())
        || name.ends_with(".code-workspace")
        || name.ends_with(".sublime-project")
}

/// Whether the file `path`, whose name folds to `name`, is one of [`AUTOMATION_PATHS`].
fn is_automation_path(path: &LogicalPath, name: &str) -> bool {
    if !AUTOMATION_PATHS.iter().any(|(_, n)| name == *n) {
        return false;
    }
    let dir = crate::rules::fold::fold(path.as_str().rsplit('/').nth(1).unwrap_or(""));
    AUTOMATION_PATHS
        .iter()
        .any(|(d, n)| dir == *d && name == *n)
}

/// Whether `table` (sorted, see the test) holds `key`. Every entry a walk classifies is
/// looked up in several tables; the names differ from most entries in their first bytes, so
/// an inlined byte loop settles each step sooner than a call to `memcmp` would.
fn listed(table: &[&str], key: &[u8]) -> bool {
    table
        .binary_search_by(|e| compare_short(e.as_bytes(), key))
        .is_ok()
}

/// `a.cmp(b)` for short byte strings, inlined.
#[inline]
fn compare_short(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// `s` with ASCII letters lowercased, in `buf`; `None` when longer than `buf`, and so
/// longer than every table entry looked up with it.
fn folded<'b>(s: &str, buf: &'b mut [u8; 16], upper: bool) -> Option<&'b [u8]> {
    let out = buf.get_mut(..s.len())?;
    out.copy_from_slice(s.as_bytes());
    if upper {
        out.make_ascii_uppercase();
    } else {
        out.make_ascii_lowercase();
    }
    Some(out)
}

/// Whether `name` is `.git` in any spelling a folding file system opens as `.git`
/// (`.GIT`, `.git.`, `.g\u{200C}it`).
pub fn is_git_name(name: &str) -> bool {
    crate::rules::fold::folds_to(name, ".git")
}

/// Whether a file called `name` holds secrets, by name alone, in any spelling (see
/// `fold`): the names and endings listed above, the `.env` family, private keys,
/// credential files, and backups or editor copies of any of them.
#[cfg(test)]
pub fn is_secret_name(name: &str) -> bool {
    is_secret_folded(&crate::rules::fold::fold(name))
}

/// [`is_secret_name`] for a name in its folded form.
fn is_secret_folded(lower: &str) -> bool {
    let mut base: &str = lower;
    if is_secret_base(base) {
        return true;
    }
    // `server.pem.bak`, `.env~`, `.id_rsa.swp` (an editor's swap file of `id_rsa`). Most
    // names end in no copy suffix and leave here at once.
    while let Some(stripped) = strip_copy_suffix(base) {
        if stripped.is_empty() {
            return false;
        }
        if is_secret_base(stripped)
            || stripped
                .strip_prefix('.')
                .is_some_and(|s| !s.is_empty() && is_secret_base(s))
        {
            return true;
        }
        base = stripped;
    }
    false
}

/// `n` without a backup or editor-copy ending, if it has one.
fn strip_copy_suffix(n: &str) -> Option<&str> {
    match n.as_bytes().last()? {
        b'~' | b'k' | b'g' | b'd' | b'p' | b'o' | b'e' => {
            COPY_SUFFIXES.iter().find_map(|s| n.strip_suffix(s))
        }
        _ => None,
    }
}

/// Whether `hay` contains `needle`, for short names (no searcher to set up).
fn has_part(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay.windows(needle.len()).any(|w| w == needle)
}

/// [`is_secret_name`] for a lowercase name that is not itself a copy.
fn is_secret_base(n: &str) -> bool {
    let b = n.as_bytes();
    if listed(SECRET_NAMES, b) {
        return true;
    }
    if extension(n).is_some_and(|e| listed(SECRET_EXTS, e.as_bytes())) {
        return true;
    }
    if n.starts_with(".env") {
        if ENV_TEMPLATES.contains(&n) {
            return false;
        }
        if matches!(b.get(4), Some(b'.' | b'_' | b'-')) {
            return true;
        }
    }
    if n.len() > 4 && n.ends_with(".env") {
        return true;
    }
    let public = n.ends_with(".pub");
    if !public && n.starts_with("id_") && KEY_PREFIXES.iter().any(|p| n.starts_with(p)) {
        return true;
    }
    if !public
        && has_part(b, b"deploy")
        && (has_part(b, b"deploy_key") || has_part(b, b"deploy-key"))
    {
        return true;
    }
    let (stem, ext) = n.split_once('.').unwrap_or((n, ""));
    SECRET_STEMS.contains(&stem) && SECRET_STEM_EXTS.contains(&ext)
}

/// Whether `path`, whose name folds to `name`, is a secret by its directory and name
/// (`.docker/config.json`).
fn is_secret_path(path: &LogicalPath, name: &str) -> bool {
    if !SECRET_PATHS.iter().any(|(_, n)| name == *n) {
        return false;
    }
    // The parent directory's name, without building the parent path.
    let dir = crate::rules::fold::fold(path.as_str().rsplit('/').nth(1).unwrap_or(""));
    SECRET_PATHS.iter().any(|(d, n)| dir == *d && name == *n)
}

/// Whether `name` ends in one of [`GENERATED_SUFFIXES`].
fn has_generated_suffix(name: &str) -> bool {
    extension(name).is_some_and(|e| GENERATED_SUFFIX_EXTS.contains(&e))
        && GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The kind of a file by its name alone, past the guarding kinds [`DirMarks::classify`]
/// settles first.
#[cfg(test)]
fn classify_name(name: &str) -> Kind {
    if has_generated_suffix(name) {
        return Kind::Generated;
    }
    classify_plain_name(name)
}

/// [`classify_name`] for a name that ends in no generated suffix.
fn classify_plain_name(name: &str) -> Kind {
    let exact = name.as_bytes();
    if listed(CONFIG_NAMES, exact) {
        return Kind::Config;
    }
    let mut buf = [0; 16];
    let stem = name.split('.').next().unwrap_or("");
    if folded(stem, &mut buf, true).is_some_and(|s| listed(DOC_NAMES, s)) {
        return Kind::Doc;
    }
    let Some(ext) = extension(name) else {
        return Kind::Text;
    };
    let Some(ext) = folded(ext, &mut buf, false) else {
        return Kind::Text;
    };
    [
        (BINARY_EXTS, Kind::Binary),
        (SOURCE_EXTS, Kind::Source),
        (CONFIG_EXTS, Kind::Config),
        (DOC_EXTS, Kind::Doc),
    ]
    .into_iter()
    .find(|(table, _)| listed(table, ext))
    .map_or(Kind::Text, |(_, k)| k)
}

fn extension(name: &str) -> Option<&str> {
    let idx = memchr::memrchr(b'.', name.as_bytes())?;
    if idx == 0 {
        // A dotfile such as `.bashrc` has no extension.
        return None;
    }
    Some(&name[idx + 1..])
}

/// How many leading bytes are sniffed for binary content.
pub const SNIFF_BYTES: usize = crate::text::encoding::detect::WINDOW;

/// True when the content looks binary: a NUL byte in its first 8 KiB, unless they are
/// UTF-16 or UTF-32 text (marked, or UTF-16 in one plausible byte order; see
/// `text::encoding::detect`).
pub fn looks_binary(content: &[u8]) -> bool {
    let window = &content[..content.len().min(SNIFF_BYTES)];
    if memchr::memchr(0, window).is_none() {
        return false;
    }
    crate::text::encoding::detect::wide(content, false).is_none()
}

#[cfg(test)]
mod tests {
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
        let plain_secret_table = SECRET_NAMES.contains(&lower.as_str())
            || ext_l.is_some_and(|e| SECRET_EXTS.contains(&e));
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
}
