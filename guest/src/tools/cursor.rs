//! Continuation cursors: a result cut short by its page cap (`max_entries`, `max_results`,
//! `max_matches`, `max_search_files`) carries `next_cursor`, and the same call with
//! `cursor` set to it continues exactly after the last item returned.
//!
//! A cursor is opaque to the agent: `ft1.<payload hex>.<mac hex>`, where the payload names
//! the tool, a hash of the call's arguments (all but the cursor and the page size, which
//! may change between pages), the repository root's identity, how many items came before
//! and the last of them, and the mac is HMAC-SHA256 under a key the host keeps
//! (`FILE_TOOLS_TOKEN_KEY`; a random key per instance when the host gives none). A cursor
//! that was altered, forged without the key, or given to another tool, other arguments or
//! another repository is refused with `INVALID_INPUT` and reason `cursor`; one whose last
//! item is no longer where it was (the tree changed between pages) with reason
//! `tree_changed`, so that pages are never silently mixed.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::api::Stop;
use crate::error::{ToolError, ToolResult};
use crate::fs::hash::hex;
use crate::fs::port::FileId;

/// The key that signs cursors.
#[derive(Clone)]
pub struct CursorKey([u8; 32]);

impl std::fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorKey(..)")
    }
}

impl CursorKey {
    pub fn new(bytes: [u8; 32]) -> Self {
        CursorKey(bytes)
    }

    /// A key from 64 hex digits.
    ///
    /// # Errors
    /// When `text` is not 64 hex digits.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        crate::fs::hash::unhex32(text.trim())
            .map(CursorKey)
            .ok_or_else(|| "a cursor key is 64 hex digits".into())
    }

    /// HMAC-SHA256 of `msg` (RFC 2104 over SHA-256, whose block is 64 bytes).
    fn mac(&self, msg: &[u8]) -> [u8; 32] {
        let mut block = [0u8; 64];
        block[..32].copy_from_slice(&self.0);
        let pad = |b: u8| block.map(|k| k ^ b);
        let inner = Sha256::new()
            .chain_update(pad(0x36))
            .chain_update(msg)
            .finalize();
        Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize()
            .into()
    }
}

/// Where a page ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// Items returned before the next page (all pages so far).
    pub count: u64,
    /// The last of them (a path, or `path:line` for search matches).
    pub last: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload<T> {
    /// The tool.
    t: String,
    /// Hash of the arguments that must not change between pages.
    a: String,
    /// The repository root's identity.
    r: (u64, u64),
    #[serde(flatten)]
    at: T,
}

/// What binds a cursor to one call: the tool, its arguments without `cursor` and the
/// page-size argument, and the root.
#[derive(Debug)]
pub struct Binding {
    tool: &'static str,
    args: String,
    root: (u64, u64),
}

impl Binding {
    /// The binding of `args` (the call's arguments as JSON), leaving out `page_arg`, under
    /// the policy whose [`crate::rules::policy::Policy::fingerprint`] is `policy`.
    pub fn new(
        tool: &'static str,
        args: &impl Serialize,
        page_arg: &str,
        root: FileId,
        policy: &str,
    ) -> Self {
        let mut v = serde_json::to_value(args).unwrap_or(Value::Null);
        if let Some(obj) = v.as_object_mut() {
            obj.remove("cursor");
            obj.remove(page_arg);
        }
        // serde_json's maps are ordered by key, so equal arguments give equal text.
        let digest = Sha256::new()
            .chain_update(v.to_string().as_bytes())
            .chain_update([0u8])
            .chain_update(policy.as_bytes())
            .finalize();
        Binding {
            tool,
            args: hex(&digest[..16]),
            root: (root.0, root.1),
        }
    }

    /// The cursor for the page after `at`.
    pub fn encode(&self, key: &CursorKey, at: Position) -> String {
        self.encode_with(key, at)
    }

    /// A signed token carrying `at` (any record), bound like a cursor.
    pub fn encode_with<T: Serialize>(&self, key: &CursorKey, at: T) -> String {
        let payload = Payload {
            t: self.tool.to_string(),
            a: self.args.clone(),
            r: self.root,
            at,
        };
        let body = hex(serde_json::to_string(&payload)
            .unwrap_or_default()
            .as_bytes());
        let mac = key.mac(body.as_bytes());
        format!("ft1.{body}.{}", hex(&mac[..16]))
    }

    /// Where `cursor` says the previous page ended.
    ///
    /// # Errors
    /// `INVALID_INPUT` (reason `cursor`) for a cursor that is malformed, not signed by
    /// `key`, or made for another tool, other arguments or another repository.
    pub fn decode(&self, key: &CursorKey, cursor: &str) -> ToolResult<Position> {
        self.decode_with(
            key,
            cursor,
            "cursor",
            "call again without a cursor to start from the beginning",
        )
    }

    /// What a token made by [`Binding::encode_with`] carries. Refusals are `INVALID_INPUT`
    /// with reason `what` (the argument's name) and `advice` after the cause.
    ///
    /// # Errors
    /// As [`Binding::decode`].
    pub fn decode_with<T: serde::de::DeserializeOwned>(
        &self,
        key: &CursorKey,
        cursor: &str,
        what: &str,
        advice: &str,
    ) -> ToolResult<T> {
        let bad = |why: &str| {
            let mut e = ToolError::invalid(format!("the {what} {why}; {advice}"));
            e.reason = Some(what.into());
            e
        };
        let mut parts = cursor.split('.');
        let (Some("ft1"), Some(body), Some(mac), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("is not one this tool gave"));
        };
        let want = hex(&key.mac(body.as_bytes())[..16]);
        // Compared without an early exit, so timing says nothing of the right mac.
        let same = want.len() == mac.len()
            && want
                .bytes()
                .zip(mac.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if !same {
            return Err(bad("was altered or not made by this host"));
        }
        let bytes = unhex(body).ok_or_else(|| bad("is not one this tool gave"))?;
        let p: Payload<T> =
            serde_json::from_slice(&bytes).map_err(|_| bad("is not one this tool gave"))?;
        if p.t != self.tool {
            return Err(bad(&format!("belongs to {}, not {}", p.t, self.tool)));
        }
        if p.r != self.root {
            return Err(bad("belongs to another repository"));
        }
        if p.a != self.args {
            return Err(bad(
                "was made for other arguments or another policy (only the page size may change between pages)",
            ));
        }
        Ok(p.at)
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The error for a cursor whose last item is not where it was. It names no path: the
/// item is one the cursor's payload holds, not one this call has shown.
pub fn tree_changed() -> ToolError {
    let mut e = ToolError::invalid(
        "the tree changed since the previous page (its last item is no longer in the same place); call again without a cursor",
    );
    e.reason = Some("tree_changed".into());
    e
}

/// Skips the items an earlier page returned, checking that the last of them is still
/// where the cursor says.
#[derive(Debug)]
pub struct Skipper {
    left: u64,
    last: String,
    matched: bool,
}

impl Skipper {
    pub fn new(at: Option<Position>) -> Self {
        match at {
            Some(p) => Skipper {
                left: p.count,
                last: p.last,
                matched: false,
            },
            None => Skipper {
                left: 0,
                last: String::new(),
                matched: true,
            },
        }
    }

    /// True when `item` belongs to an earlier page (and is to be passed over).
    pub fn skip(&mut self, item: &str) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        if self.left == 0 {
            self.matched = item == self.last;
        }
        true
    }

    /// Items still to pass over.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Fails unless every earlier item was passed over and the last was the one expected.
    ///
    /// # Errors
    /// `INVALID_INPUT`, reason `tree_changed`.
    pub fn finish(&self) -> ToolResult<()> {
        if self.left > 0 || !self.matched {
            return Err(tree_changed());
        }
        Ok(())
    }
}

/// One page of a paged call: where it starts, and the cursor for the page after it.
#[derive(Debug)]
pub struct Page<'k> {
    key: &'k CursorKey,
    binding: Binding,
    at: Option<Position>,
}

impl<'k> Page<'k> {
    /// The page `cursor` asks for (the first page without one), for a call of `tool` with
    /// `args` whose page size is the argument `page_arg`, in the repository whose root
    /// has the identity `root`, under the policy with the fingerprint `policy`.
    ///
    /// # Errors
    /// As [`Binding::decode`].
    pub fn open(
        key: &'k CursorKey,
        (root, policy): (FileId, &str),
        tool: &'static str,
        args: &impl Serialize,
        page_arg: &str,
        cursor: Option<&str>,
    ) -> ToolResult<Self> {
        let binding = Binding::new(tool, args, page_arg, root, policy);
        let at = cursor.map(|c| binding.decode(key, c)).transpose()?;
        Ok(Page { key, binding, at })
    }

    /// What passes over the earlier pages' items.
    pub fn skipper(&self) -> Skipper {
        Skipper::new(self.at.clone())
    }

    /// Items the earlier pages returned.
    pub fn before(&self) -> u64 {
        self.at.as_ref().map_or(0, |p| p.count)
    }

    /// Why the page stopped: its own cap, else the walk's budget (`walk_stop`), else
    /// nothing; every earlier item must have been passed over, unless the walk's budget
    /// ran out first.
    ///
    /// # Errors
    /// `INVALID_INPUT`, reason `tree_changed`.
    pub fn finish(
        &self,
        skipper: &Skipper,
        stopped_by: Option<Stop>,
        walk_stop: Option<Stop>,
    ) -> ToolResult<Option<Stop>> {
        match (stopped_by, walk_stop) {
            (Some(stop), _) => skipper.finish().map(|()| Some(stop)),
            (None, Some(stop)) => Ok(Some(stop)),
            (None, None) => skipper.finish().map(|()| None),
        }
    }

    /// The cursor for the next page, when the page stopped at `cap` after returning
    /// `returned` items, the last of them `last`.
    pub fn next(
        &self,
        stopped_by: &Option<Stop>,
        cap: &str,
        returned: usize,
        last: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        if stopped_by.as_ref()?.cap != cap {
            return None;
        }
        let at = Position {
            count: self.before() + returned as u64,
            last: last()?,
        };
        Some(self.binding.encode(self.key, at))
    }

    /// The summary's words for a page after the first.
    pub fn note(&self) -> String {
        match &self.at {
            Some(p) => format!("; this page follows {} earlier", p.count),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn binding(tool: &'static str, args: Value) -> Binding {
        Binding::new(tool, &args, "max_entries", FileId(1, 2), "{}")
    }

    #[test]
    fn a_cursor_round_trips_and_only_the_page_size_may_change() {
        let key = CursorKey::new([7; 32]);
        let b = binding(
            "list_dir",
            serde_json::json!({"path": "src", "max_entries": 5}),
        );
        let at = Position {
            count: 5,
            last: "src/e.rs".into(),
        };
        let c = b.encode(&key, at.clone());
        assert_eq!(b.decode(&key, &c).unwrap(), at);
        let bigger = binding(
            "list_dir",
            serde_json::json!({"path": "src", "max_entries": 50, "cursor": c}),
        );
        assert_eq!(bigger.decode(&key, &c).unwrap(), at);
        // Refusals, each with its reason.
        let other_args = binding("list_dir", serde_json::json!({"path": "lib"}));
        let other_tool = binding("find_files", serde_json::json!({"path": "src"}));
        let other_root = Binding::new(
            "list_dir",
            &serde_json::json!({"path": "src"}),
            "max_entries",
            FileId(1, 3),
            "{}",
        );
        let other_policy = Binding::new(
            "list_dir",
            &serde_json::json!({"path": "src"}),
            "max_entries",
            FileId(1, 2),
            "{\"allow_move\":true}",
        );
        for (b2, why) in [
            (other_args, "other arguments"),
            (other_tool, "belongs to list_dir"),
            (other_root, "another repository"),
            (other_policy, "another policy"),
        ] {
            let e = b2.decode(&key, &c).unwrap_err();
            assert_eq!(e.reason.as_deref(), Some("cursor"));
            assert!(e.message.contains(why), "{}", e.message);
        }
        let e = b.decode(&CursorKey::new([8; 32]), &c).unwrap_err();
        assert!(e.message.contains("altered or not made by this host"));
    }

    #[test]
    fn an_altered_cursor_is_refused() {
        let key = CursorKey::new([7; 32]);
        let b = binding("list_dir", serde_json::json!({}));
        let c = b.encode(
            &key,
            Position {
                count: 2,
                last: "b".into(),
            },
        );
        // Change the count in the payload and keep the old mac: refused.
        let parts: Vec<&str> = c.split('.').collect();
        let body = String::from_utf8(unhex(parts[1]).unwrap())
            .unwrap()
            .replace("\"count\":2", "\"count\":0");
        let forged = format!("ft1.{}.{}", hex(body.as_bytes()), parts[2]);
        assert_eq!(
            b.decode(&key, &forged).unwrap_err().reason.as_deref(),
            Some("cursor")
        );
        for junk in [
            "",
            "ft1",
            "ft1..",
            "ft2.00.00",
            "ft1.zz.00",
            &format!("{c}.x"),
        ] {
            assert!(b.decode(&key, junk).is_err(), "{junk:?}");
        }
    }

    #[test]
    fn the_skipper_notices_a_changed_tree() {
        let at = |n, l: &str| {
            Some(Position {
                count: n,
                last: l.into(),
            })
        };
        let mut s = Skipper::new(at(2, "b"));
        assert!(s.skip("a") && s.skip("b") && !s.skip("c"));
        assert!(s.finish().is_ok());
        let mut s = Skipper::new(at(2, "b"));
        assert!(s.skip("a") && s.skip("x"));
        assert_eq!(
            s.finish().unwrap_err().reason.as_deref(),
            Some("tree_changed")
        );
        let mut s = Skipper::new(at(3, "c"));
        s.skip("a");
        assert_eq!(
            s.finish().unwrap_err().reason.as_deref(),
            Some("tree_changed")
        );
        assert!(Skipper::new(None).finish().is_ok());
    }
}
