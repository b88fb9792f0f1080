//! The compiled query of a search: the regex, the literal the query is when it is one,
//! the literals every match of a regex contains, and whether matches may reach beyond
//! ASCII (which decides how a legacy file is searched: see `encoded`).

use regex::bytes::{Regex, RegexBuilder};

use crate::api::SearchTextArgs;
use crate::error::{ToolError, ToolResult};
use crate::rules::policy::Policy;
use crate::text::literal::Literal;

/// Compiles the query of a search.
///
/// # Errors
/// `INVALID_INPUT` for an empty query, a malformed regex, or one over the policy's size or
/// nesting limit.
pub fn compile(a: &SearchTextArgs, policy: &Policy) -> ToolResult<Matcher> {
    if a.query.is_empty() {
        return Err(ToolError::invalid(
            "query is empty; give the text or pattern to find",
        ));
    }
    let is_regex = a.regex.unwrap_or(false);
    let pattern = if is_regex {
        a.query.clone()
    } else {
        regex::escape(&a.query)
    };
    let limits = policy.limits();
    let case_insensitive = a.case_insensitive.unwrap_or(false);
    // Literals are found by our own substring search (`literal.rs`); a case-insensitive one
    // only when ASCII, and the regex answers for files where Unicode folding differs.
    let literal = if is_regex {
        None
    } else {
        Literal::new(a.query.as_bytes(), case_insensitive)
    };
    let re = RegexBuilder::new(&pattern)
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .size_limit(limits.max_regex_bytes as usize)
        .dfa_size_limit(limits.max_regex_bytes as usize * 2)
        .nest_limit(limits.max_regex_nesting)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(n) => ToolError::invalid(format!(
                "the regex compiles to more than {n} bytes; simplify it (fewer repetitions or alternatives)"
            )),
            other => ToolError::invalid(format!("the regex is malformed: {other}")),
        })?;
    let required = if is_regex && !case_insensitive {
        required_literals(&pattern, limits.max_regex_nesting)
    } else {
        Vec::new()
    };
    Ok(Matcher {
        re,
        literal,
        required,
        beyond_ascii: crate::text::encoding::reach::reaches_beyond_ascii(
            &pattern,
            case_insensitive,
            limits.max_regex_nesting,
        ),
    })
}

/// At most this many required literals are checked per file.
const MAX_REQUIRED: usize = 8;

/// Literals that every match of a (case-sensitive) regex contains: those of its top-level
/// sequence, looking into groups and repetitions of at least one. A file without one of
/// them holds no match, and is passed over without running the regex; the common ones
/// are found near the start of a file, so checking them costs little.
pub(super) fn required_literals(pattern: &str, nest_limit: u32) -> Vec<Literal> {
    use regex_syntax::hir::{Hir, HirKind};
    fn walk(h: &Hir, out: &mut Vec<Literal>) {
        match h.kind() {
            HirKind::Literal(l) => out.extend(Literal::new(&l.0, false)),
            HirKind::Concat(subs) => subs.iter().for_each(|s| walk(s, out)),
            HirKind::Capture(c) => walk(&c.sub, out),
            HirKind::Repetition(r) if r.min >= 1 => walk(&r.sub, out),
            _ => {}
        }
    }
    // The same syntax settings as the regex itself (`regex::bytes` allows non-UTF-8).
    let parsed = crate::text::encoding::reach::parse_as_search(pattern, false, nest_limit);
    let mut out = Vec::new();
    if let Some(h) = parsed {
        walk(&h, &mut out);
    }
    // Longest first: the longer a literal, the likelier it is to be rare.
    out.sort_by_key(|l| std::cmp::Reverse(l.len()));
    out.truncate(MAX_REQUIRED);
    out
}

/// A compiled query.
#[derive(Debug)]
pub struct Matcher {
    pub(super) re: Regex,
    /// The query when it is a literal (and ASCII, if case-insensitive).
    pub(super) literal: Option<Literal>,
    /// For a regex, literals every match contains.
    pub(super) required: Vec<Literal>,
    /// Matches may hold (or look at) a character beyond ASCII: a legacy file's bytes are
    /// not enough to search (see `text::encoding::reach`).
    pub(super) beyond_ascii: bool,
}

impl Matcher {
    /// Whether every ASCII literal a match needs is in `buf` (they are the same bytes in
    /// any encoding search decodes but UTF-16 and UTF-32).
    pub(super) fn ascii_required_in(&self, buf: &[u8]) -> bool {
        self.required
            .iter()
            .filter(|l| l.needle().is_ascii())
            .all(|l| l.find(buf).is_some())
    }
}

impl Matcher {
    /// Trigrams every match holds in a file's bytes (see [`crate::text::trigram`]): those
    /// of the literal the query is, or of the literals every match of a regex contains.
    /// For a query whose matches may reach beyond ASCII, only windows of ASCII bytes: a
    /// legacy file is then searched decoded, and ASCII is the one part of the query every
    /// encoding search decodes spells with the same bytes (UTF-16 and UTF-32 files are
    /// never passed over on the index's word). A case-insensitive literal leaves out the
    /// windows holding a 'k' or an 's', which Unicode folding also matches with the
    /// Kelvin sign and the long s.
    pub(super) fn trigrams(&self) -> Vec<crate::text::trigram::Trigram> {
        use crate::text::trigram::of_needle;
        let ascii_only = self.beyond_ascii;
        let mut out = Vec::new();
        if let Some(l) = &self.literal {
            let folds = l.folds();
            out.extend(of_needle(l.needle(), |w| {
                (!ascii_only || w.is_ascii())
                    && (!folds || !w.iter().any(|&b| b == b'k' || b == b's'))
            }));
        }
        for l in &self.required {
            out.extend(of_needle(l.needle(), |w| !ascii_only || w.is_ascii()));
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The same matcher without the required-literal check (for differential tests).
    #[cfg(test)]
    pub(crate) fn without_required(mut self) -> Self {
        self.required.clear();
        self
    }
}

/// What finds matches in one buffer: the regex, or the literal.
pub(super) enum Finder<'a> {
    Regex(&'a Regex),
    Literal(&'a Literal),
}

impl Finder<'_> {
    pub(super) fn find_at(&self, buf: &[u8], pos: usize) -> Option<(usize, usize)> {
        match self {
            Finder::Regex(re) => re.find_at(buf, pos).map(|m| (m.start(), m.end())),
            Finder::Literal(l) => l
                .find(buf.get(pos..)?)
                .map(|i| (pos + i, pos + i + l.len())),
        }
    }

    /// The first match inside `line`.
    pub(super) fn find_in(&self, line: &[u8]) -> Option<(usize, usize)> {
        match self {
            Finder::Regex(re) => re.find(line).map(|m| (m.start(), m.end())),
            Finder::Literal(l) => l.find(line).map(|i| (i, i + l.len())),
        }
    }
}
