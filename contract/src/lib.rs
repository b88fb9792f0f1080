//! The names the file-tools component and its hosts must spell alike, in one place: the
//! error codes as JSON writes them, the environment variables a host sets for the
//! component, and the state directory's name. No dependencies and `no_std`, so that the
//! guest (wasm32-wasip2) and every native host use the very same constants.
//!
//! The types themselves come from `wit/`: this crate only holds the strings that the WIT
//! cannot carry.

#![no_std]

/// Every `error-code` of the WIT, in WIT order, as JSON spells it (SCREAMING_SNAKE_CASE).
/// Position `i` is the code whose WIT case is the `i`th: both sides' enums follow the WIT
/// order, so `code as usize` indexes this table.
pub const ERROR_CODES: [&str; 21] = [
    "PATH_REJECTED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "NOT_A_FILE",
    "POLICY_DENIED",
    "FILE_TOO_LARGE",
    "UNSUPPORTED_BINARY",
    "ENCODING_ERROR",
    "WRITE_CONFLICT",
    "EDIT_NO_MATCH",
    "EDIT_AMBIGUOUS",
    "PATCH_PARSE_ERROR",
    "PATCH_CONFLICT",
    "PATCH_BUDGET_EXCEEDED",
    "APPROVAL_REQUIRED",
    "INVALID_INPUT",
    "LIMIT_EXCEEDED",
    "IO_ERROR",
    "INTERNAL",
    "CANCELLED",
    "UNSUPPORTED_MEDIA",
];

/// The JSON name of the error code at WIT position `index`; `INTERNAL` for a position past
/// the end (a code this table does not know is a defect, never a reason to panic).
pub fn error_code_name(index: usize) -> &'static str {
    match ERROR_CODES.get(index) {
        Some(name) => name,
        None => "INTERNAL",
    }
}

/// Environment variables a host sets in the component's environment.
pub mod env {
    /// The session policy, as JSON.
    pub const POLICY: &str = "FILE_TOOLS_POLICY";
    /// The name of the preopen that is the repository root (default: the one named `/`).
    pub const ROOT: &str = "FILE_TOOLS_ROOT";
    /// The name of the preopen that is the private state directory (default
    /// [`STATE_GUEST_PATH`](crate::STATE_GUEST_PATH)).
    pub const STATE: &str = "FILE_TOOLS_STATE";
    /// `held` (the default) when directory descriptors are open directories, `paths` when
    /// they are path strings resolved again on every use.
    pub const DESCRIPTORS: &str = "FILE_TOOLS_DESCRIPTORS";
    /// The key (64 hex digits) that signs continuation cursors and change tokens, so that
    /// one instance's cursor is taken by the next.
    pub const TOKEN_KEY: &str = "FILE_TOOLS_TOKEN_KEY";
    /// The token by which the host says it holds the repository's mutation lock.
    pub const LOCK_TOKEN: &str = "FILE_TOOLS_LOCK_TOKEN";
    /// `off` when the host keeps no audit trail (it has no sink for events): the component
    /// then spends nothing on building and sending audit events. Any other value, or none,
    /// and every call's event is emitted.
    pub const AUDIT: &str = "FILE_TOOLS_AUDIT";
    /// `1` when the host opened the instance to build the search index for others (see
    /// [`INDEX_BUILDING`](crate::INDEX_BUILDING)): its searches record even while a build
    /// is announced, since the announced build is its own.
    pub const INDEX_BUILDER: &str = "FILE_TOOLS_INDEX_BUILDER";
    /// For an [`INDEX_BUILDER`] instance: how often, in milliseconds, its search saves what
    /// it has recorded so far, so that a build a call's limit ends keeps its work.
    pub const INDEX_CHECKPOINT_MS: &str = "FILE_TOOLS_INDEX_CHECKPOINT_MS";
    /// Where the host mounted a search index folder of its own
    /// ([`INDEX_GUEST_PATH`](crate::INDEX_GUEST_PATH)); without it, the index lives in the
    /// state directory's [`INDEX_DIR_NAME`](crate::INDEX_DIR_NAME).
    pub const INDEX_DIR: &str = "FILE_TOOLS_INDEX_DIR";
    /// Test builds only: the name of the point at which the component panics on purpose.
    pub const FAULT: &str = "FILE_TOOLS_FAULT";
}

/// The state directory's name: never a path the tools reach in the repository.
pub const STATE_DIR_NAME: &str = ".file-tools-state";

/// Where hosts mount the state directory in the component's file system.
pub const STATE_GUEST_PATH: &str = "/.file-tools-state";

/// The search index's folder in the state directory, unless the host mounts one of its own
/// at [`INDEX_GUEST_PATH`] (sessions of one repository may share it).
pub const INDEX_DIR_NAME: &str = "index";

/// Where hosts mount a search index folder of its own in the component's file system
/// (named to the component by [`env::INDEX_DIR`]).
pub const INDEX_GUEST_PATH: &str = "/.file-tools-index";

/// In the index folder: the file by which a host says that it is building the search
/// index outside the calls (touching it at least every few seconds while it runs, removing
/// it when done). A search that finds no index to load and this file fresher than
/// [`INDEX_BUILDING_FRESH_SECS`] scans without recording, rather than build a second
/// index beside the one under way.
pub const INDEX_BUILDING: &str = "building";

/// How long an [`INDEX_BUILDING`] announcement holds after its last touch.
pub const INDEX_BUILDING_FRESH_SECS: u64 = 10;

/// The suffix of a `changes/` snapshot a prune condemned: `<sha256>.<16 hex>.gone` (a
/// prune renames a snapshot so before it removes it).
pub const CONDEMNED_SUFFIX: &str = ".gone";

/// Whether `s` is `n` hex digits.
fn hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `name` is the temporary file of a state-directory write before its rename:
/// `.<16 hex>.tmp`.
pub fn is_state_temp_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .is_some_and(|n| hex(n, 16))
}

/// The snapshot name a condemned file's name `<sha256>.<16 hex>.gone` stands for; `None`
/// for any other name.
pub fn condemned_snapshot(name: &str) -> Option<&str> {
    let (sha, nonce) = name.strip_suffix(CONDEMNED_SUFFIX)?.split_once('.')?;
    (hex(sha, 64) && hex(nonce, 16)).then_some(sha)
}

/// Whether `name` is a snapshot's name in `changes/`: its 64-hex-digit sha256.
pub fn is_snapshot_name(name: &str) -> bool {
    hex(name, 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_file_names_are_told_by_their_form() {
        const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF";
        assert!(is_snapshot_name(SHA));
        assert!(!is_snapshot_name(&SHA[1..]));
        assert!(is_state_temp_name(".0123456789abcdef.tmp"));
        assert!(!is_state_temp_name(".0123456789abcdeg.tmp"));
        assert!(!is_state_temp_name("0123456789abcdef.tmp"));
        let gone = concat!(
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF",
            ".0123456789abcdef.gone"
        );
        assert!(gone.ends_with(CONDEMNED_SUFFIX));
        assert_eq!(condemned_snapshot(gone), Some(SHA));
        assert_eq!(condemned_snapshot(&gone[1..]), None);
        assert_eq!(condemned_snapshot(".0123456789abcdef.gone"), None);
        assert_eq!(condemned_snapshot(SHA), None);
    }

    #[test]
    fn the_state_path_is_the_state_name_at_the_root() {
        assert_eq!(STATE_GUEST_PATH.strip_prefix('/'), Some(STATE_DIR_NAME));
    }

    #[test]
    fn error_code_names_are_distinct_and_an_unknown_position_is_internal() {
        for (i, a) in ERROR_CODES.iter().enumerate() {
            assert!(ERROR_CODES[i + 1..].iter().all(|b| a != b), "{a}");
            assert_eq!(error_code_name(i), *a);
        }
        assert_eq!(error_code_name(ERROR_CODES.len()), "INTERNAL");
    }
}
