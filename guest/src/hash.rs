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

/// The sha256 and size of a file: read whole when it is at most 1 MiB, else streamed in
/// 1 MiB chunks.
///
/// # Errors
/// Any error of opening or reading the file.
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<(String, u64)> {
    use std::io::Read;
    const CHUNK: usize = 1 << 20;
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    if size < CHUNK as u64 {
        // One buffer the size of the file (one more byte to see growth), no 1 MiB one.
        let mut buf = Vec::with_capacity(size as usize + 1);
        (&mut f).take(CHUNK as u64).read_to_end(&mut buf)?;
        if buf.len() < CHUNK {
            return Ok((sha256_hex(&buf), buf.len() as u64));
        }
        // It grew past the chunk size meanwhile: hash what was read and go on streaming.
        return stream(f, Sha256::new_with_prefix(&buf), buf.len() as u64);
    }
    stream(f, Sha256::new(), 0)
}

fn stream(mut f: std::fs::File, mut h: Sha256, mut total: u64) -> std::io::Result<(String, u64)> {
    use std::io::Read;
    let mut buf = vec![0u8; 1 << 20];
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
            let p = dir.path().join(format!("f{size}"));
            std::fs::write(&p, &data).unwrap();
            assert_eq!(
                sha256_file(&p).unwrap(),
                (sha256_hex(&data), size as u64),
                "{size}"
            );
        }
    }
}
