//! Changes that need the embedder's approval before they are written.
//!
//! The policy's `approval` rules name what needs it: deletions, build files,
//! security-sensitive paths (secrets, CI and ownership files), paths matching globs, and
//! changes above a number of changed lines. Just before a planned change is written, the
//! component asks the host (WIT import `approval.request`) with the whole plan; a host
//! without an approver, or one that declines, gets `APPROVAL_REQUIRED` and nothing is
//! written. A dry run never asks: it reports what would need approval as a warning.
//!
//! The person approving sees the plan's text with every control, bidi-control and invisible
//! character spelled out (`⟨CR⟩`, `⟨U+001B⟩`, `⟨U+202E⟩`: [`crate::text::visible::escaped`]), and
//! how many there were ([`ApprovalRequest::escaped`]), so that nothing in the model's
//! change can hide a line from them. Only what is shown is escaped: the bytes written are
//! the ones the model sent.

use serde::{Deserialize, Serialize};

use crate::audit::AuditFile;
use crate::error::ToolResult;
use crate::rules::classify::Kind;
use crate::rules::glob::Globs;
use crate::rules::path::LogicalPath;

/// The policy's approval rules; all off by default but `automation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalRules {
    /// Changing a file of kind `automation` (settings that make an editor, an agent, a hook
    /// manager, git or CI run commands) needs approval. On by default: such a write is how
    /// a prompt injection turns into code execution. A policy override that reclassifies a
    /// pattern (as `config`, say) relaxes it for that pattern alone.
    pub automation: bool,
    /// Deleting a file needs approval (moves do not count).
    pub delete: bool,
    /// Changing a build file (`Cargo.toml`, `package.json`, `Makefile`, ...) needs approval.
    pub build_files: bool,
    /// Changing a security-sensitive file (secrets, CI workflows, CODEOWNERS, ...) needs
    /// approval.
    pub security_sensitive: bool,
    /// Changing a path that matches one of these globs needs approval.
    pub paths: Vec<String>,
    /// A change with more inserted plus deleted lines than this needs approval.
    pub max_changed_lines: Option<u32>,
}

impl Default for ApprovalRules {
    fn default() -> Self {
        ApprovalRules {
            automation: true,
            delete: false,
            build_files: false,
            security_sensitive: false,
            paths: Vec::new(),
            max_changed_lines: None,
        }
    }
}

/// What the host is asked to approve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The tool making the change.
    pub tool: String,
    /// Why approval is needed, one line per rule that matched.
    pub reasons: Vec<String>,
    /// Every file of the change, with its action and hashes.
    pub files: Vec<AuditFile>,
    pub insertions: u32,
    pub deletions: u32,
    /// The whole change as a unified diff (secrets and binaries are not shown).
    pub diff: String,
    /// How many control, bidi-control and invisible characters the reasons, paths and diff
    /// hold, each spelled out; 0 for a plain change.
    pub escaped: u32,
}

impl ApprovalRequest {
    /// The request for a change by `tool`, its text made safe to show: reasons, paths and
    /// diff with every hidden character spelled out, and their number in `escaped`.
    pub fn shown(
        tool: &str,
        reasons: &[String],
        files: &[AuditFile],
        (insertions, deletions): (u32, u32),
        diff: &str,
    ) -> ApprovalRequest {
        let mut escaped = 0u32;
        let mut show = |text: &str| {
            let (shown, n) = crate::text::visible::escaped(text);
            escaped = escaped.saturating_add(n);
            shown
        };
        let reasons = reasons.iter().map(|r| show(r)).collect();
        let files = files
            .iter()
            .map(|f| AuditFile {
                path: show(&f.path),
                ..f.clone()
            })
            .collect();
        let diff = show(diff);
        ApprovalRequest {
            tool: tool.to_string(),
            reasons,
            files,
            insertions,
            deletions,
            diff,
            escaped,
        }
    }
}

const BUILD_FILES: &[&str] = &[
    "Cargo.toml",
    "build.rs",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "build.sbt",
    "CMakeLists.txt",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "meson.build",
    "BUILD",
    "BUILD.bazel",
    "WORKSPACE",
    "MODULE.bazel",
    "go.mod",
    "Gemfile",
    "Dockerfile",
    "Containerfile",
    "Kbuild",
    "Kconfig",
    "configure.ac",
    "Justfile",
    "justfile",
];

const BUILD_EXTS: &[&str] = &["gemspec", "csproj", "fsproj", "vcxproj", "mk", "cmake"];

const SECURITY_GLOBS: &[&str] = &[
    ".github/workflows/**",
    ".github/actions/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    "Jenkinsfile",
    "**/CODEOWNERS",
    ".github/dependabot.yml",
    "SECURITY.md",
    "**/.npmrc",
    "**/.pypirc",
];

/// Is `path` a build file?
pub fn is_build_file(path: &LogicalPath) -> bool {
    let name = crate::rules::fold::fold(path.name());
    BUILD_FILES
        .iter()
        .any(|b| crate::rules::fold::fold(b) == name)
        || name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| BUILD_EXTS.contains(&ext))
}

/// What the approval rules look at in one planned change.
#[derive(Debug, Clone, Copy)]
pub struct ChangeFacts<'a> {
    /// Where the content lives.
    pub target: &'a LogicalPath,
    /// How the change is reported.
    pub shown: &'a str,
    /// The file is removed (not the old end of a move).
    pub plain_delete: bool,
    /// The target's classification.
    pub kind: Kind,
}

/// The compiled rules of a policy.
#[derive(Debug, Clone)]
pub struct Approval {
    rules: ApprovalRules,
    paths: Globs,
    /// Compiled only when the rule is on: every instance builds its policy at start.
    security: Option<Globs>,
}

impl Approval {
    /// Compiles `rules`.
    ///
    /// # Errors
    /// `INVALID_INPUT` for a malformed glob.
    pub fn new(rules: ApprovalRules) -> ToolResult<Self> {
        let security = if rules.security_sensitive {
            Some(Globs::new_lazy_folded(SECURITY_GLOBS, true, true)?)
        } else {
            None
        };
        Ok(Approval {
            // Compiled on first use; if that fails, every change needs approval.
            // Folded: a rule that asks for approval guards, so every spelling a folding
            // file system opens must match it.
            paths: Globs::new_lazy_folded(&rules.paths, true, true)?,
            security,
            rules,
        })
    }

    /// Why `changes` (with `changed_lines` inserted plus deleted lines) need approval; empty
    /// when they do not.
    pub fn reasons(&self, changes: &[ChangeFacts<'_>], changed_lines: u32) -> Vec<String> {
        let r = &self.rules;
        let mut out = Vec::new();
        for c in changes {
            let p = c.target;
            let shown = c.shown;
            if r.delete && c.plain_delete {
                out.push(format!("deletes {shown}"));
            }
            if r.automation && c.kind == Kind::Automation {
                out.push(format!(
                    "changes {shown}, a file other programs obey to run commands (automation)"
                ));
            }
            if r.build_files && is_build_file(p) {
                out.push(format!("changes the build file {shown}"));
            }
            let sensitive = |g: &Globs| g.matches(p.as_str()) || c.kind == Kind::Secret;
            if self.security.as_ref().is_some_and(sensitive) {
                out.push(format!("changes the security-sensitive file {shown}"));
            }
            if !self.paths.is_empty() && self.paths.matches(&p.to_string()) {
                out.push(format!(
                    "changes {shown}, which the policy marks for approval"
                ));
            }
        }
        if let Some(max) = r.max_changed_lines {
            if changed_lines > max {
                out.push(format!(
                    "changes {changed_lines} lines, over the {max} the policy allows without approval"
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(target: &'a LogicalPath, kind: Kind) -> ChangeFacts<'a> {
        ChangeFacts {
            target,
            shown: target.as_str(),
            plain_delete: false,
            kind,
        }
    }

    #[test]
    fn automation_needs_approval_by_default_and_can_be_turned_off() {
        let p = LogicalPath::parse(".vscode/settings.json").unwrap();
        let on = Approval::new(ApprovalRules::default()).unwrap();
        let why = on.reasons(&[facts(&p, Kind::Automation)], 1);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("run commands"), "{why:?}");
        // Positive control: the same path of another kind asks nothing.
        assert!(on.reasons(&[facts(&p, Kind::Config)], 1).is_empty());
        let off = Approval::new(ApprovalRules {
            automation: false,
            ..ApprovalRules::default()
        })
        .unwrap();
        assert!(off.reasons(&[facts(&p, Kind::Automation)], 1).is_empty());
    }

    #[test]
    fn approval_globs_and_build_files_match_every_spelling() {
        let rules = ApprovalRules {
            paths: vec!["deploy/**".into()],
            build_files: true,
            ..ApprovalRules::default()
        };
        let a = Approval::new(rules).unwrap();
        for s in ["DEPLOY/run.sh", "MAKEFILE", "sub/cargo.TOML"] {
            let p = LogicalPath::parse(s).unwrap();
            assert!(!a.reasons(&[facts(&p, Kind::Text)], 1).is_empty(), "{s}");
        }
        let p = LogicalPath::parse("src/run.sh").unwrap();
        assert!(a.reasons(&[facts(&p, Kind::Source)], 1).is_empty());
    }
}
