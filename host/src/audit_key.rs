//! A key for the audit log's chain, kept by the host outside the repository. With one, every
//! line and the head record carry an HMAC-SHA256 under it, so a log that someone without
//! the key rewrote (recomputing the plain sha256 chain and the head, which anyone who can
//! write the log can do) fails [`verify_keyed`].
//!
//! A signed line is the event's JSON object with `"mac"` as its last member, computed over
//! the exact text of the object without it; the head record is `COUNT HASH MAC`.

use std::io::{Read as _, Write as _};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::audit_log::{head_path, verify, VerifyError};
use crate::hex;

/// A 32-byte key.
pub struct AuditKey([u8; 32]);

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditKey(..)")
    }
}

fn parse_hex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

impl AuditKey {
    /// Reads the key in `path` (64 hex digits).
    ///
    /// # Errors
    /// When the file cannot be read or holds no key.
    pub fn load(path: &Path) -> std::io::Result<AuditKey> {
        let text = std::fs::read_to_string(path)?;
        parse_hex(&text).map(AuditKey).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} does not hold an audit key (64 hex digits)",
                    path.display()
                ),
            )
        })
    }

    /// Reads the key in `path`, or makes a new random one there (readable by its owner
    /// only) when the file does not exist.
    ///
    /// Two processes that start at once agree on one key: the new key is written whole to
    /// a file of its own beside `path` and linked to `path` only if no key is there yet; the
    /// process that finds one there reads it instead (never a half-written file).
    ///
    /// # Errors
    /// When the file cannot be read or created, or holds no key.
    pub fn load_or_create(path: &Path) -> std::io::Result<AuditKey> {
        match AuditKey::load(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            other => return other,
        }
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.{}.new", std::process::id(), hex(&key[..8])));
        let fresh = path.with_file_name(name);
        let written = opts.open(&fresh).and_then(|mut f| {
            writeln!(f, "{}", hex(&key))?;
            f.sync_all()
        });
        let placed = written.and_then(|()| std::fs::hard_link(&fresh, path));
        let _ = std::fs::remove_file(&fresh);
        match placed {
            Ok(()) => Ok(AuditKey(key)),
            // Another process placed its key first: that one is the key.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => AuditKey::load(path),
            Err(e) => Err(e),
        }
    }

    /// The key's bytes (for a host that hands the same key on, as the CLI does with its
    /// cursor key).
    pub fn bytes(&self) -> [u8; 32] {
        self.0
    }

    /// HMAC-SHA256 of `data` under the key, as lowercase hex.
    pub fn mac(&self, data: &[u8]) -> String {
        let mut block = [0u8; 64];
        block[..32].copy_from_slice(&self.0);
        let pad = |byte: u8| -> Vec<u8> { block.iter().map(|b| b ^ byte).collect() };
        let inner = Sha256::new()
            .chain_update(pad(0x36))
            .chain_update(data)
            .finalize();
        let outer = Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize();
        hex(&outer)
    }

    /// The line for the JSON object `body`: `body` with `"mac"` appended as its last member.
    pub fn sign_line(&self, body: &str) -> String {
        let mac = self.mac(body.as_bytes());
        match body.strip_suffix('}') {
            Some(open) if open.len() > 1 => format!("{open},\"mac\":\"{mac}\"}}"),
            Some(open) => format!("{open}\"mac\":\"{mac}\"}}"),
            None => body.to_string(),
        }
    }

    /// The mac of a head record `COUNT HASH`.
    pub fn head_mac(&self, count: u64, hash: &str) -> String {
        self.mac(format!("{count} {hash}").as_bytes())
    }
}

/// A signed line's body (the text the mac covers) and its mac.
fn split_line(line: &str) -> Option<(String, &str)> {
    const TAIL: usize = ",\"mac\":\"".len() + 64 + "\"}".len();
    let at = line.len().checked_sub(TAIL)?;
    let rest = line.get(at..)?;
    let mac = rest.strip_prefix(",\"mac\":\"")?.strip_suffix("\"}")?;
    Some((format!("{}}}", line.get(..at)?), mac))
}

/// Checks a log's chain as [`verify`] does, and every line's and the head's mac under
/// `key`; returns the number of lines.
///
/// # Errors
/// The first line whose mac is missing or wrong (a line rewritten, inserted or re-signed
/// without the key), a head record without a valid mac (the end cut off and the head
/// rewritten), or any error of [`verify`].
pub fn verify_keyed(log: &Path, key: &AuditKey) -> Result<u64, VerifyError> {
    let n = verify(log)?;
    let text = std::fs::read_to_string(log).map_err(|e| VerifyError {
        line: 0,
        message: format!("cannot read the log: {e}"),
    })?;
    let mut last = crate::audit_log::GENESIS.to_string();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let ok = split_line(line).is_some_and(|(body, mac)| key.mac(body.as_bytes()) == mac);
        if !ok {
            return Err(VerifyError {
                line: line_no,
                message:
                    "its mac does not match the key: the line was written or rewritten without it"
                        .into(),
            });
        }
        last = crate::audit_log::line_hash(line);
    }
    let head = std::fs::read_to_string(head_path(log)).unwrap_or_default();
    let fields: Vec<&str> = head.split_whitespace().collect();
    if fields.len() != 3 || fields[2] != key.head_mac(n, &last) {
        return Err(VerifyError {
            line: n,
            message: "the head record has no valid mac: the log's end was cut off and the head rewritten, or the head was lost".into(),
        });
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The construction against a value computed independently (Python's hmac module).
    #[test]
    fn mac_is_hmac_sha256() {
        let key = AuditKey([0x0b; 32]);
        assert_eq!(
            key.mac(b"Hi There"),
            "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7"
        );
    }

    #[test]
    fn signed_lines_split_back_into_body_and_mac() {
        let key = AuditKey([7; 32]);
        let body = r#"{"a":1,"b":"x"}"#;
        let line = key.sign_line(body);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["a"], 1);
        let (b, mac) = split_line(&line).unwrap();
        assert_eq!(b, body);
        assert_eq!(mac, key.mac(body.as_bytes()));
    }

    /// Threads that make the key at once all end with the one key on disk, many rounds
    /// (before, a loser read a half-written file or failed on the existing one).
    #[test]
    fn creators_at_once_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..50 {
            let path = dir.path().join(format!("key-{round}"));
            let keys: Vec<std::io::Result<AuditKey>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..4)
                    .map(|_| s.spawn(|| AuditKey::load_or_create(&path)))
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let on_disk = AuditKey::load(&path).unwrap().bytes();
            for k in keys {
                assert_eq!(k.unwrap().bytes(), on_disk, "round {round}");
            }
        }
        // Nothing is left beside the keys.
        let left = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(left, 50);
    }
}
