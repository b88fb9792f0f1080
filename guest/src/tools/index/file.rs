//! The index on disk: `<binding>` in the index folder (`index/` in the host's state
//! directory, or a folder the host mounts for the sessions of a repository to share; see
//! [`crate::tools::session::Session::index_dir`]), written whole to a
//! temporary name and renamed over the old one, so that a reader (another process serving
//! the same repository) sees the old index or the new one, never a torn one, and a crash
//! leaves the old one usable. Two writers race only to replace each other's whole file.
//!
//! Layout (integers little-endian):
//!
//! ```text
//! "ftindex" FORMAT:u8  binding:64 hex bytes  count:u64
//! count × record:
//!     path_len:u32 path  size:u64 mtime:u64 ctime:u64 inode:u64 taken:u64  what:u8
//!     what = 0 (text): words:u32, words × u64 (the trigram filter)
//!     what = 1 binary, 2 too large, 3 secret
//! checksum: 32 bytes, the sha256 of the sha256s of each 32 MiB of everything before it
//! ```
//!
//! An unknown time or inode is `u64::MAX`. Decoding checks the checksum first, then every
//! length against what is left; a file that fails any check, or is bound to another
//! repository, policy or format, is not used (the next save replaces it). Nor is anything
//! but a plain file no larger than an index under the policy's `max_index_bytes` can be:
//! it is not even read.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Identity, Index, Rec, What};
use crate::rules::services::Services;
use crate::text::trigram::Filter;

/// The format's version: part of the binding and of the header.
pub const FORMAT: u8 = 1;

const MAGIC: &[u8; 7] = b"ftindex";
const CHUNK: usize = 32 << 20;

/// Whether the host announces a build of the index under way in the index folder
/// `index_dir` ([`file_tools_contract::INDEX_BUILDING`]): a plain file touched within the
/// last [`file_tools_contract::INDEX_BUILDING_FRESH_SECS`].
pub fn building_elsewhere(index_dir: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(index_dir.join(file_tools_contract::INDEX_BUILDING))
    else {
        return false;
    };
    let fresh = std::time::Duration::from_secs(file_tools_contract::INDEX_BUILDING_FRESH_SECS);
    meta.is_file()
        && meta
            .modified()
            .ok()
            .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age < fresh)
}

/// Where the index bound as `binding` lives in the index folder `index_dir`.
pub fn path_in(index_dir: &Path, binding: &str) -> PathBuf {
    index_dir.join(binding)
}

/// The file's checksum, fed its body in pieces of any size: the sha256 of the hex sha256s
/// of each [`CHUNK`] of the body (hashed by the host where it offers).
#[derive(Default)]
struct Checksum {
    /// The part of the current chunk fed so far, when it came in smaller pieces.
    pending: Vec<u8>,
    /// The hex digests of the chunks hashed so far.
    parts: Vec<u8>,
}

impl Checksum {
    fn feed(&mut self, mut data: &[u8], services: &dyn Services) {
        while !data.is_empty() {
            if self.pending.is_empty() && data.len() >= CHUNK {
                // A whole chunk at hand: hashed where it lies.
                let (chunk, rest) = data.split_at(CHUNK);
                self.parts
                    .extend_from_slice(services.sha256_hex(chunk).as_bytes());
                data = rest;
                continue;
            }
            let (now, rest) = data.split_at((CHUNK - self.pending.len()).min(data.len()));
            self.pending.extend_from_slice(now);
            if self.pending.len() == CHUNK {
                self.parts
                    .extend_from_slice(services.sha256_hex(&self.pending).as_bytes());
                self.pending.clear();
            }
            data = rest;
        }
    }

    fn finish(mut self, services: &dyn Services) -> [u8; 32] {
        if !self.pending.is_empty() {
            self.parts
                .extend_from_slice(services.sha256_hex(&self.pending).as_bytes());
        }
        crate::fs::hash::sha256(&self.parts)
    }
}

fn opt(v: Option<u64>) -> u64 {
    v.unwrap_or(u64::MAX)
}

/// The bytes of `ix`.
pub fn encode(ix: &Index, services: &dyn Services) -> Vec<u8> {
    let mut out = Vec::with_capacity(ix.weight() as usize + 128);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.extend_from_slice(ix.bound_to().as_bytes());
    out.extend_from_slice(&(ix.len() as u64).to_le_bytes());
    let mut records: Vec<(&str, &Rec)> = ix.records().collect();
    records.sort_unstable_by_key(|(p, _)| *p);
    for (p, r) in records {
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        out.extend_from_slice(p.as_bytes());
        for v in [
            r.id.size,
            opt(r.id.mtime),
            opt(r.id.ctime),
            opt(r.id.inode),
            r.taken,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        match &r.what {
            What::Text(f) => {
                out.push(0);
                out.extend_from_slice(&(f.words().len() as u32).to_le_bytes());
                for w in f.words() {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
            What::Binary => out.push(1),
            What::TooLarge => out.push(2),
            What::Secret => out.push(3),
        }
    }
    let mut sum = Checksum::default();
    sum.feed(&out, services);
    let sum = sum.finish(services);
    out.extend_from_slice(&sum);
    out
}

/// Reads an index file front to back in blocks, feeding its body to the [`Checksum`] as
/// each block comes in and refusing any length past the body's end, so that what is held
/// at a time is one block (or one field, when a field is larger) and one checksum chunk.
struct Reader<'a, R> {
    src: R,
    /// Bytes of the body not read from `src` yet.
    unread: u64,
    /// Bytes of the body read: `buf[pos..]` are not taken yet.
    buf: Vec<u8>,
    pos: usize,
    /// How much to read at a time ([`BLOCK`] but in tests).
    block: u64,
    sum: Checksum,
    services: &'a dyn Services,
}

/// How much of the body a [`Reader`] reads at a time.
const BLOCK: u64 = 1 << 20;

impl<'a, R: Read> Reader<'a, R> {
    fn new(src: R, body_len: u64, block: u64, services: &'a dyn Services) -> Self {
        Reader {
            src,
            unread: body_len,
            buf: Vec::new(),
            pos: 0,
            block,
            sum: Checksum::default(),
            services,
        }
    }

    /// The next `n` bytes of the body.
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let have = self.buf.len() - self.pos;
        if have < n {
            let missing = (n - have) as u64;
            if missing > self.unread {
                return None;
            }
            // What is left moves to the front; then a block, or what the field lacks.
            self.buf.drain(..self.pos);
            self.pos = 0;
            let want = missing.max(self.block).min(self.unread);
            let start = self.buf.len();
            self.buf
                .try_reserve_exact(usize::try_from(want).ok()?)
                .ok()?;
            let got = self.src.by_ref().take(want).read_to_end(&mut self.buf);
            if got.ok()? as u64 != want {
                return None;
            }
            self.unread -= want;
            self.sum.feed(&self.buf[start..], self.services);
        }
        let field = self.buf.get(self.pos..self.pos + n)?;
        self.pos += n;
        Some(field)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// The most records the rest of the body can hold: each takes at least a length, five
    /// numbers and a tag.
    fn most_records(&self) -> u64 {
        (self.unread + (self.buf.len() - self.pos) as u64) / (4 + 5 * 8 + 1)
    }

    /// Whether the body was read to its end and the checksum after it is its own.
    fn whole(mut self) -> Option<bool> {
        if self.unread != 0 || self.pos != self.buf.len() {
            return Some(false);
        }
        let mut sum = [0u8; 32];
        self.src.read_exact(&mut sum).ok()?;
        Some(self.sum.finish(self.services) == sum)
    }
}

fn known(v: u64) -> Option<u64> {
    (v != u64::MAX).then_some(v)
}

/// The index `data` holds, when it is whole, bound as `binding` and of this format; read
/// `block` bytes at a time.
#[cfg(test)]
pub fn decode_in_blocks(
    data: &[u8],
    binding: &str,
    services: &dyn Services,
    block: u64,
) -> Option<Index> {
    let body_len = data.len().checked_sub(32)? as u64;
    decode_from(data, body_len, binding, services, block)
}

/// [`decode_in_blocks`] as the index is read from its file.
#[cfg(test)]
pub fn decode(data: &[u8], binding: &str, services: &dyn Services) -> Option<Index> {
    decode_in_blocks(data, binding, services, BLOCK)
}

/// The index `src` holds (a body of `body_len` bytes, then its checksum), when it is
/// whole, bound as `binding` and of this format. Every record is decoded as it is read;
/// the index is kept only when the checksum at the end proves the body, so that an
/// altered file is never used (each length was checked against what was left, which
/// bounds what a forged one can make this allocate).
fn decode_from(
    src: impl Read,
    body_len: u64,
    binding: &str,
    services: &dyn Services,
    block: u64,
) -> Option<Index> {
    let mut r = Reader::new(src, body_len, block, services);
    if r.take(MAGIC.len())? != MAGIC || r.u8()? != FORMAT {
        return None;
    }
    if r.take(binding.len())? != binding.as_bytes() {
        return None;
    }
    let count = r.u64()?;
    let mut ix = Index::new(binding.to_string());
    // A count the body cannot hold is damage; room for the others is asked for, not
    // taken: a count altered within the body's bound must not abort the component.
    if count > r.most_records() {
        return None;
    }
    ix.files.try_reserve(usize::try_from(count).ok()?)?;
    let mut path = String::new();
    for _ in 0..count {
        let len = r.u32()? as usize;
        path.clear();
        path.push_str(std::str::from_utf8(r.take(len)?).ok()?);
        let id = Identity {
            size: r.u64()?,
            mtime: known(r.u64()?),
            ctime: known(r.u64()?),
            inode: known(r.u64()?),
        };
        let taken = r.u64()?;
        let what = match r.u8()? {
            0 => {
                let n = r.u32()? as usize;
                let bytes = r.take(n.checked_mul(8)?)?;
                let words = bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect();
                What::Text(Filter::from_words(words))
            }
            1 => What::Binary,
            2 => What::TooLarge,
            3 => What::Secret,
            _ => return None,
        };
        let rec = Rec {
            id,
            taken,
            what,
            generation: 0,
        };
        ix.put(&path, rec);
    }
    // Records put as the file gave them count as no change (the index is as saved).
    r.whole()?.then_some(ix)
}

/// Bytes of the file beyond its records' weights: the header and the checksum (a record
/// takes fewer bytes on disk than its weight).
const OVERHEAD: u64 = (MAGIC.len() + 1 + 64 + 8 + 32) as u64;

/// The index stored for `binding` in `index_dir`, when there is a usable one that an index
/// kept under `max_weight` could be: anything else there (not a plain file, such as a FIFO
/// that would block the read; a file larger than such an index; records over the bound)
/// is not used, and read no further than the bound. The file is read once, in pieces:
/// what is held at a time is the index decoded so far and one checksum chunk.
pub fn load(
    index_dir: &Path,
    binding: &str,
    services: &dyn Services,
    max_weight: u64,
) -> Option<Index> {
    let path = path_in(index_dir, binding);
    let max_len = max_weight.saturating_add(OVERHEAD);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > max_len {
        return None;
    }
    let file = std::fs::File::open(&path).ok()?;
    // The length as opened (the file looked at above may have been replaced since).
    let len = file.metadata().ok()?.len();
    if len > max_len {
        return None;
    }
    decode_from(
        file.take(len),
        len.checked_sub(32)?,
        binding,
        services,
        BLOCK,
    )
    .filter(|ix| ix.weight() <= max_weight)
}

/// Stores `ix` in `index_dir`, replacing the one there; best effort (the index is only
/// ever a shortcut: a failed save costs the next process reads, never answers).
pub fn save(ix: &mut Index, index_dir: &Path, services: &dyn Services) {
    let data = encode(ix, services);
    if crate::tools::baseline::write_atomic(&path_in(index_dir, ix.bound_to()), &data).is_ok() {
        ix.dirty = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::services::NoServices;

    /// Fed whole or in pieces that straddle the chunk boundaries, the checksum is the
    /// format's: the sha256 of the hex sha256s of each chunk of the body.
    #[test]
    fn the_checksum_is_the_same_however_the_body_comes_in() {
        for len in [0, 5, CHUNK - 1, CHUNK, 2 * CHUNK + 1] {
            let body: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut parts = Vec::new();
            for chunk in body.chunks(CHUNK) {
                parts.extend_from_slice(crate::fs::hash::sha256_hex(chunk).as_bytes());
            }
            let want = crate::fs::hash::sha256(&parts);
            let mut whole = Checksum::default();
            whole.feed(&body, &NoServices);
            assert_eq!(whole.finish(&NoServices), want, "whole, {len} bytes");
            let mut pieces = Checksum::default();
            let mut rest = &body[..];
            let mut step = 1;
            while !rest.is_empty() {
                let (piece, after) = rest.split_at(step.min(rest.len()));
                pieces.feed(piece, &NoServices);
                rest = after;
                step = step * 3 + 1_000_003;
            }
            assert_eq!(pieces.finish(&NoServices), want, "in pieces, {len} bytes");
        }
    }
}
