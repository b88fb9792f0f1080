//! sha256 in lowercase hex, the form every tool reports and accepts.

use sha2::{Digest, Sha256};

/// The sha256 of `data` as 64 lowercase hex digits, computed in the component (see
/// [`crate::rules::services::Services::sha256_hex`] for the host's faster hashing).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// The sha256 of `data`, computed in the component.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// The sha256 and size of an opened file whose metadata, as opened, gave `size`: read
/// whole when it is under 1 MiB and hashed by `whole` (the host's hashing, where it offers
/// one, is many times the component's speed), else streamed in 1 MiB chunks through the
/// component's own hashing, each chunk also shown to `each`. A file of at most 1 MiB is
/// read up to its size in one read, as it was when opened (no second read to find its end:
/// under WASI each read is a call into the host); one that reports no size, or more, is
/// read to its end.
///
/// # Errors
/// Any error of reading the file.
pub fn sha256_file(
    f: &crate::fs::port::File,
    size: u64,
    whole: &dyn Fn(&[u8]) -> String,
    mut each: impl FnMut(&[u8]),
) -> std::io::Result<(String, u64)> {
    const CHUNK: usize = 1 << 20;
    let known = usize::try_from(size).ok().filter(|&n| n > 0 && n <= CHUNK);
    let first = f.read_at(0, known.unwrap_or(CHUNK))?;
    each(&first);
    if known.is_some() || first.len() < CHUNK {
        return Ok((whole(&first), first.len() as u64));
    }
    let mut h = Sha256::new_with_prefix(&first);
    let mut total = first.len() as u64;
    loop {
        let chunk = f.read_at(total, CHUNK)?;
        if chunk.is_empty() {
            break;
        }
        each(&chunk);
        h.update(&chunk);
        total += chunk.len() as u64;
    }
    Ok((hex(&h.finalize()), total))
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// True when `s` has the form of a sha256 (64 hex digits, any case).
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The 32 bytes that 64 hex digits (any case) spell; `None` for anything else.
pub fn unhex32(s: &str) -> Option<[u8; 32]> {
    if !is_sha256(s) {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
        let digits = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(digits, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digits_spell_their_bytes_back() {
        let d = sha256(b"abc");
        assert_eq!(unhex32(&hex(&d)), Some(d));
        assert_eq!(unhex32(&hex(&d).to_uppercase()), Some(d));
        let h = hex(&d);
        for bad in [
            &h[1..],
            &format!("{h}0"),
            &format!("+{}", &h[1..]),
            &format!("{}g", &h[..63]),
        ] {
            assert_eq!(unhex32(bad), None, "{bad}");
        }
    }

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_sha256(&sha256_hex(b"")));
        assert!(!is_sha256("abc"));
    }

    #[test]
    fn files_small_and_large_hash_like_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        for size in [
            0usize,
            1,
            4095,
            70_000,
            (1 << 20) - 1,
            1 << 20,
            (1 << 20) + 17,
            3 << 20,
        ] {
            let data: Vec<u8> = (0..size).map(|i| (i % 253) as u8).collect();
            let name = format!("f{size}");
            std::fs::write(dir.path().join(&name), &data).unwrap();
            let root = crate::fs::port::Dir::open_ambient(dir.path()).unwrap();
            let (file, st) = root.open_file(&name).unwrap();
            for told in [st.size, 0] {
                assert_eq!(
                    sha256_file(&file, told, &sha256_hex, |_| {}).unwrap(),
                    (sha256_hex(&data), size as u64),
                    "{size}, told {told}"
                );
            }
        }
    }

    /// A small file is hashed as it was when opened: what is appended after the look at its
    /// size is not read (it would need a second read only to find the end).
    #[test]
    fn a_small_file_is_hashed_as_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grows");
        std::fs::write(&path, b"first line\n").unwrap();
        let root = crate::fs::port::Dir::open_ambient(dir.path()).unwrap();
        let (file, st) = root.open_file("grows").unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, b"appended later\n").unwrap();
        assert_eq!(
            sha256_file(&file, st.size, &sha256_hex, |_| {}).unwrap(),
            (sha256_hex(b"first line\n"), 11)
        );
        // Told no size (as some special file systems report), it is read to its end.
        assert_eq!(
            sha256_file(&file, 0, &sha256_hex, |_| {}).unwrap(),
            (sha256_hex(b"first line\nappended later\n"), 26)
        );
    }
}
