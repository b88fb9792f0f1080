//! sha256 in lowercase hex, the form every tool reports and accepts.

use sha2::{Digest, Sha256};

/// Buffers at least this large are hashed by the host when it offers to (below it, the
/// call costs more than it saves).
const HOST_HASH_MIN: usize = 16 * 1024;
/// ... and at most this large (a host call's arguments are bounded).
const HOST_HASH_MAX: usize = 64 << 20;

/// The sha256 of `data` as 64 lowercase hex digits.
pub fn sha256_hex(data: &[u8]) -> String {
    if (HOST_HASH_MIN..=HOST_HASH_MAX).contains(&data.len()) {
        if let Some(d) = crate::hostfs::sha256(data) {
            return hex(&d);
        }
    }
    hex(&Sha256::digest(data))
}

/// The sha256 and size of a file, streamed in 1 MiB chunks.
///
/// # Errors
/// Any error of opening or reading the file.
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<(String, u64)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        total += n as u64;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_sha256(&sha256_hex(b"")));
        assert!(!is_sha256("abc"));
    }
}
