//! The rules of one directory's `.gitignore` and `.ignore` files, matched against paths
//! relative to that directory.
//!
//! Line syntax follows gitignore(5), as ripgrep reads it: `#` starts a comment, trailing
//! whitespace is dropped unless escaped (`\ `), `!` re-includes, `\!` and `\#` are literal,
//! a leading `/` or a `/` inside the pattern anchors it to the directory (otherwise it
//! matches at any depth), a trailing `/` matches directories only, `*` never crosses `/`
//! and `**` does. When several rules match, the last one decides.
//!
//! Matching works on logical paths, which are UTF-8 with `/` separators already, so no
//! per-entry conversion through `Path` is needed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

/// What the rules say about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No rule matched: ask the rules of the directories above.
    None,
    Ignore,
    /// A `!` rule matched: the path is kept, whatever the directories above say.
    Keep,
}

#[derive(Debug, Clone, Copy)]
struct Rule {
    keep: bool,
    only_dir: bool,
}

/// Compiled ignore rules of one directory.
#[derive(Debug)]
pub struct IgnoreRules {
    compiled: Arc<Compiled>,
    scratch: RefCell<Vec<usize>>,
}

/// The rules of some ignore files' texts, compiled: what [`IgnoreCache`] keeps.
#[derive(Debug)]
struct Compiled {
    set: GlobSet,
    rules: Vec<Rule>,
    /// True when every rule ignores whatever it matches (no `!` and no directory-only
    /// rules), so any match decides.
    simple: bool,
}

/// Compiles the given files' texts, in order (later files and later lines win). A line
/// that is not a valid glob is skipped. `None` when no rule remains.
fn compile(texts: &[&[u8]]) -> Option<Compiled> {
    let mut b = GlobSetBuilder::new();
    let mut rules = Vec::new();
    for text in texts {
        let text = String::from_utf8_lossy(text);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        for line in text.lines() {
            if let Some((glob, rule)) = parse_line(line) {
                let built = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .allow_unclosed_class(true)
                    .build();
                if let Ok(g) = built {
                    b.add(g);
                    rules.push(rule);
                }
            }
        }
    }
    if rules.is_empty() {
        return None;
    }
    let set = b.build().ok()?;
    let simple = rules.iter().all(|r| !r.only_dir && !r.keep);
    Some(Compiled { set, rules, simple })
}

/// Compiled rules kept by the texts they were compiled from, so that each set of ignore
/// files is compiled once for all the walks of an instance, call after call, until its
/// text changes (the text is read by every walk; only compiling is spared). Bounded: past
/// [`IgnoreCache::MAX_TEXT_BYTES`] of texts or [`IgnoreCache::MAX_ENTRIES`] it starts over,
/// so that a tree of many large ignore files costs no more memory between calls than a
/// few of them (a typical tree's ignore files hold tens of kilobytes in all).
#[derive(Debug, Default)]
pub struct IgnoreCache(Mutex<Kept>);

/// What an [`IgnoreCache`] holds, and the bytes of its keys.
#[derive(Debug, Default)]
struct Kept {
    by_text: HashMap<Vec<u8>, Option<Arc<Compiled>>>,
    bytes: usize,
}

impl IgnoreCache {
    const MAX_TEXT_BYTES: usize = 4 << 20;
    const MAX_ENTRIES: usize = 4096;

    /// [`IgnoreRules::parse`] of `texts`, compiled once per distinct texts.
    pub fn rules(&self, texts: &[&[u8]]) -> Option<IgnoreRules> {
        // Each text after its length: no two lists of texts make the same key.
        let mut key = Vec::with_capacity(texts.iter().map(|t| t.len() + 8).sum());
        for t in texts {
            key.extend_from_slice(&(t.len() as u64).to_le_bytes());
            key.extend_from_slice(t);
        }
        let Ok(mut kept) = self.0.lock() else {
            return IgnoreRules::parse(texts);
        };
        if let Some(hit) = kept.by_text.get(&key) {
            return hit.clone().map(IgnoreRules::of);
        }
        let compiled = compile(texts).map(Arc::new);
        if kept.by_text.len() >= Self::MAX_ENTRIES || kept.bytes + key.len() > Self::MAX_TEXT_BYTES
        {
            *kept = Kept::default();
        }
        if key.len() <= Self::MAX_TEXT_BYTES {
            kept.bytes += key.len();
            kept.by_text.insert(key, compiled.clone());
        }
        compiled.map(IgnoreRules::of)
    }

    /// How many distinct sets of texts were compiled and are kept.
    #[cfg(test)]
    pub fn compiled(&self) -> usize {
        self.0.lock().map_or(0, |k| k.by_text.len())
    }
}

/// Whether some line of `texts` reads as a rule (comments and blank lines do not): what
/// a walk checks before it defers compiling them (see [`IgnoreCache::rules`]). A text
/// whose every rule is an invalid glob passes this check and compiles to nothing.
pub fn may_hold_rules(texts: &[&[u8]]) -> bool {
    texts.iter().any(|text| {
        let text = String::from_utf8_lossy(text);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        text.lines().any(|line| parse_line(line).is_some())
    })
}

impl IgnoreRules {
    /// Compiles the given files' texts (see [`compile`]); `None` when no rule remains.
    pub fn parse(texts: &[&[u8]]) -> Option<IgnoreRules> {
        compile(texts).map(|c| IgnoreRules::of(Arc::new(c)))
    }

    fn of(compiled: Arc<Compiled>) -> IgnoreRules {
        IgnoreRules {
            compiled,
            scratch: RefCell::new(Vec::new()),
        }
    }

    /// What the rules say about `rel`, a path relative to their directory.
    pub fn matched(&self, rel: &str, is_dir: bool) -> Verdict {
        let cand = Candidate::from_bytes(rel.as_bytes());
        // Most paths match no rule: a yes/no match (which stops early, and runs the regex
        // part of the set without tracking every pattern) settles those; only a path that
        // matches asks which rules did.
        if !self.compiled.set.is_match_candidate(&cand) {
            return Verdict::None;
        }
        if self.compiled.simple {
            return Verdict::Ignore;
        }
        let mut hits = self.scratch.borrow_mut();
        self.compiled.set.matches_candidate_into(&cand, &mut hits);
        for &i in hits.iter().rev() {
            let r = self.compiled.rules[i];
            if !r.only_dir || is_dir {
                return if r.keep {
                    Verdict::Keep
                } else {
                    Verdict::Ignore
                };
            }
        }
        Verdict::None
    }
}

/// One line as a glob over paths relative to the directory, with its flags.
fn parse_line(line: &str) -> Option<(String, Rule)> {
    if line.starts_with('#') {
        return None;
    }
    let mut line = if line.ends_with("\\ ") {
        line
    } else {
        line.trim_end()
    };
    if line.is_empty() {
        return None;
    }
    let mut rule = Rule {
        keep: false,
        only_dir: false,
    };
    let mut anchored = false;
    if line.starts_with("\\!") || line.starts_with("\\#") {
        line = &line[1..];
    } else {
        if let Some(rest) = line.strip_prefix('!') {
            rule.keep = true;
            line = rest;
        }
        if let Some(rest) = line.strip_prefix('/') {
            anchored = true;
            line = rest;
        }
    }
    if let Some(rest) = line.strip_suffix('/') {
        rule.only_dir = true;
        line = rest.strip_suffix('\\').unwrap_or(rest);
    }
    if line.is_empty() {
        return None;
    }
    let mut glob = if !anchored && !line.contains('/') && !line.starts_with("**/") {
        format!("**/{line}")
    } else {
        line.to_string()
    };
    // `dir/**` matches what is inside `dir`, not `dir` itself.
    if glob.ends_with("/**") {
        glob.push_str("/*");
    }
    Some((glob, rule))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache compiles each distinct list of texts once, and answers for a changed
    /// text (or the same bytes split into other files) with that text's own rules.
    #[test]
    fn the_cache_compiles_each_text_once_and_never_answers_for_another() {
        let cache = IgnoreCache::default();
        let first = cache.rules(&[b"*.log\n"]).unwrap();
        let again = cache.rules(&[b"*.log\n"]).unwrap();
        assert!(Arc::ptr_eq(&first.compiled, &again.compiled));
        assert_eq!(again.matched("a.log", false), Verdict::Ignore);
        // The same file rewritten: its new rules, compiled anew.
        let changed = cache.rules(&[b"*.tmp\n"]).unwrap();
        assert!(!Arc::ptr_eq(&first.compiled, &changed.compiled));
        assert_eq!(changed.matched("a.log", false), Verdict::None);
        assert_eq!(changed.matched("a.tmp", false), Verdict::Ignore);
        // `.gitignore` "a" with `.ignore` "b" is not one file "ab", nor the reverse order.
        let two = cache.rules(&[b"x*\n", b"!xy\n"]).unwrap();
        let one = cache.rules(&[b"x*\n!xy\n"]).unwrap();
        let swapped = cache.rules(&[b"!xy\n", b"x*\n"]).unwrap();
        assert!(!Arc::ptr_eq(&two.compiled, &one.compiled));
        assert_eq!(two.matched("xy", false), Verdict::Keep);
        assert_eq!(swapped.matched("xy", false), Verdict::Ignore);
        // Texts without a rule are remembered as such.
        assert!(cache.rules(&[b"# only a comment\n"]).is_none());
        assert!(cache.rules(&[b"# only a comment\n"]).is_none());
    }

    fn rules(text: &str) -> IgnoreRules {
        IgnoreRules::parse(&[text.as_bytes()]).unwrap()
    }

    #[test]
    fn names_match_at_any_depth_and_anchors_only_here() {
        let r = rules("*.o\n/top.txt\nsub/mid.txt\n");
        assert_eq!(r.matched("a.o", false), Verdict::Ignore);
        assert_eq!(r.matched("x/y/a.o", false), Verdict::Ignore);
        assert_eq!(r.matched("top.txt", false), Verdict::Ignore);
        assert_eq!(r.matched("x/top.txt", false), Verdict::None);
        assert_eq!(r.matched("sub/mid.txt", false), Verdict::Ignore);
        assert_eq!(r.matched("x/sub/mid.txt", false), Verdict::None);
        assert_eq!(r.matched("a.oo", false), Verdict::None);
    }

    #[test]
    fn last_rule_wins_and_directory_rules_skip_files() {
        let r = rules("*.log\n!keep.log\nout/\n");
        assert_eq!(r.matched("a.log", false), Verdict::Ignore);
        assert_eq!(r.matched("keep.log", false), Verdict::Keep);
        assert_eq!(r.matched("out", true), Verdict::Ignore);
        assert_eq!(r.matched("out", false), Verdict::None);
        let later = IgnoreRules::parse(&[b"!x.txt\n", b"x.txt\n"]).unwrap();
        assert_eq!(later.matched("x.txt", false), Verdict::Ignore);
    }

    #[test]
    fn comments_escapes_whitespace_and_double_stars() {
        let r = rules("# comment\n\\#hash\n\\!bang\ntrail   \nesc\\ \nlogs/**\n[unclosed\n");
        assert_eq!(r.matched("# comment", false), Verdict::None);
        assert_eq!(r.matched("#hash", false), Verdict::Ignore);
        assert_eq!(r.matched("!bang", false), Verdict::Ignore);
        assert_eq!(r.matched("trail", false), Verdict::Ignore);
        assert_eq!(r.matched("esc ", false), Verdict::Ignore);
        assert_eq!(r.matched("logs", true), Verdict::None);
        assert_eq!(r.matched("logs/a/b", false), Verdict::Ignore);
        assert_eq!(r.matched("[unclosed", false), Verdict::Ignore);
    }

    #[test]
    fn a_file_of_only_comments_has_no_rules() {
        assert!(IgnoreRules::parse(&[b"# nothing\n\n   \n"]).is_none());
        let bom = IgnoreRules::parse(&["\u{feff}a.txt\n".as_bytes()]).unwrap();
        assert_eq!(bom.matched("a.txt", false), Verdict::Ignore);
    }
}
