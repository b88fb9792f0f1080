//! Directory walks shared by `list_dir`, `find_files` and `search_text`.
//!
//! A walk visits entries in path order (each directory's entries sorted by name, a
//! directory's subtree right after it), never follows a symlinked directory, never enters
//! `.git`, and honours `.gitignore` and `.ignore` files (including those of the start
//! directory's ancestors) when asked to. Everything passed over is counted by reason.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::{ToolError, ToolResult};
use crate::fs::port::{Dir, DirItem, Stat};
use crate::rules::classify::Kind;
use crate::rules::fsx::{EntryType, Fs};
use crate::rules::ignore_rules::{may_hold_rules, IgnoreCache, IgnoreRules, Verdict};
use crate::rules::path::{is_temp_name, LogicalPath};
use crate::rules::policy::{DirScope, Policy};
use crate::rules::walk_memo::{Judgement, WalkMemo, NO_RULES};

/// How a walk behaves.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Visit names starting with a dot.
    pub include_hidden: bool,
    /// Honour ignore files and skip generated directories.
    pub respect_ignore: bool,
    /// Deepest level visited: 1 is the start directory's own entries.
    pub max_depth: usize,
    /// Visit only the entries of one shard, `(index, count)`: an entry belongs to shard
    /// `shard_of(path) % count`. Directories of other shards are still entered (their
    /// entries may belong here) but not visited; files of other shards are passed over
    /// before any other work; each skipped entry is counted by its own shard only, so
    /// the shards' counts add up to the whole walk's.
    pub shard: Option<(u32, u32)>,
    /// Give each entry its metadata ([`WalkEntry::stat`]) where the host lists a directory
    /// with metadata in one call, as cheaply as without (a listing that shows each entry
    /// in full, such as `list_dir`'s, then looks at no entry again).
    pub with_stat: bool,
}

/// Which shard a path belongs to (FNV-1a of the logical path).
pub fn shard_of(path: &str, count: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % u64::from(count.max(1))) as u32
}

/// One visited entry.
#[derive(Debug)]
pub struct WalkEntry {
    pub path: LogicalPath,
    pub ty: EntryType,
    /// 1 for the start directory's own entries.
    pub depth: usize,
    pub kind: Kind,
    /// The held directory that holds the entry, when the walk lists through the port
    /// (without the host's batched reads): read the entry through it.
    pub dir: Option<Arc<Dir>>,
    /// The entry's metadata (not following a link) from the directory's listing, when
    /// [`WalkOptions::with_stat`] asked for it and the host lists with metadata.
    pub stat: Option<Stat>,
}

/// What the visitor wants next.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// End the walk now; it reports truncation.
    Stop,
}

/// Every reason counted, in order, for a caller that must know where in a walk each
/// skip fell (the search index replays a walk, and may stop it anywhere).
pub type Tape = Rc<std::cell::RefCell<Vec<&'static str>>>;

/// Counts of what a walk or tool passed over, by reason.
#[derive(Debug, Default, Clone)]
pub struct Skips(BTreeMap<&'static str, u32>, Option<Tape>);

impl Skips {
    /// Counts that also write each reason to `tape` as it is counted.
    pub fn taped(tape: Tape) -> Self {
        Skips(BTreeMap::new(), Some(tape))
    }

    pub fn add(&mut self, reason: &'static str) {
        *self.0.entry(reason).or_insert(0) += 1;
        if let Some(t) = &self.1 {
            t.borrow_mut().push(reason);
        }
    }

    #[cfg(test)]
    pub fn get(&self, reason: &str) -> u32 {
        self.0.get(reason).copied().unwrap_or(0)
    }

    pub fn merge(&mut self, other: &Skips) {
        for (k, v) in &other.0 {
            *self.0.entry(k).or_insert(0) += v;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u32)> + '_ {
        self.0.iter().map(|(k, v)| (*k, *v))
    }

    /// The counts as result records.
    pub fn counts(&self) -> Vec<crate::api::SkipCount> {
        self.iter()
            .map(|(reason, count)| crate::api::SkipCount {
                reason: reason.to_string(),
                count,
            })
            .collect()
    }

    /// "3 ignored, 1 secret" or "" when nothing was skipped.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Ignore rules of a directory and its ancestors, innermost first.
struct IgnoreChain {
    /// The directory's ignore files' texts, compiled when an entry first needs them (a
    /// walk whose memo answers for every entry below the directory compiles nothing),
    /// then let go. A walk without a memo, and texts over [`LAZY_MAX_TEXT_BYTES`], compile
    /// at once: a node is held while its subtree is walked, and a deep tree of large
    /// ignore files would otherwise hold them all.
    texts: RefCell<Vec<Vec<u8>>>,
    rules: OnceCell<Option<IgnoreRules>>,
    /// Length of the directory's logical path, so an entry's path relative to it is a
    /// slice of the entry's own path.
    dir_len: usize,
    /// The sha256 of the rules in force (each ignore file's text, with the directory it
    /// applies from, of this node and those above it), when a memo asks for it; else
    /// [`NO_RULES`].
    digest: [u8; 32],
    parent: Option<Rc<IgnoreChain>>,
}

/// The digest of `chain`, as a walk's memo compares it.
fn chain_digest(chain: &Option<Rc<IgnoreChain>>) -> [u8; 32] {
    chain.as_ref().map_or(NO_RULES, |c| c.digest)
}

impl IgnoreChain {
    /// This node's rules, compiled through `cache` on first need; `None` when no line
    /// compiles to a rule.
    fn rules(&self, cache: &IgnoreCache) -> Option<&IgnoreRules> {
        self.rules
            .get_or_init(|| {
                let texts = std::mem::take(&mut *self.texts.borrow_mut());
                let refs: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
                cache.rules(&refs)
            })
            .as_ref()
    }
}

fn is_ignored(
    cache: &IgnoreCache,
    chain: &Option<Rc<IgnoreChain>>,
    path: &str,
    is_dir: bool,
) -> bool {
    let mut cur = chain.as_ref();
    while let Some(node) = cur {
        let rel = if node.dir_len == 0 {
            path
        } else {
            path.get(node.dir_len + 1..).unwrap_or("")
        };
        match node.rules(cache).map(|r| r.matched(rel, is_dir)) {
            Some(Verdict::Ignore) => return true,
            Some(Verdict::Keep) => return false,
            Some(Verdict::None) | None => {}
        }
        cur = node.parent.as_ref();
    }
    false
}

/// Extends `parent` with the ignore files of `dir` named in `names`, when they hold rules;
/// with the digest of the rules when `keyed` (a memo compares it).
fn load_ignores(
    fsx: &Fs,
    dir: &LogicalPath,
    names: &[&str],
    parent: Option<Rc<IgnoreChain>>,
    keyed: bool,
) -> Option<Rc<IgnoreChain>> {
    if names.is_empty() {
        return parent;
    }
    let mut texts = Vec::new();
    // `.ignore` is read after `.gitignore`, so its rules win.
    for name in [".gitignore", ".ignore"] {
        if names.contains(&name) {
            let path = dir.join(name);
            let text = match fsx.services().read_file(&path, MAX_IGNORE_FILE_BYTES) {
                Some(r) => r.ok(),
                None => fsx
                    .open_dir(dir)
                    .and_then(|d| d.read_file(name, MAX_IGNORE_FILE_BYTES))
                    .ok()
                    .map(|(data, _)| data),
            };
            // An unreadable ignore file is passed over; the others still apply.
            if let Some(t) = text {
                texts.push(t);
            }
        }
    }
    let refs: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
    // Compiled now where the walk keeps no memo (every entry below is judged) or the
    // texts are large (see [`IgnoreChain::texts`]); otherwise when an entry needs them.
    let large = texts.iter().map(Vec::len).sum::<usize>() > LAZY_MAX_TEXT_BYTES;
    let compiled = (!keyed || large).then(|| fsx.ignore_cache().rules(&refs));
    let holds = match &compiled {
        Some(rules) => rules.is_some(),
        None => may_hold_rules(&refs),
    };
    if !holds {
        return parent;
    }
    let digest = if keyed {
        // Each part after its length: no two chains hash the same bytes.
        let mut key = chain_digest(&parent).to_vec();
        for part in std::iter::once(dir.as_str().as_bytes()).chain(refs) {
            key.extend_from_slice(&(part.len() as u64).to_le_bytes());
            key.extend_from_slice(part);
        }
        crate::fs::hash::sha256(&key)
    } else {
        NO_RULES
    };
    let (texts, rules) = match compiled {
        Some(rules) => (Vec::new(), OnceCell::from(rules)),
        None => (texts, OnceCell::new()),
    };
    Some(Rc::new(IgnoreChain {
        texts: RefCell::new(texts),
        rules,
        dir_len: dir.as_str().len(),
        digest,
        parent,
    }))
}

/// A directory's ignore files holding more than this together are compiled when it is
/// entered (see [`IgnoreChain::texts`]).
const LAZY_MAX_TEXT_BYTES: usize = 16 << 10;

/// Ignore files larger than this are read only this far.
const MAX_IGNORE_FILE_BYTES: u64 = 4 << 20;

struct Pending {
    path: LogicalPath,
    ty: EntryType,
    depth: usize,
    kind: Kind,
    /// The entry belongs to this walk's shard (always, without sharding).
    mine: bool,
    /// Scope of the directory holding the entry.
    scope: Rc<DirScope>,
    ignores: Option<Rc<IgnoreChain>>,
    /// The held directory holding the entry (walks through the port only).
    dir: Option<Arc<Dir>>,
    stat: Option<Stat>,
}

/// The cap a walk stopped at when [`walk`] answers that it stopped without being asked.
pub fn walk_budget(policy: &Policy) -> crate::api::Stop {
    crate::api::Stop::new("max_walk_entries", policy.limits().max_walk_entries)
}

/// Walks below `start` (a directory, already resolved and checked), calling `visit` for
/// every entry that survives the filters. Returns true when the walk stopped early
/// (the visitor said stop, or the policy's walk limit was reached).
///
/// # Errors
/// `IO_ERROR` when the start directory cannot be read; unreadable directories deeper down
/// are counted as `unreadable` instead.
pub fn walk(
    fsx: &Fs,
    policy: &Policy,
    start: &LogicalPath,
    opts: &WalkOptions,
    skips: &mut Skips,
    visit: impl FnMut(&WalkEntry) -> Flow,
) -> ToolResult<bool> {
    walk_with(fsx, policy, start, opts, skips, None, visit)
}

/// [`walk`], reusing the verdicts `memo` kept of an earlier walk and keeping this walk's
/// in it (see [`crate::rules::walk_memo`]). A sharded walk keeps no memo.
///
/// # Errors
/// As [`walk`].
pub fn walk_with(
    fsx: &Fs,
    policy: &Policy,
    start: &LogicalPath,
    opts: &WalkOptions,
    skips: &mut Skips,
    memo: Option<&mut WalkMemo<'_>>,
    visit: impl FnMut(&WalkEntry) -> Flow,
) -> ToolResult<bool> {
    let first = prelist(fsx, start, opts, false);
    walk_listed(fsx, policy, first, opts, skips, memo, visit)
}

/// The start directory's listing, made before the walk that starts there ([`prelist`]).
pub struct Prelisted {
    start: LogicalPath,
    listing: std::io::Result<(Vec<Listed>, Option<Arc<Dir>>)>,
}

impl Prelisted {
    /// The directory listed.
    pub fn start(&self) -> &LogicalPath {
        &self.start
    }
}

/// Lists `start` as a walk with `opts` does, for [`walk_listed`] to start from. With
/// `early` (and metadata asked for), the host is asked for the listing twice: a host that
/// reads listings ahead starts at the second listing of a call (one alone may be all a
/// `list_dir` needs), so the directories below are read on its thread while the caller
/// does other work before the walk (nothing read ahead is shown unless the walk asks
/// for it).
pub fn prelist(fsx: &Fs, start: &LogicalPath, opts: &WalkOptions, early: bool) -> Prelisted {
    if early && opts.with_stat {
        let _ = fsx.services().read_dir_stat(start);
    }
    Prelisted {
        start: start.clone(),
        listing: read_sorted(fsx, start, None, opts),
    }
}

/// [`walk_with`] from the start directory's listing made by [`prelist`].
///
/// # Errors
/// As [`walk`].
pub fn walk_listed(
    fsx: &Fs,
    policy: &Policy,
    first: Prelisted,
    opts: &WalkOptions,
    skips: &mut Skips,
    mut memo: Option<&mut WalkMemo<'_>>,
    mut visit: impl FnMut(&WalkEntry) -> Flow,
) -> ToolResult<bool> {
    let start = &first.start;
    if opts.shard.is_some() {
        memo = None;
    }
    let keyed = memo.is_some();
    let mut ignores = None;
    if opts.respect_ignore {
        // Rules of the start directory's ancestors apply below it too. Each ancestor is
        // opened from the one above it (a link or a file on the way: no rules below).
        let mut anc = LogicalPath::root();
        let mut held = fsx.open_dir(&anc).ok();
        let mut parts = start.parts().peekable();
        while let Some(part) = parts.next() {
            let (names, linked) = held
                .as_deref()
                .map(present_ignore_files)
                .unwrap_or_default();
            if let (true, Some(m)) = (linked, memo.as_deref_mut()) {
                m.linked_rules.push(anc.as_str().to_string());
            }
            ignores = load_ignores(fsx, &anc, &names, ignores, keyed);
            anc = anc.join(part);
            // The start directory itself is the walk's to open.
            if parts.peek().is_some() {
                held = held.and_then(|d| fsx.open_below(d, [part]).ok());
            }
        }
    }
    let budget = policy.limits().max_walk_entries;
    let mut seen: u64 = 0;
    let (listing, held) = first
        .listing
        .map_err(|e| ToolError::io(start.as_str(), &e))?;
    let scope = Rc::new(policy.scope_of(start));
    let mut frame = Frame {
        fsx,
        policy,
        opts,
        skips,
        memo,
        stack: Vec::new(),
    };
    frame.push_children(start, &scope, listing, held, 1, ignores);
    while let Some(item) = frame.stack.pop() {
        seen += 1;
        if seen > budget {
            return Ok(true);
        }
        let entry = WalkEntry {
            path: item.path,
            ty: item.ty,
            depth: item.depth,
            kind: item.kind,
            dir: item.dir,
            stat: item.stat,
        };
        if item.mine && visit(&entry) == Flow::Stop {
            return Ok(true);
        }
        if entry.ty == EntryType::Dir && entry.depth < opts.max_depth {
            match read_sorted(fsx, &entry.path, entry.dir.as_ref(), opts) {
                Ok((children, held)) => {
                    let scope = Rc::new(policy.enter(&item.scope, &entry.path));
                    frame.push_children(
                        &entry.path,
                        &scope,
                        children,
                        held,
                        entry.depth + 1,
                        item.ignores,
                    );
                }
                Err(_) => frame.skips.add("unreadable"),
            }
        }
    }
    Ok(false)
}

/// The ignore files that are regular files in the held directory `dir`, and whether one
/// of them has other names.
fn present_ignore_files(dir: &Dir) -> (Vec<&'static str>, bool) {
    let mut linked = false;
    let names = [".gitignore", ".ignore"]
        .into_iter()
        .filter(|n| {
            let st = dir.stat_at(n).ok().flatten().filter(|m| m.is_file());
            linked |= st.is_some_and(|m| m.nlink > 1);
            st.is_some()
        })
        .collect();
    (names, linked)
}

/// One entry of a directory's listing, with its metadata when the walk asked for it.
type Listed = (DirItem, Option<Stat>);

/// A directory's entries as (name, type) with their metadata when `opts` asks for it and
/// the host lists it (see [`WalkOptions::with_stat`]), sorted by name, and the directory's
/// held handle when they were read through the port (opened from `parent`, the held
/// directory that holds it, or from the root when there is none).
fn read_sorted(
    fsx: &Fs,
    dir: &LogicalPath,
    parent: Option<&Arc<Dir>>,
    opts: &WalkOptions,
) -> std::io::Result<(Vec<Listed>, Option<Arc<Dir>>)> {
    let with_stat = if opts.with_stat {
        fsx.services().read_dir_stat(dir)
    } else {
        None
    };
    let plain = |items: Vec<DirItem>| items.into_iter().map(|i| (i, None)).collect();
    let (mut out, held): (Vec<Listed>, _) = match with_stat {
        Some(listing) => (
            listing?
                .into_iter()
                .map(|(name, st)| ((name, st.ty), Some(st)))
                .collect(),
            None,
        ),
        None => match fsx.services().read_dir(dir) {
            Some(listing) => (plain(listing?), None),
            None => {
                let handle = match parent {
                    Some(p) if !dir.is_root() => {
                        let d = p.open_dir(dir.name())?;
                        if fsx.swapped_git(dir.name(), &d) {
                            return Err(std::io::ErrorKind::PermissionDenied.into());
                        }
                        Arc::new(d)
                    }
                    _ => fsx.open_dir(dir)?,
                };
                (plain(handle.entries()?), Some(handle))
            }
        },
    };
    // Names in byte order, those that are not UTF-8 last. The Rust host lists in this
    // order already (the sort then only checks it); WASI listings come in the directory's.
    out.sort_unstable_by(|a, b| match (&a.0 .0, &b.0 .0) {
        (Ok(x), Ok(y)) => x.cmp(y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => std::cmp::Ordering::Equal,
    });
    Ok((out, held))
}

/// A walk under way: its settings, its counts, its memo and the stack of entries still
/// to visit.
struct Frame<'w, 'm> {
    fsx: &'w Fs,
    policy: &'w Policy,
    opts: &'w WalkOptions,
    skips: &'w mut Skips,
    memo: Option<&'w mut WalkMemo<'m>>,
    stack: Vec<Pending>,
}

impl Frame<'_, '_> {
    /// Judges the entries of `dir` (listed as `children`) and puts those visited on the
    /// stack, first on top.
    fn push_children(
        &mut self,
        dir: &LogicalPath,
        scope: &Rc<DirScope>,
        children: Vec<Listed>,
        held: Option<Arc<Dir>>,
        depth: usize,
        parent_ignores: Option<Rc<IgnoreChain>>,
    ) {
        let opts = self.opts;
        let ignores = if opts.respect_ignore {
            let mut linked = false;
            let names: Vec<&str> = children
                .iter()
                .filter_map(|((n, t), st)| match n {
                    Ok(n) if *t == EntryType::File && (n == ".gitignore" || n == ".ignore") => {
                        linked |= st.as_ref().is_none_or(|m| m.nlink > 1);
                        Some(n.as_str())
                    }
                    _ => None,
                })
                .collect();
            if let (true, Some(m)) = (linked, self.memo.as_deref_mut()) {
                m.linked_rules.push(dir.as_str().to_string());
            }
            load_ignores(self.fsx, dir, &names, parent_ignores, self.memo.is_some())
        } else {
            None
        };
        // A directory git would take for a repository is git internals, known from its
        // listing (no look per directory): passed over whole, like `.git`.
        if git_shaped_listing(
            children.iter().map(|(item, _)| item),
            self.policy.config.case_mode(),
        ) {
            if opts
                .shard
                .is_none_or(|(i, n)| shard_of(dir.as_str(), n) == i)
            {
                self.skips.add("git_internal");
            }
            return;
        }
        let mut earlier = self
            .memo
            .as_deref_mut()
            .and_then(|m| m.enter(dir.as_str(), scope, &chain_digest(&ignores)));
        let mark = self.stack.len();
        let owns = |path: &str| opts.shard.is_none_or(|(i, n)| shard_of(path, n) == i);
        for ((name, ty), stat) in children {
            let Ok(name) = name else {
                // Unnamed entries have no path to shard by: the first shard counts them.
                if opts.shard.is_none_or(|(i, _)| i == 0) {
                    self.skips.add("encoding");
                }
                continue;
            };
            let path = dir.join(&name);
            let mine = owns(path.as_str());
            let is_dir = ty == EntryType::Dir;
            // A file of another shard is passed over before any other work (nothing of it
            // is counted here).
            if !mine && !is_dir {
                continue;
            }
            // A directory named like build output is judged by a look beside it: always
            // afresh.
            let kept = !(is_dir && crate::rules::classify::looks_beside(&name));
            let verdict = match earlier
                .as_mut()
                .filter(|_| kept)
                .and_then(|l| l.find(&name, ty))
            {
                Some(v) => {
                    if let Some(m) = self.memo.as_deref_mut() {
                        m.reused += 1;
                    }
                    v
                }
                None => judge(
                    (self.policy, self.fsx.ignore_cache()),
                    scope,
                    &ignores,
                    dir,
                    &name,
                    &path,
                    ty,
                    opts,
                ),
            };
            if let (true, Some(m)) = (kept, self.memo.as_deref_mut()) {
                m.record(&name, ty, verdict);
            }
            let kind = match verdict {
                Judgement::Visit(kind) => kind,
                Judgement::Skip(reason) => {
                    if let (Some(r), true) = (reason, mine) {
                        self.skips.add(r);
                    }
                    continue;
                }
            };
            self.stack.push(Pending {
                path,
                ty,
                depth,
                kind,
                mine,
                scope: scope.clone(),
                ignores: ignores.clone(),
                dir: held.clone(),
                stat,
            });
        }
        self.stack[mark..].reverse();
    }
}

/// What a walk does with the entry `name` (at `path`, of type `ty`) of the directory `dir`
/// whose scope is `scope` and whose ignore rules are `ignores`.
#[allow(clippy::too_many_arguments)]
fn judge(
    (policy, cache): (&Policy, &IgnoreCache),
    scope: &DirScope,
    ignores: &Option<Rc<IgnoreChain>>,
    dir: &LogicalPath,
    name: &str,
    path: &LogicalPath,
    ty: EntryType,
    opts: &WalkOptions,
) -> Judgement {
    if is_temp_name(name) || (dir.is_root() && crate::rules::path::is_state_name(name)) {
        return Judgement::Skip(None);
    }
    if crate::rules::classify::is_git_name(name) {
        return Judgement::Skip(Some("git_internal"));
    }
    if !opts.include_hidden && name.starts_with('.') {
        return Judgement::Skip(Some("hidden"));
    }
    let is_dir = ty == EntryType::Dir;
    if opts.respect_ignore && is_ignored(cache, ignores, path.as_str(), is_dir) {
        return Judgement::Skip(Some("ignored"));
    }
    let kind = policy.kind_in(scope, path, is_dir);
    if opts.respect_ignore && is_dir && kind == Kind::Generated {
        return Judgement::Skip(Some("generated"));
    }
    if matches!(
        policy.read_denial_in(scope, path, kind),
        Some("blocked" | "not_allowed")
    ) && !allow_dir_for_descent(policy, path, is_dir)
    {
        // Invisible: not even counted, so no answer tells that something is there.
        return Judgement::Skip(None);
    }
    Judgement::Visit(kind)
}

/// Whether a directory with these entries has the shape git takes for a repository (see
/// [`crate::rules::classify::GIT_SHAPE`]): names compared folded unless the file system is known
/// to compare them exactly.
fn git_shaped_listing<'a>(
    children: impl IntoIterator<Item = &'a DirItem>,
    case: crate::rules::fold::CaseMode,
) -> bool {
    let mut has = [false; 4];
    for (name, ty) in children {
        let Ok(name) = name else { continue };
        // No character folds to more ASCII letters than it has bytes, so a shorter name
        // cannot be one of the four; a plain name must be as long as the one it folds to,
        // but another may be any length (`HEAD` padded with code points folding drops).
        let plain = crate::rules::fold::is_plain_ascii(name);
        if name.len() < 4 || plain && name.len() > "commondir".len() {
            continue;
        }
        let is = |folded: &str| {
            if case == crate::rules::fold::CaseMode::Sensitive {
                // Git opens exactly these names.
                name == if folded == "head" { "HEAD" } else { folded }
            } else if plain {
                name.len() == folded.len() && name.eq_ignore_ascii_case(folded)
            } else {
                crate::rules::fold::folds_to(name, folded)
            }
        };
        if let Some(i) = crate::rules::classify::GIT_SHAPE
            .iter()
            .position(|(n, is_dir)| crate::rules::classify::fills_git_slot(*is_dir, *ty) && is(n))
        {
            has[i] = true;
        }
    }
    crate::rules::classify::is_git_shape(has)
}

/// A directory outside the read allow-list is still entered when something below it may be
/// allowed (`allow = ["src/**"]` must let a walk of the root reach `src`).
fn allow_dir_for_descent(policy: &Policy, path: &LogicalPath, is_dir: bool) -> bool {
    is_dir
        && policy.read_denial_in(&policy.scope_of(&path.parent()), path, Kind::Directory)
            == Some("not_allowed")
        && policy.may_allow_below(path)
}

#[cfg(test)]
mod tests;
