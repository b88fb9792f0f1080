//! Glob sets with one rule for every place that takes globs (policy, `find_files`,
//! `search_text` include and exclude): a glob without `/` matches the file name at any
//! depth, a glob with `/` matches the whole logical path. `*` never crosses `/`; `**` does.

use std::sync::OnceLock;

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{ToolError, ToolResult};

/// A compiled set of globs.
#[derive(Debug, Clone)]
pub struct Globs {
    set: OnceLock<GlobSet>,
    /// Parsed globs of a set built on first use ([`Globs::new_lazy`]).
    pending: Vec<Glob>,
    /// What a lazily built set answers if building it fails.
    fallback: bool,
    /// How patterns and paths are folded before they are compared (see `fold`), if at all.
    fold: Option<Folding>,
    len: usize,
}

/// Which folded form a set compares (see `fold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folding {
    /// Every spelling any folding file system joins: for rules that refuse or guard.
    Guard,
    /// Only what every folding file system joins: for rules that grant.
    Grant,
}

impl Folding {
    /// `s` in this folded form.
    pub fn apply(self, s: &str) -> std::borrow::Cow<'_, str> {
        match self {
            Folding::Guard => crate::rules::fold::fold(s),
            Folding::Grant => crate::rules::fold::fold_grant(s),
        }
    }
}

impl Globs {
    /// Compiles `patterns`; an empty list matches nothing.
    ///
    /// # Errors
    /// `INVALID_INPUT` naming the first malformed glob.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> ToolResult<Self> {
        let globs = parse(patterns)?;
        let set = build(&globs)
            .map_err(|e| ToolError::invalid(format!("globs could not be compiled: {e}")))?;
        Ok(Globs {
            set: OnceLock::from(set),
            pending: Vec::new(),
            fallback: false,
            fold: None,
            len: patterns.len(),
        })
    }

    /// Parses `patterns` now and compiles them on first use: for policy globs, which every
    /// instance loads but many calls never consult (a fresh instance per call pays for
    /// what it uses only). Should the compilation fail (only a set too large for the regex
    /// engine's limits can), the set answers `fallback` for every path: `true` for a block
    /// list, so that failure refuses rather than allows.
    ///
    /// # Errors
    /// `INVALID_INPUT` naming the first malformed glob.
    #[cfg(test)]
    pub fn new_lazy<S: AsRef<str>>(patterns: &[S], fallback: bool) -> ToolResult<Self> {
        Self::new_lazy_with(patterns, fallback, None)
    }

    /// [`Globs::new_lazy`] whose patterns, and the paths matched against them, are compared
    /// in their folded forms when `fold` is set: what a case-folding file system opens
    /// under another spelling matches too (`PRIVATE/x` matches `private/**`).
    ///
    /// # Errors
    /// `INVALID_INPUT` naming the first malformed glob.
    pub fn new_lazy_folded<S: AsRef<str>>(
        patterns: &[S],
        fallback: bool,
        fold: bool,
    ) -> ToolResult<Self> {
        Self::new_lazy_with(patterns, fallback, fold.then_some(Folding::Guard))
    }

    /// [`Globs::new_lazy`] comparing `fold` forms of patterns and paths, if any.
    ///
    /// # Errors
    /// `INVALID_INPUT` naming the first malformed glob.
    pub fn new_lazy_with<S: AsRef<str>>(
        patterns: &[S],
        fallback: bool,
        fold: Option<Folding>,
    ) -> ToolResult<Self> {
        let pending = match fold {
            Some(f) => parse(
                &patterns
                    .iter()
                    .map(|p| f.apply(p.as_ref()).into_owned())
                    .collect::<Vec<_>>(),
            ),
            None => parse(patterns),
        }?;
        Ok(Globs {
            set: OnceLock::new(),
            pending,
            fallback,
            fold,
            len: patterns.len(),
        })
    }

    /// Logical paths are UTF-8 with `/` separators already: matched as bytes, without the
    /// conversion through `Path` that costs a UTF-8 check per call on WASI.
    fn is_match(&self, path: &str) -> bool {
        if let Some(f) = self.fold {
            return self.is_match_exact(&f.apply(path));
        }
        self.is_match_exact(path)
    }

    /// [`Globs::is_match`] for a path already in the form the patterns are in.
    fn is_match_exact(&self, path: &str) -> bool {
        let set = match self.set.get() {
            Some(set) => set,
            None => match build(&self.pending) {
                Ok(set) => self.set.get_or_init(|| set),
                Err(_) => return self.fallback,
            },
        };
        set.is_match_candidate(&Candidate::from_bytes(path.as_bytes()))
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when any glob matches the logical path.
    pub fn matches(&self, path: &str) -> bool {
        self.len > 0 && self.is_match(path)
    }

    /// True when any glob matches the path or one of its parent directories, so that a
    /// glob such as `secrets/**` or `generated` also covers everything below.
    pub fn matches_path_or_parent(&self, path: &str) -> bool {
        if self.len == 0 {
            return false;
        }
        let folded;
        let path = match self.fold {
            Some(f) => {
                folded = f.apply(path);
                &*folded
            }
            None => path,
        };
        if self.is_match_exact(path) {
            return true;
        }
        let mut end = path.len();
        while let Some(i) = path[..end].rfind('/') {
            if self.is_match_exact(&path[..i]) {
                return true;
            }
            end = i;
        }
        false
    }
}

/// Parses patterns with the one rule of this module: a glob without `/` matches the name
/// at any depth.
fn parse<S: AsRef<str>>(patterns: &[S]) -> ToolResult<Vec<Glob>> {
    patterns
        .iter()
        .map(|p| {
            let p = p.as_ref();
            let trimmed = p.trim_start_matches("./");
            if trimmed.is_empty() {
                return Err(ToolError::invalid(
                    "an empty glob matches nothing; remove it",
                ));
            }
            let full = if trimmed.contains('/') {
                trimmed.trim_start_matches('/').to_string()
            } else {
                format!("**/{trimmed}")
            };
            GlobBuilder::new(&full)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| ToolError::invalid(format!("glob '{p}' is malformed: {e}")))
        })
        .collect()
}

fn build(globs: &[Glob]) -> Result<GlobSet, globset::Error> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(g.clone());
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_globs_match_at_any_depth() {
        let g = Globs::new(&["*.rs"]).unwrap();
        assert!(g.matches("main.rs"));
        assert!(g.matches("src/a/b.rs"));
        assert!(!g.matches("src/a/b.rsx"));
    }

    #[test]
    fn path_globs_are_anchored_and_star_stays_in_one_dir() {
        let g = Globs::new(&["src/*.rs"]).unwrap();
        assert!(g.matches("src/lib.rs"));
        assert!(!g.matches("src/a/lib.rs"));
        assert!(!g.matches("other/src/lib.rs"));
        let g = Globs::new(&["src/**/*.rs"]).unwrap();
        assert!(g.matches("src/a/b/lib.rs"));
    }

    #[test]
    fn parent_matching_covers_directories() {
        let g = Globs::new(&["secrets"]).unwrap();
        assert!(g.matches_path_or_parent("config/secrets/db.txt"));
        assert!(!g.matches_path_or_parent("config/secretsx/db.txt"));
    }

    #[test]
    fn malformed_glob_is_invalid_input() {
        let e = Globs::new(&["a[b"]).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::InvalidInput);
        assert!(Globs::new(&[""]).is_err());
    }

    #[test]
    fn empty_set_matches_nothing() {
        let g = Globs::new::<&str>(&[]).unwrap();
        assert!(!g.matches("a"));
        assert!(g.is_empty());
    }

    #[test]
    fn lazy_sets_match_like_eager_ones_and_check_syntax_at_once() {
        let pats = ["*.rs", "docs/**", "build"];
        let eager = Globs::new(&pats).unwrap();
        let lazy = Globs::new_lazy(&pats, false).unwrap();
        for p in [
            "a.rs",
            "x/y.rs",
            "docs/a/b",
            "docs",
            "src/build",
            "build/x",
            "a.rsx",
        ] {
            assert_eq!(eager.matches(p), lazy.matches(p), "{p}");
            assert_eq!(
                eager.matches_path_or_parent(p),
                lazy.matches_path_or_parent(p),
                "{p}"
            );
        }
        assert!(Globs::new_lazy(&["a[b"], true).is_err());
        assert!(Globs::new_lazy_folded(&["a[b"], true, true).is_err());
        assert!(!Globs::new_lazy::<&str>(&[], true).unwrap().matches("x"));
    }

    #[test]
    fn folded_sets_match_every_spelling_a_folding_file_system_opens() {
        let g = Globs::new_lazy_folded(&["private/**", "ci", "*.KEY"], true, true).unwrap();
        for p in [
            "private/plan.txt",
            "PRIVATE/plan.txt",
            "Private./plan.txt",
            "CI/deploy.sh",
            "a/server.\u{212A}ey",
            "a/server.key",
        ] {
            assert!(g.matches_path_or_parent(p), "{p}");
        }
        // Positive controls: other names stay unmatched.
        for p in ["public/plan.txt", "cix/deploy.sh", "a/server.keys"] {
            assert!(!g.matches_path_or_parent(p), "{p}");
        }
        let exact = Globs::new_lazy(&["private/**"], true).unwrap();
        assert!(!exact.matches("PRIVATE/plan.txt"));
    }
}
