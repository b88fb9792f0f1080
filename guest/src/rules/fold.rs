//! Names as a case-folding file system compares them.
//!
//! On APFS (macOS) and NTFS (Windows), and in ext4 or f2fs directories with `casefold`,
//! `PRIVATE/plan.txt` opens `private/plan.txt`. A rule matched on the bytes the model sent
//! would miss it, so every rule that refuses or guards something compares folded forms:
//! both the rule and the path go through [`fold`], which maps every spelling a folding
//! file system could resolve to one file onto one string. Rules that grant something (read
//! or write allow lists, exemptions) compare folded forms only where the repository's file
//! system is known to fold (see [`CaseMode`]); elsewhere another spelling is another file.
//!
//! The folded form of a path:
//! - letters folded to lower case the way Unicode full case folding does (`ſ` is `s`, the
//!   Kelvin sign is `k`, `ß` is `ss`), by upper-casing and then lower-casing;
//! - in canonical decomposition (NFD), so that a composed and a decomposed `ü` are one name,
//!   as APFS treats them;
//! - without the code points HFS+ ignores in names (zero-width joiners, bidi marks, the
//!   byte order mark), which git also strips when it checks for `.git`;
//! - each name cut at an NTFS stream separator (`.env:x` opens `.env`) and stripped of the
//!   trailing dots and spaces Windows drops (`.env.` opens `.env`).
//!
//! Folding more than a given file system does only makes a guarding rule cover more. A
//! granting rule must not: `allow = ["strasse/**"]` granting `straße/` (a directory of
//! its own on NTFS) would open what nobody allowed. Granting rules therefore compare
//! [`fold_grant`] forms, which only join spellings every folding file system joins: each
//! letter's one-to-one lower-case form, never a non-ASCII letter into an ASCII one, no
//! normalisation, nothing dropped or cut. A name that only a wider fold joins is refused,
//! the stricter answer.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// Whether the repository's file system folds names, as the host found out at start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CaseMode {
    /// Nobody said: guarding rules fold, granting rules compare exactly.
    #[default]
    Unknown,
    /// Names are compared byte for byte (the root's probe found a case-swapped name absent).
    Sensitive,
    /// Names are folded (the root's probe opened one file under two spellings).
    Insensitive,
}

impl CaseMode {
    /// Parses the host's word for it (`sensitive`, `insensitive`).
    pub fn parse(s: &str) -> Option<CaseMode> {
        match s {
            "sensitive" => Some(CaseMode::Sensitive),
            "insensitive" => Some(CaseMode::Insensitive),
            "unknown" => Some(CaseMode::Unknown),
            _ => None,
        }
    }

    /// Whether rules that grant access compare folded forms.
    pub fn folds_grants(self) -> bool {
        self == CaseMode::Insensitive
    }
}

/// Code points that render as nothing and that a folding file system may leave out of
/// names: those HFS+ ignores, and every Unicode default-ignorable code point, which the
/// Linux kernel's case folding for ext4 and f2fs `casefold` directories dropped for years
/// (so `.env` plus a tag character opens `.env` there).
fn ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Whether `s` is its own folded form, checked without allocating: plain lower-case ASCII
/// names that keep their last character and hold no stream separator.
fn is_folded(s: &str) -> bool {
    let b = s.as_bytes();
    if !b
        .iter()
        .all(|&c| c.is_ascii() && !c.is_ascii_uppercase() && c != b':')
    {
        return false;
    }
    // No name may end in a dot or a space (Windows drops them).
    b.split(|&c| c == b'/')
        .all(|n| !matches!(n.last(), Some(b'.' | b' ')) || n.iter().all(|&c| c == b'.'))
}

/// The folded form of one name (no `/`).
fn fold_name(name: &str, out: &mut String) {
    let name = name.split(':').next().unwrap_or(name);
    let start = out.len();
    if name.is_ascii() {
        out.extend(name.chars().map(|c| c.to_ascii_lowercase()));
    } else {
        let folded: String = name
            .nfd()
            .filter(|&c| !ignorable(c))
            // The capital sharp s lower-cases to `ß`, which full case folding (Python's,
            // ext4's) takes on to `ss`: upper- then lower-casing `ß` gives that.
            .map(|c| if c == '\u{1E9E}' { '\u{DF}' } else { c })
            .flat_map(char::to_uppercase)
            .flat_map(char::to_lowercase)
            .collect();
        out.extend(folded.nfd());
    }
    // Windows drops trailing dots and spaces; a name of dots alone (`..`) stays as it is.
    let kept = out[start..].trim_end_matches(['.', ' ']).len();
    if kept > 0 {
        out.truncate(start + kept);
    }
}

/// The narrow folded form granting rules compare where names fold (see the module docs):
/// each character replaced by its lower-case form when that is one character and ASCII
/// only for an ASCII letter (the Kelvin sign stays itself, `İ` stays itself). Borrowed
/// when nothing changes.
pub fn fold_grant(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_uppercase()) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                let mut low = c.to_lowercase();
                match (low.next(), low.next()) {
                    (Some(l), None) if c.is_ascii() == l.is_ascii() => l,
                    _ => c,
                }
            })
            .collect(),
    )
}

/// The folded form of a path or glob: each `/`-separated name folded as the module docs
/// say. Borrowed when nothing changes, as for most plain lower-case paths.
pub fn fold(s: &str) -> Cow<'_, str> {
    if is_folded(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for (i, name) in s.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        fold_name(name, &mut out);
    }
    Cow::Owned(out)
}

/// Whether `name` is plain ASCII that folding only lower-cases (no stream separator, no
/// trailing dot or space).
pub fn is_plain_ascii(name: &str) -> bool {
    let b = name.as_bytes();
    b.is_ascii() && !b.contains(&b':') && !matches!(b.last(), Some(b'.' | b' '))
}

/// Whether `name` folds to `folded` (a name already in folded form), without allocating for
/// plain ASCII names: what walks ask of every entry.
pub fn folds_to(name: &str, folded: &str) -> bool {
    if is_plain_ascii(name) {
        return name.eq_ignore_ascii_case(folded);
    }
    fold(name) == folded
}

/// The folded form of one name, in `buf` when it is plain ASCII and fits (no allocation,
/// for walks that classify every entry), else allocated.
pub fn fold_name_in<'b>(name: &'b str, buf: &'b mut [u8; 64]) -> Cow<'b, str> {
    if name.len() <= buf.len() && is_plain_ascii(name) {
        let out = &mut buf[..name.len()];
        out.copy_from_slice(name.as_bytes());
        out.make_ascii_lowercase();
        // Lower-cased ASCII stays ASCII, so it is UTF-8.
        if let Ok(s) = std::str::from_utf8(out) {
            return Cow::Borrowed(s);
        }
    }
    fold(name)
}

/// Whether two names or paths open the same entry on a folding file system.
pub fn same(a: &str, b: &str) -> bool {
    a == b || fold(a) == fold(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_case_is_folded() {
        assert_eq!(fold("PRIVATE/Plan.TXT"), "private/plan.txt");
        assert_eq!(fold("CARGO.LOCK"), "cargo.lock");
        assert!(matches!(fold("src/lib.rs"), Cow::Borrowed(_)));
    }

    #[test]
    fn unicode_case_variants_fold_to_ascii() {
        // U+017F LATIN SMALL LETTER LONG S and U+212A KELVIN SIGN.
        assert_eq!(fold("id_r\u{17F}a"), "id_rsa");
        assert_eq!(fold("server.\u{212A}ey"), "server.key");
        assert_eq!(fold("STRA\u{DF}E"), "strasse");
        assert_eq!(fold("\u{391}\u{3A3}"), fold("\u{3B1}\u{3C2}"));
    }

    #[test]
    fn the_capital_sharp_s_folds_as_full_case_folding_does() {
        // `.htpaẞwd` opens `.htpasswd` on a file system that folds fully (ext4 casefold).
        assert_eq!(fold(".htpa\u{1E9E}wd"), ".htpasswd");
        assert_eq!(fold("STRA\u{1E9E}E"), fold("strasse"));
        assert_eq!(fold("stra\u{DF}e"), fold("strasse"));
        // Positive control: other letters keep their own fold.
        assert_ne!(fold(".htpa\u{1E9E}wd"), fold(".htpawd"));
    }

    #[test]
    fn every_case_variant_of_a_character_folds_alike() {
        // Whatever a folding file system takes for the same letter (its lower- or
        // upper-case form) must fold to the same string here.
        let mut bad = Vec::new();
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let s = c.to_string();
            let f = fold(&s);
            let lower: String = c.to_lowercase().collect();
            let upper: String = c.to_uppercase().collect();
            if fold(&lower) != f || fold(&upper) != f {
                bad.push(c);
            }
        }
        assert!(bad.is_empty(), "{bad:?}");
    }

    #[test]
    fn default_ignorable_code_points_are_dropped() {
        // Older Linux kernels drop them when folding names in casefold directories.
        for s in [
            ".env\u{E0001}",
            ".e\u{061C}nv",
            ".en\u{3164}v",
            ".env\u{FFA0}",
            "\u{1BCA0}.env",
            ".env\u{115F}",
            ".e\u{17B4}nv",
            ".env\u{180F}",
            ".env\u{1D173}",
        ] {
            assert_eq!(fold(s), ".env", "{s:?}");
        }
        // Positive control: a visible letter is kept.
        assert_eq!(fold(".envx"), ".envx");
    }

    #[test]
    fn composed_and_decomposed_forms_are_one_name() {
        assert_eq!(fold("gr\u{FC}n"), fold("gru\u{308}n"));
        assert_eq!(fold("GR\u{DC}N"), fold("gru\u{308}n"));
    }

    #[test]
    fn ignorable_code_points_are_dropped() {
        assert_eq!(fold(".g\u{200C}it"), ".git");
        assert_eq!(fold("\u{FEFF}.env"), ".env");
        assert_eq!(fold(".e\u{202E}nv"), ".env");
    }

    #[test]
    fn windows_trailing_dots_spaces_and_streams() {
        assert_eq!(fold(".env."), ".env");
        assert_eq!(fold(".env . "), ".env");
        assert_eq!(fold("private./a.txt"), "private/a.txt");
        assert_eq!(fold(".env:secret"), ".env");
        assert_eq!(fold("id_rsa::$DATA"), "id_rsa");
        // Names of dots alone are left alone (the path guard never lets `..` through).
        assert_eq!(fold("a/.."), "a/..");
    }

    #[test]
    fn folding_is_idempotent_and_borrowed_forms_are_folded() {
        for s in [
            "PRIVATE/x",
            "id_r\u{17F}a",
            "gr\u{FC}n.",
            "a:b/C",
            "\u{130}stanbul",
            "x/y/z.rs",
        ] {
            let once = fold(s).into_owned();
            assert_eq!(fold(&once), once, "{s}");
            assert!(is_folded(&once) || !once.is_ascii(), "{s}");
        }
        assert!(same("Policy.TOML", "policy.toml"));
        for (name, folded) in [
            (".GIT", ".git"),
            (".git.", ".git"),
            (".g\u{200C}it", ".git"),
            ("HEAD", "head"),
        ] {
            assert!(folds_to(name, folded), "{name}");
        }
        assert!(!folds_to(".gitx", ".git"));
        let mut buf = [0; 64];
        for name in ["Makefile", "a.rs", ".GIT.", "id_r\u{17F}a", &"X".repeat(80)] {
            assert_eq!(fold_name_in(name, &mut buf), fold(name), "{name}");
        }
        assert!(!same("policy.toml", "policy.tom"));
    }

    #[test]
    fn modes_parse() {
        assert_eq!(CaseMode::parse("insensitive"), Some(CaseMode::Insensitive));
        assert_eq!(CaseMode::parse("sensitive"), Some(CaseMode::Sensitive));
        assert_eq!(CaseMode::parse("maybe"), None);
        assert!(CaseMode::Insensitive.folds_grants());
        assert!(!CaseMode::Unknown.folds_grants());
    }

    #[test]
    fn granting_folds_join_only_what_every_folding_file_system_joins() {
        assert_eq!(fold_grant("SRC/Main.RS"), "src/main.rs");
        assert_eq!(fold_grant("DONNÉES"), "données");
        assert_eq!(fold_grant("src"), "src");
        // Wider folds join these; a granting rule must not.
        assert_eq!(fold_grant("straße"), "straße");
        assert_ne!(fold_grant("straße"), fold_grant("strasse"));
        assert_eq!(fold_grant("ſrc"), "ſrc");
        assert_eq!(fold_grant("\u{212A}ey"), "\u{212A}ey");
        assert_eq!(fold_grant("İ"), "İ");
        assert_eq!(fold_grant("src."), "src.");
        assert_eq!(fold_grant("s\u{200C}rc"), "s\u{200C}rc");
        // The guarding fold joins all of them.
        assert_eq!(fold("ſrc"), "src");
        assert_eq!(fold("straße"), fold("strasse"));
    }
}
