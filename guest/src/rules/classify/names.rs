//! The names the classification knows: each table is the folded or exact form the
//! functions in the module above compare against, kept apart so that the rules read
//! without a few hundred lines of data between them.

/// Directory names that are build output wherever they appear (folded forms).
pub(super) const GENERATED_DIRS: &[&str] = &[
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
pub(super) const CONTEXT_DIRS: &[(&str, &[&str])] = &[
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

pub(super) const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "vendors",
    "third_party",
    "third-party",
    "thirdparty",
];

/// Secret file names, lowercase (names are folded before the lookup).
pub(super) const SECRET_NAMES: &[&str] = &[
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
pub(super) const COPY_SUFFIXES: &[&str] = &[
    ".backup", ".bak", ".old", ".orig", ".save", ".swo", ".swp", ".tmp", "~",
];

/// `.env` files meant to be committed: examples, not secrets.
pub(super) const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template"];

/// Name stems of credential and secret files, and the endings they are secrets with.
pub(super) const SECRET_STEMS: &[&str] = &["credential", "credentials", "secrets"];
pub(super) const SECRET_STEM_EXTS: &[&str] = &[
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
pub(super) const KEY_PREFIXES: &[&str] = &["id_dsa", "id_ecdsa", "id_ed25519", "id_rsa", "id_xmss"];

/// Secret files known by their directory and name (both folded).
pub(super) const SECRET_PATHS: &[(&str, &str)] = &[(".docker", "config.json"), (".kube", "config")];

pub(super) const SECRET_EXTS: &[&str] = &[
    "age", "der", "gpg", "jks", "kdbx", "key", "keystore", "p12", "p8", "pem", "pfx", "ppk",
    "tfstate", "tfvars",
];

/// Lock file names, folded and sorted.
pub(super) const LOCKFILES: &[&str] = &[
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
pub(super) const AUTOMATION_DIRS: &[&str] = &[
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
pub(super) const AUTOMATION_PATHS: &[(&str, &str)] = &[
    (".cargo", "config"),
    (".cargo", "config.toml"),
    (".mise", "config.toml"),
    ("mise", "config.toml"),
];

/// File names, at any depth, that make another program run commands (folded, sorted).
pub(super) const AUTOMATION_NAMES: &[&str] = &[
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

pub(super) const GENERATED_SUFFIXES: &[&str] = &[
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
pub(super) const GENERATED_SUFFIX_EXTS: &[&str] =
    &["cc", "cs", "css", "dart", "go", "h", "js", "py", "ts"];

pub(super) const BINARY_EXTS: &[&str] = &[
    "7z", "a", "avi", "bin", "bmp", "bz2", "class", "cwasm", "dat", "db", "deb", "dll", "dmg",
    "dylib", "ear", "eot", "exe", "flac", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg", "lib",
    "lockb", "m4a", "mkv", "mov", "mp3", "mp4", "o", "obj", "ogg", "otf", "pdf", "png", "psd",
    "pyc", "pyo", "rar", "rlib", "rpm", "so", "sqlite", "sqlite3", "tgz", "tif", "tiff", "ttf",
    "war", "wasm", "wav", "webp", "whl", "woff", "woff2", "xz", "zip", "zst",
];

pub(super) const SOURCE_EXTS: &[&str] = &[
    "asm", "awk", "bash", "bzl", "c", "cc", "cjs", "clj", "cljs", "cmake", "cpp", "cs", "css",
    "cts", "cu", "cxx", "d", "dart", "el", "elm", "erl", "ex", "exs", "f90", "fish", "fs", "go",
    "graphql", "groovy", "h", "hh", "hpp", "hrl", "hs", "htm", "html", "hxx", "java", "jl", "js",
    "jsx", "kt", "kts", "less", "lisp", "lua", "m", "mjs", "mk", "ml", "mli", "mm", "mts", "nim",
    "nix", "pas", "php", "pl", "pm", "proto", "ps1", "purs", "py", "pyi", "r", "rb", "rs", "s",
    "sass", "scala", "scm", "scss", "sh", "sol", "sql", "star", "sv", "svelte", "swift", "tf",
    "ts", "tsx", "v", "vb", "vhd", "vue", "wat", "wit", "zig", "zsh",
];

pub(super) const CONFIG_EXTS: &[&str] = &[
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

pub(super) const CONFIG_NAMES: &[&str] = &[
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

pub(super) const DOC_EXTS: &[&str] = &[
    "adoc", "asciidoc", "man", "markdown", "md", "org", "rst", "rtf", "tex", "txt",
];

pub(super) const DOC_NAMES: &[&str] = &[
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
