//! What a directory settles for everything below it ([`DirScope`]): the classification's
//! marks, the policy's globs matched on the way down, and whether git would take a
//! directory on the way for a repository.

use crate::error::{ToolError, ToolResult};
use crate::rules::classify::{self, DirMarks, Kind};
use crate::rules::path::LogicalPath;

use super::Policy;

/// The name right below `dir` on the way to `path`, when `path` lies below `dir`.
fn child_of<'p>(dir: &LogicalPath, path: &'p LogicalPath) -> Option<&'p str> {
    if !path.starts_with(dir) || path == dir {
        return None;
    }
    let rest = if dir.is_root() {
        path.as_str()
    } else {
        &path.as_str()[dir.as_str().len() + 1..]
    };
    rest.split('/').next()
}

impl DirScope {
    /// Marks the directory as one git would take for a repository: everything below it is
    /// git internals.
    pub fn mark_git(&mut self) {
        self.marks = self.marks.as_git();
    }

    /// The scope as bytes, equal for equal scopes only (what a walk's memo compares).
    pub fn key(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + self.overrides.len());
        out.push(
            self.marks.bits() | u8::from(self.read_blocked) << 4 | u8::from(self.read_allowed) << 5,
        );
        out.extend(self.overrides.iter().map(|&o| u8::from(o)));
        out
    }
}

/// What a directory settles for every entry below it: its classification marks and which
/// policy globs it or an ancestor matched. A walk keeps one per directory, so that each
/// entry is classified and checked by its own path only, not by every ancestor again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirScope {
    marks: DirMarks,
    /// Per override, in order: matched by the directory or an ancestor.
    overrides: Vec<bool>,
    pub(super) read_blocked: bool,
    pub(super) read_allowed: bool,
}

impl Policy {
    /// The scope of the directory `dir`, built from the root down. A directory on the way
    /// that git would take for a repository (see [`classify::GIT_SHAPE`]) marks everything
    /// below it as git internals.
    pub fn scope_of(&self, dir: &LogicalPath) -> DirScope {
        let mut scope = self.root_scope();
        let mut d = LogicalPath::root();
        // The deepest directory on the way opened so far: each look goes down from it, so
        // the walk down opens each directory once (looking each up from the root took as
        // many opens as its depth, at every level).
        let mut held = None;
        if classify::is_git_shape(self.shape_in(&d, false, &mut held)) {
            scope.mark_git();
        }
        for part in dir.parts() {
            d = d.join(part);
            scope = self.enter(&scope, &d);
            if !scope.marks.is_git() && classify::is_git_shape(self.shape_in(&d, false, &mut held))
            {
                scope.mark_git();
            }
        }
        scope
    }

    /// Which entries of [`classify::GIT_SHAPE`] the directory `dir` has, by the names git
    /// opens (a folding file system finds other spellings by them), not following links.
    /// Without `full`, a directory with no HEAD answers at once (as having none of them).
    fn shape_of(&self, dir: &LogicalPath, full: bool) -> [bool; 4] {
        self.shape_in(dir, full, &mut None)
    }

    /// [`Policy::shape_of`], opening `dir` from `held` (a directory above it, opened
    /// earlier, or `None` for the root) when it must be looked at, and leaving `dir` there.
    fn shape_in(
        &self,
        dir: &LogicalPath,
        full: bool,
        held: &mut Option<(LogicalPath, std::sync::Arc<crate::fs::port::Dir>)>,
    ) -> [bool; 4] {
        let Some(fs) = &self.fs else {
            return [false; 4];
        };
        let key = format!("\0{dir}");
        if let Some(v) = self.remembered(&key) {
            if !v && !full {
                return [false; 4];
            }
        }
        let opened = match held.take() {
            Some((at, d)) if dir.starts_with(&at) => {
                let below = dir.as_str()[at.as_str().len()..].split('/');
                fs.open_below(d, below.filter(|p| !p.is_empty()))
            }
            _ => fs.open_dir(dir),
        };
        let opened = opened.ok();
        if let Some(d) = &opened {
            *held = Some((dir.clone(), d.clone()));
        }
        // As git counts them: a link or an executable file can stand for `objects/` or
        // `refs/`, and a link for `HEAD` (see `classify::fills_git_slot`).
        let has = |name: &str, want_dir: bool| {
            opened
                .as_ref()
                .and_then(|d| d.stat_at(name).ok().flatten())
                .is_some_and(|m| classify::fills_git_slot(want_dir, m.ty))
        };
        // Most directories have no HEAD: one look settles them.
        let head = has("HEAD", false);
        let shape = if head || full {
            [
                head,
                has("objects", true),
                has("refs", true),
                has("commondir", false),
            ]
        } else {
            [false; 4]
        };
        if let Ok(mut m) = self.seen.lock() {
            m.insert(key, head);
        }
        shape
    }

    /// Whether git would take the directory `dir` for a repository of its own.
    pub fn git_shaped(&self, dir: &LogicalPath) -> bool {
        classify::is_git_shape(self.shape_of(dir, false))
    }

    /// Refuses a change whose written files (`(target, shown)`) would give a directory the
    /// shape git takes for a repository: git run inside it would then obey its `config`
    /// (`core.fsmonitor`, hooks, filters), so a model writing `sub/HEAD`, `sub/objects/…`,
    /// `sub/refs/…` and `sub/config` would plant a command for the next `git status`.
    ///
    /// # Errors
    /// `POLICY_DENIED` with reason `git_shaped`.
    pub fn check_git_shape(&self, written: &[(&LogicalPath, &str)]) -> ToolResult<()> {
        let slot = |name: &str| {
            let f = crate::rules::fold::fold(name);
            classify::GIT_SHAPE.iter().position(|(n, _)| *n == f)
        };
        for (target, shown) in written {
            let mut dir = LogicalPath::root();
            for part in target.parts() {
                if slot(part).is_some() {
                    let mut has = self.shape_of(&dir, true);
                    for (other, _) in written {
                        if let Some(i) = child_of(&dir, other).and_then(slot) {
                            has[i] = true;
                        }
                    }
                    if classify::is_git_shape(has) {
                        return Err(ToolError::denied(
                            shown,
                            "git_shaped",
                            format!("'{shown}' would give a directory the shape of a git repository (HEAD beside objects/ and refs/, or beside commondir); git run there would obey that repository's config and hooks, so file-tools does not build one"),
                        ));
                    }
                }
                dir = dir.join(part);
            }
        }
        Ok(())
    }

    /// The scope of the repository root.
    pub fn root_scope(&self) -> DirScope {
        DirScope {
            marks: DirMarks::default(),
            overrides: vec![false; self.overrides.len()],
            read_blocked: false,
            read_allowed: false,
        }
    }

    /// The scope of directory `dir`, whose parent's scope is `parent`.
    pub fn enter(&self, parent: &DirScope, dir: &LogicalPath) -> DirScope {
        let s = dir.as_str();
        DirScope {
            marks: parent.marks.enter(dir, &|p| self.has_file(p)),
            overrides: self
                .overrides
                .iter()
                .zip(&parent.overrides)
                .map(|((g, _), &above)| above || g.matches(s))
                .collect(),
            read_blocked: parent.read_blocked || self.read_block.matches(s),
            read_allowed: parent.read_allowed || self.read_allow.matches(s),
        }
    }

    /// The kind of `path`, an entry of the directory whose scope is `scope`.
    pub fn kind_in(&self, scope: &DirScope, path: &LogicalPath, is_dir: bool) -> Kind {
        for ((globs, kind), &above) in self.overrides.iter().zip(&scope.overrides) {
            if above || globs.matches(path.as_str()) {
                return *kind;
            }
        }
        scope.marks.classify(path, is_dir, &|p| self.has_file(p))
    }
}
