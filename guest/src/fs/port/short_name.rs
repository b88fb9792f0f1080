//! Windows short (8.3) names: on NTFS with short names on (the default on system drives),
//! `PRIVAT~1` opens `private` and `ENV~1` opens `.env`. No directory listing shows them, so
//! no rule matched on names would see one. The port takes a name shaped like a short name
//! only where the directory lists an entry by exactly that name; any other is an alias of
//! an entry by another name, and counts as absent.

/// Whether `name` has the shape of a generated short name: up to six characters, `~` and
/// a number, eight in all, and an extension of up to three characters.
pub(super) fn looks_short(name: &str) -> bool {
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) => (stem, ext),
        None => (name, ""),
    };
    let Some((base, number)) = stem.rsplit_once('~') else {
        return false;
    };
    stem.len() <= 8
        && !base.is_empty()
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && ext.len() <= 3
        && !stem.contains('.')
}

#[cfg(test)]
mod tests {
    use super::looks_short;

    #[test]
    fn the_shape_of_a_short_name() {
        for n in [
            "PRIVAT~1",
            "ENV~1",
            "privat~1",
            "CI~1",
            "A~12",
            "README~1.MD",
            "X~1.TXT",
        ] {
            assert!(looks_short(n), "{n}");
        }
        for n in [
            "private",
            "~1",
            "A~",
            "A~x",
            "README~1.MARKDOWN",
            "LONGNAME~1",
            "a.b~1",
            "x.~1~",
        ] {
            assert!(!looks_short(n), "{n}");
        }
    }
}
