//! What a walk decided for each entry of each directory it listed, kept so that the next
//! walk of the same tree decides again only for what is new.
//!
//! A walk judges every entry it lists: passed over (and counted why), hidden from every
//! answer, or visited with its classification. That judgement is a function of the
//! directory's path, its [`DirScope`], the ignore rules in force there, the entry's name and
//! type, and the policy and walk options; nothing else, but for one exception: a directory
//! named like build output (`target`, `build`, ...) is build output only beside the build
//! file that makes it, a look into the tree (`CONTEXT_DIRS` in the classification). So a
//! memo records, per directory, its scope, a digest of its ignore rules (the text of every
//! ignore file of the chain, with the directory each applies from) and each entry's
//! verdict by name and type; the next walk reuses a verdict only where all of these are
//! equal, compared exactly (names byte for byte), and always judges afresh the entries that
//! look into the tree. A memo made under other walk options, another policy or another
//! build of these rules is not used at all ([`binding`]).
//!
//! The memo is bytes the caller keeps (`changes_since` keeps it inside its snapshot, whose
//! name the signed token carries, so it is read back only as it was written). Reading it
//! checks every length; a damaged memo is ignored whole.
//!
//! ```text
//! "ftwalkm1" binding_len:u32 binding  directory*
//! directory = path_len:u32 path  scope_len:u16 scope  chain:32  body_len:u32 body
//! body      = (verdict:u8 type:u8 name_len:u16 name)*      names in the listing's order
//! ```
//! Integers are little-endian. A verdict is a [`Kind`] visited (its index), a reason
//! counted (`0x80 | reason`), or [`SILENT`] (passed over without a count).

use crate::fs::port::EntryType;
use crate::rules::classify::Kind;
use crate::rules::policy::{DirScope, Policy};
use crate::text::bytes::Reader;
use crate::text::keyhash::KeyMap;

const MAGIC: &[u8; 8] = b"ftwalkm1";

/// A build of these rules: a memo made by another one is not used. (Set by the build
/// script from the text of `src/rules` and of the contract, the manifest, the lock file
/// and the compiler's version.)
const RULES_BUILD: &str = env!("FILE_TOOLS_RULES_DIGEST");

/// The digest of a directory's ignore rules when no rules apply.
pub const NO_RULES: [u8; 32] = [0; 32];

/// Passed over without a count: a name no answer may show.
const SILENT: u8 = 0xFF;
const COUNTED: u8 = 0x80;
/// The reasons a skipped entry is counted under, by their index in a verdict.
const REASONS: [&str; 4] = ["git_internal", "hidden", "ignored", "generated"];
const KINDS: [Kind; 12] = [
    Kind::Source,
    Kind::Config,
    Kind::Doc,
    Kind::Text,
    Kind::Secret,
    Kind::GitInternal,
    Kind::Generated,
    Kind::Vendored,
    Kind::Lockfile,
    Kind::Binary,
    Kind::Directory,
    Kind::Automation,
];
const TYPES: [EntryType; 4] = [
    EntryType::File,
    EntryType::Dir,
    EntryType::Symlink,
    EntryType::Other,
];

/// What a walk does with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Passed over; counted under the reason when there is one.
    Skip(Option<&'static str>),
    /// Visited, with this classification.
    Visit(Kind),
}

impl Judgement {
    fn to_byte(self) -> Option<u8> {
        match self {
            Judgement::Skip(None) => Some(SILENT),
            Judgement::Skip(Some(r)) => REASONS
                .iter()
                .position(|x| *x == r)
                .map(|i| COUNTED | i as u8),
            Judgement::Visit(k) => KINDS.iter().position(|x| *x == k).map(|i| i as u8),
        }
    }

    fn from_byte(b: u8) -> Option<Judgement> {
        match b {
            SILENT => Some(Judgement::Skip(None)),
            b if b & COUNTED != 0 => REASONS
                .get(usize::from(b & !COUNTED))
                .map(|r| Judgement::Skip(Some(r))),
            b => KINDS.get(usize::from(b)).map(|k| Judgement::Visit(*k)),
        }
    }
}

fn type_byte(ty: EntryType) -> u8 {
    TYPES.iter().position(|t| *t == ty).unwrap_or(3) as u8
}

/// What a memo is bound to: the format, this build of the rules, the policy and the walk's
/// options. Only a memo bound the same is used.
pub fn binding(policy: &Policy, include_hidden: bool, respect_ignore: bool) -> Vec<u8> {
    format!(
        "{RULES_BUILD}\n{}{}\n{}",
        u8::from(include_hidden),
        u8::from(respect_ignore),
        policy.fingerprint()
    )
    .into_bytes()
}

/// One directory of an earlier walk's memo.
struct Earlier<'a> {
    scope: &'a [u8],
    chain: &'a [u8],
    body: &'a [u8],
}

/// The memo of an earlier walk, read in place, and the one this walk writes.
#[derive(Default)]
pub struct WalkMemo<'a> {
    earlier: KeyMap<&'a str, Earlier<'a>>,
    out: Vec<u8>,
    /// Where the open directory's `body_len` is written, when one is open.
    open: Option<usize>,
    /// Verdicts reused and made, for tests and measurements.
    pub reused: u64,
    /// Directories entered without an earlier record under the same scope and rules.
    pub fresh: u64,
    /// An earlier memo was given and refused whole: bound otherwise (another build of the
    /// rules) or damaged. Nothing of the tree goes into this.
    pub refused: bool,
    /// Directories whose ignore files the walk read (those of the start's ancestors
    /// included) where one has other names, or its metadata was not at hand: a change
    /// through another name is reported to that name's directory only.
    pub linked_rules: Vec<String>,
}

impl<'a> WalkMemo<'a> {
    /// A memo for a walk bound as `binding`, reusing `earlier` (a memo written by an
    /// earlier walk) when it is bound the same and reads whole.
    pub fn new(binding: &[u8], earlier: Option<&'a [u8]>) -> Self {
        Self::new_for(binding, earlier, |_| true)
    }

    /// A memo as [`WalkMemo::new`] makes, that reuses the earlier walk's verdicts only for
    /// the directories `wanted` takes (by path): a walk that lists a few directories of a
    /// large tree reads past the others.
    pub fn new_for(
        binding: &[u8],
        earlier: Option<&'a [u8]>,
        wanted: impl Fn(&[u8]) -> bool,
    ) -> Self {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(binding.len() as u32).to_le_bytes());
        out.extend_from_slice(binding);
        let taken = earlier.map(|b| read(b, binding, wanted));
        WalkMemo {
            refused: matches!(taken, Some(None)),
            earlier: taken.flatten().unwrap_or_default(),
            out,
            open: None,
            reused: 0,
            fresh: 0,
            linked_rules: Vec::new(),
        }
    }

    /// The memo this walk wrote.
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.close();
        self.out
    }

    /// Starts the record of directory `dir`, whose scope is `scope` and whose ignore rules
    /// digest to `chain`; returns the earlier walk's verdicts for it when they were made
    /// under the same scope and rules.
    pub fn enter(&mut self, dir: &str, scope: &DirScope, chain: &[u8; 32]) -> Option<Lookup<'a>> {
        self.close();
        let scope_key = scope.key();
        let (Ok(plen), Ok(slen)) = (u32::try_from(dir.len()), u16::try_from(scope_key.len()))
        else {
            self.fresh += 1;
            return None;
        };
        self.out.extend_from_slice(&plen.to_le_bytes());
        self.out.extend_from_slice(dir.as_bytes());
        self.out.extend_from_slice(&slen.to_le_bytes());
        self.out.extend_from_slice(&scope_key);
        self.out.extend_from_slice(chain);
        self.open = Some(self.out.len());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        let found = self
            .earlier
            .get(dir)
            .filter(|e| e.scope == scope_key.as_slice() && e.chain == chain.as_slice())
            .map(|e| Lookup(Reader(e.body)));
        self.fresh += u64::from(found.is_none());
        found
    }

    /// Records the verdict on entry `name` of type `ty` of the open directory.
    pub fn record(&mut self, name: &str, ty: EntryType, verdict: Judgement) {
        let (Some(v), Ok(len)) = (verdict.to_byte(), u16::try_from(name.len())) else {
            return;
        };
        if self.open.is_none() {
            return;
        }
        self.out.push(v);
        self.out.push(type_byte(ty));
        self.out.extend_from_slice(&len.to_le_bytes());
        self.out.extend_from_slice(name.as_bytes());
    }

    fn close(&mut self) {
        if let Some(at) = self.open.take() {
            let len = (self.out.len() - at - 4) as u32;
            self.out[at..at + 4].copy_from_slice(&len.to_le_bytes());
        }
    }
}

/// The earlier verdicts of one directory, met in the listing's order.
pub struct Lookup<'a>(Reader<'a>);

impl Lookup<'_> {
    /// The earlier verdict on `name` of type `ty`, when there was one. Names come in the
    /// listing's order (byte order), as they were recorded, so the memo is read once.
    pub fn find(&mut self, name: &str, ty: EntryType) -> Option<Judgement> {
        loop {
            let mut ahead = Reader(self.0 .0);
            let (v, t) = (ahead.take(1)?[0], ahead.take(1)?[0]);
            let len = usize::from(ahead.u16()?);
            let here = ahead.take(len)?;
            match here.cmp(name.as_bytes()) {
                std::cmp::Ordering::Less => self.0 = ahead,
                std::cmp::Ordering::Greater => return None,
                std::cmp::Ordering::Equal => {
                    self.0 = ahead;
                    return if t == type_byte(ty) {
                        Judgement::from_byte(v)
                    } else {
                        None
                    };
                }
            }
        }
    }
}

/// The directories of the memo `bytes`, when it is bound as `binding` and reads whole.
fn read<'a>(
    bytes: &'a [u8],
    binding: &[u8],
    wanted: impl Fn(&[u8]) -> bool,
) -> Option<KeyMap<&'a str, Earlier<'a>>> {
    let mut r = Reader(bytes.strip_prefix(MAGIC)?);
    let blen = usize::try_from(r.u32()?).ok()?;
    if r.take(blen)? != binding {
        return None;
    }
    let mut dirs = KeyMap::default();
    while !r.0.is_empty() {
        let plen = usize::try_from(r.u32()?).ok()?;
        let path = r.take(plen)?;
        let slen = usize::from(r.u16()?);
        let scope = r.take(slen)?;
        let chain = r.take(32)?;
        let body_len = usize::try_from(r.u32()?).ok()?;
        let body = r.take(body_len)?;
        if wanted(path) {
            let path = std::str::from_utf8(path).ok()?;
            dirs.insert(path, Earlier { scope, chain, body });
        }
    }
    Some(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_survives_its_byte() {
        let mut all: Vec<Judgement> = KINDS.iter().map(|k| Judgement::Visit(*k)).collect();
        all.push(Judgement::Skip(None));
        all.extend(REASONS.iter().map(|r| Judgement::Skip(Some(r))));
        for v in all {
            assert_eq!(Judgement::from_byte(v.to_byte().unwrap()), Some(v));
        }
        // A reason this memo cannot record is not recorded (the entry is judged again).
        assert_eq!(Judgement::Skip(Some("encoding")).to_byte(), None);
        assert_eq!(Judgement::from_byte(COUNTED | 9), None);
        assert_eq!(Judgement::from_byte(40), None);
    }

    #[test]
    fn a_memo_is_reused_only_under_its_binding_scope_and_rules_and_read_whole() {
        let pol = Policy::from_json("").unwrap();
        let scope = pol.root_scope();
        let chain = [7; 32];
        let mut m = WalkMemo::new(b"bound", None);
        assert!(m.enter("src", &scope, &chain).is_none());
        // In the listing's order (byte order).
        m.record(".env", EntryType::File, Judgement::Skip(Some("hidden")));
        m.record("a.rs", EntryType::File, Judgement::Visit(Kind::Source));
        m.record("b", EntryType::Dir, Judgement::Skip(Some("ignored")));
        let bytes = m.into_bytes();

        let mut again = WalkMemo::new(b"bound", Some(&bytes));
        let mut l = again.enter("src", &scope, &chain).unwrap();
        // Met in byte order; a name not recorded, or recorded with another type, is not
        // found.
        assert_eq!(
            l.find(".env", EntryType::File),
            Some(Judgement::Skip(Some("hidden")))
        );
        assert_eq!(l.find("a.rs", EntryType::Dir), None);
        assert_eq!(l.find("a0", EntryType::File), None);
        assert_eq!(
            l.find("b", EntryType::Dir),
            Some(Judgement::Skip(Some("ignored")))
        );
        assert_eq!(l.find("c", EntryType::File), None);
        assert!(again.enter("lib", &scope, &chain).is_none());

        // Another binding, other rules, another scope: nothing reused.
        assert!(WalkMemo::new(b"other", Some(&bytes))
            .enter("src", &scope, &chain)
            .is_none());
        assert!(WalkMemo::new(b"bound", Some(&bytes))
            .enter("src", &scope, &[8; 32])
            .is_none());
        let deeper = pol.enter(
            &scope,
            &crate::rules::path::LogicalPath::parse("target").unwrap(),
        );
        assert_ne!(deeper.key(), scope.key());
        // Every cut of the memo reads as no memo (each length is checked).
        for cut in 0..bytes.len() {
            let mut m = WalkMemo::new(b"bound", Some(&bytes[..cut]));
            assert!(m.enter("src", &scope, &chain).is_none(), "cut at {cut}");
        }
    }
}
