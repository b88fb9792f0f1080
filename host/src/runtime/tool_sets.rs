//! What a session needs from the component's `describe` under a policy: which tools there
//! are, and which of them change files. `describe` builds every tool's JSON Schema in the
//! component (about 4 ms, most of a CLI call, which starts a new runtime every time), so
//! its answer is kept: in memory for the runtime's sessions, and in the cache directory
//! beside the compiled artifact for the next process. A kept file is named by the
//! component's sha256 and the policy's exact text, and it is read only as the artifact is
//! (see `open_trusted`): a file of the same directory as the code the process maps, and as
//! much to be trusted.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The tool sets of one policy.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ToolSets {
    /// The tools that change files.
    pub(crate) mutating: HashSet<String>,
    /// Every tool's name.
    pub(crate) known: HashSet<String>,
}

/// The largest kept file read back (a few hundred bytes in practice).
const MAX_BYTES: u64 = 64 << 10;

impl ToolSets {
    /// The sets of a `describe` answer: every tool's name, and those whose annotations say
    /// they change files.
    pub(crate) fn from_describe(described: &Value) -> ToolSets {
        let tools = described.as_array().into_iter().flatten();
        let name = |t: &Value| t["name"].as_str().map(str::to_string);
        ToolSets {
            mutating: tools
                .clone()
                .filter(|t| t["annotations"]["readOnlyHint"] == Value::Bool(false))
                .filter_map(name)
                .collect(),
            known: tools.filter_map(name).collect(),
        }
    }

    /// The kept form: the key, and both lists sorted.
    fn to_json(&self, key: &str) -> Vec<u8> {
        fn sorted(s: &HashSet<String>) -> Vec<&String> {
            let mut v: Vec<&String> = s.iter().collect();
            v.sort();
            v
        }
        json!({ "key": key, "known": sorted(&self.known), "mutating": sorted(&self.mutating) })
            .to_string()
            .into_bytes()
    }

    /// The sets of a kept file made for `key`; `None` for anything but the form
    /// [`ToolSets::to_json`] writes for that key (another key, names that are not short
    /// plain identifiers, a changing tool not among the tools).
    fn from_json(bytes: &[u8], key: &str) -> Option<ToolSets> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        if v.get("key")?.as_str()? != key {
            return None;
        }
        let names = |key: &str| -> Option<HashSet<String>> {
            v.get(key)?
                .as_array()?
                .iter()
                .map(|n| {
                    let n = n.as_str()?;
                    let plain = !n.is_empty()
                        && n.len() <= 64
                        && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
                    plain.then(|| n.to_string())
                })
                .collect()
        };
        let sets = ToolSets {
            known: names("known")?,
            mutating: names("mutating")?,
        };
        (!sets.known.is_empty() && sets.mutating.is_subset(&sets.known)).then_some(sets)
    }
}

/// What names the sets of the component of sha256 `wasm` under the policy `policy_json`:
/// the sha256 of both, in hex. The file's name holds part of it, its content all of it, so
/// that a kept file moved to another policy's name is not believed there.
pub(crate) fn key(wasm: &[u8; 32], policy_json: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"file-tools tool sets 1\0");
    h.update(wasm);
    h.update(policy_json.as_bytes());
    let key: [u8; 32] = h.finalize().into();
    crate::hex(&key)
}

/// The kept file's name for `key`.
pub(crate) fn file_name(key: &str) -> String {
    format!("file-tools-tools-{}.json", key.get(..24).unwrap_or(key))
}

/// The sets kept at `path` for `key`, when a trusted file holds them.
pub(crate) fn load(path: &Path, key: &str) -> Option<ToolSets> {
    let file = super::open_trusted(path)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&file, MAX_BYTES + 1), &mut bytes).ok()?;
    if bytes.len() as u64 > MAX_BYTES {
        return None;
    }
    ToolSets::from_json(&bytes, key)
}

/// Keeps `sets` at `path` (a cache that cannot be written only costs the next process its
/// `describe`).
pub(crate) fn store(path: &Path, key: &str, sets: &ToolSets) {
    let _ = super::write_private(path, &sets.to_json(key));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sets(known: &[&str], mutating: &[&str]) -> ToolSets {
        ToolSets {
            known: known.iter().map(|s| s.to_string()).collect(),
            mutating: mutating.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_kept_form_round_trips_and_anything_else_is_refused() {
        let s = sets(&["read_file", "write_file"], &["write_file"]);
        assert_eq!(ToolSets::from_json(&s.to_json("k1"), "k1"), Some(s));
        // Made for another key (a file moved to another policy's name): not believed.
        let other = sets(&["read_file"], &[]);
        assert_eq!(ToolSets::from_json(&other.to_json("k2"), "k1"), None);
        for junk in [
            &b""[..],
            b"[]",
            br#"{"known": ["read_file"], "mutating": []}"#,
            br#"{"key": "k1", "known": ["read_file"]}"#,
            br#"{"key": "k1", "known": [], "mutating": []}"#,
            br#"{"key": "k1", "known": ["read_file"], "mutating": ["write_file"]}"#,
            br#"{"key": "k1", "known": ["Read File"], "mutating": []}"#,
            br#"{"key": "k1", "known": [7], "mutating": []}"#,
        ] {
            let got = ToolSets::from_json(junk, "k1");
            assert_eq!(got, None, "{}", String::from_utf8_lossy(junk));
        }
        let described = json!([
            {"name": "read_file", "annotations": {"readOnlyHint": true}},
            {"name": "edit_file", "annotations": {"readOnlyHint": false}},
            {"name": "find_files"},
        ]);
        assert_eq!(
            ToolSets::from_describe(&described),
            sets(&["read_file", "edit_file", "find_files"], &["edit_file"])
        );
    }

    /// A runtime keeps what `describe` said in its cache directory, and a new runtime with
    /// that directory reads it instead of asking again, but only from a file no other
    /// user may have written. Seen through the call records of an observer, which name a
    /// tool the sets do not know `unknown`.
    #[test]
    fn tool_sets_are_kept_for_the_next_runtime_and_read_only_when_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (cache, repo) = (dir.path().join("cache"), dir.path().join("repo"));
        std::fs::create_dir(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        let seen_in_new_runtime = || {
            seen_by_observer(
                &crate::Runtime::builder().cache_dir(&cache).build().unwrap(),
                &repo,
            )
        };
        let kept = || -> Vec<std::path::PathBuf> {
            std::fs::read_dir(&cache)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().contains("file-tools-tools-"))
                .collect()
        };
        // Asked, and kept.
        assert_eq!(seen_in_new_runtime(), "file_info");
        let [file] = &kept()[..] else {
            panic!("{:?}", kept())
        };
        let written: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let key = written["key"].as_str().unwrap().to_string();
        let sets = load(file, &key).unwrap();
        // (A session is read-only unless made writable: no tool that changes files.)
        assert!(
            sets.known.contains("file_info") && sets.mutating.is_empty(),
            "{sets:?}"
        );
        // Read back instead of asked: a kept file that knows no file_info is believed.
        let planted = json!({"key": key, "known": ["read_file"], "mutating": []});
        std::fs::write(file, planted.to_string()).unwrap();
        assert_eq!(seen_in_new_runtime(), "unknown");
        // The same sets made for another key (another policy's file, moved here): asked.
        let moved = json!({"key": "0".repeat(64), "known": ["read_file"], "mutating": []});
        std::fs::write(file, moved.to_string()).unwrap();
        assert_eq!(seen_in_new_runtime(), "file_info");
        std::fs::write(file, planted.to_string()).unwrap();
        assert_eq!(seen_in_new_runtime(), "unknown");
        // Not from a file another user could have written: asked again (and kept anew).
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(seen_in_new_runtime(), "file_info");
        assert!(load(file, &key).unwrap().known.contains("file_info"));
    }

    /// Writes `text` at `path` as a file the cache's check trusts (`0644`, whatever the
    /// umask), so that a refusal can only come from where it lies.
    fn plant(path: &std::path::Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(crate::runtime::open_trusted(path).is_some());
    }

    /// The tool sets file a first runtime over `cache` keeps after asking (a session over
    /// `repo`), and a plant for its name: its key, sets that know no `file_info`.
    fn kept_and_a_plant(
        cache: &std::path::Path,
        repo: &std::path::Path,
    ) -> (std::path::PathBuf, Value) {
        let rt = crate::Runtime::builder().cache_dir(cache).build().unwrap();
        assert_eq!(seen_by_observer(&rt, repo), "file_info");
        let file = std::fs::read_dir(cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains("file-tools-tools-"))
            .unwrap();
        let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let planted = json!({"key": written["key"], "known": ["read_file"], "mutating": []});
        (file, planted)
    }

    /// The tool name an observer saw for one `file_info` call (of `a.txt`) in a new
    /// session of `rt` over `repo`: `unknown` when the tool sets the session holds do not
    /// know `file_info`.
    fn seen_by_observer(rt: &crate::Runtime, repo: &std::path::Path) -> String {
        use std::sync::{Arc, Mutex};
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let mut s = crate::Session::builder(rt)
            .repo(repo)
            .observer(Arc::new(move |r: &crate::CallRecord| {
                log.lock().unwrap().push(r.tool.clone())
            }))
            .build()
            .unwrap();
        s.call("file_info", r#"{"path":"a.txt"}"#).unwrap();
        let tool = seen.lock().unwrap().concat();
        tool
    }

    /// A runtime resolves its cache directory once, when it is built: a link on the way
    /// there, inside a repository, swapped afterwards for a directory of the repository
    /// holding planted tool sets, redirects none of its later sessions (which are not
    /// refused either: the resolved place is outside). The control: the same file at the
    /// resolved place is believed.
    #[test]
    fn a_link_to_the_cache_directory_swapped_after_the_runtime_is_built_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (out, repo) = (dir.path().join("out"), dir.path().join("repo"));
        // A directory from the start: the sessions' probe of whether names fold (a policy
        // field, so part of the tool sets' key) then answers alike before and after the
        // swap.
        std::fs::create_dir_all(repo.join("d")).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        let cache = out.join("c");
        // A first runtime compiles the component into the cache and keeps the tool sets:
        // their file's name and key, for the plant.
        let (file, planted) = kept_and_a_plant(&cache, &repo);
        std::fs::remove_file(&file).unwrap();
        // The runtime under test reaches the cache through `repo/link`.
        let link = repo.join("link");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        let rt = crate::Runtime::builder()
            .cache_dir(link.join("c"))
            .build()
            .unwrap();
        // Swapped: `repo/link/c` is now the repository's own, with the tool sets planted.
        std::fs::remove_file(&link).unwrap();
        std::fs::create_dir_all(link.join("c")).unwrap();
        let name = file.file_name().unwrap();
        plant(&link.join("c").join(name), &planted.to_string());
        assert_eq!(seen_by_observer(&rt, &repo), "file_info");
        // Control: planted at the place the runtime resolved, it is believed.
        std::fs::remove_file(cache.join(name)).unwrap();
        plant(&cache.join(name), &planted.to_string());
        assert_eq!(
            seen_by_observer(
                &crate::Runtime::builder().cache_dir(&cache).build().unwrap(),
                &repo
            ),
            "unknown"
        );
    }

    /// A cache directory that cannot be made when the runtime is built (a dangling link
    /// on its way) caches nothing: the place it named, filled later by the repository with
    /// planted tool sets, is neither read nor written, and the session is not refused for
    /// it.
    #[test]
    fn a_cache_directory_that_cannot_be_made_at_build_is_not_used_later() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("d")).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        let link = repo.join("link");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
        let rt = crate::Runtime::builder()
            .cache_dir(link.join("c"))
            .build()
            .unwrap();
        assert!(rt.artifact_places().is_empty());
        // The place the runtime was given, now the repository's own, with a plant under
        // the name the session would read (a first runtime over another cache names it).
        let (file, planted) = kept_and_a_plant(&dir.path().join("other"), &repo);
        std::fs::remove_file(&link).unwrap();
        std::fs::create_dir_all(link.join("c")).unwrap();
        let at = link.join("c").join(file.file_name().unwrap());
        plant(&at, &planted.to_string());
        assert_eq!(seen_by_observer(&rt, &repo), "file_info");
        let left: Vec<_> = std::fs::read_dir(link.join("c")).unwrap().collect();
        assert_eq!(left.len(), 1, "only the plant: nothing written there");
    }

    #[test]
    fn a_file_is_named_by_component_and_policy() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let name = |w: &[u8; 32], p: &str| file_name(&key(w, p));
        assert_eq!(name(&a, "{}"), name(&a, "{}"));
        assert_ne!(name(&a, "{}"), name(&b, "{}"));
        assert_ne!(name(&a, "{}"), name(&a, r#"{"read_only":true}"#));
        assert_eq!(key(&a, "{}").len(), 64);
    }
}
