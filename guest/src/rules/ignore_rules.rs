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
    set: GlobSet,
    rules: Vec<Rule>,
    /// True when every rule ignores whatever it matches (no `!` and no directory-only
    /// rules), so any match decides.
    simple: bool,
    scratch: RefCell<Vec<usize>>,
}

impl IgnoreRules {
    /// Compiles the given files' texts, in order (later files and later lines win). A line
    /// that is not a valid glob is skipped. `None` when no rule remains.
    pub fn parse(texts: &[&[u8]]) -> Option<IgnoreRules> {
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
        Some(IgnoreRules {
            set,
            rules,
            simple,
            scratch: RefCell::new(Vec::new()),
        })
    }

    /// What the rules say about `rel`, a path relative to their directory.
    pub fn matched(&self, rel: &str, is_dir: bool) -> Verdict {
        let cand = Candidate::from_bytes(rel.as_bytes());
        // Most paths match no rule: a yes/no match (which stops early, and runs the regex
        // part of the set without tracking every pattern) settles those; only a path that
        // matches asks which rules did.
        if !self.set.is_match_candidate(&cand) {
            return Verdict::None;
        }
        if self.simple {
            return Verdict::Ignore;
        }
        let mut hits = self.scratch.borrow_mut();
        self.set.matches_candidate_into(&cand, &mut hits);
        for &i in hits.iter().rev() {
            let r = self.rules[i];
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
