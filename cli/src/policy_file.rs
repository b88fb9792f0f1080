//! The policy file given to the CLI with `--policy FILE`: TOML (or JSON for a `.json`
//! file). Its top-level keys are the component's policy (see
//! `guest/src/rules/policy/config.rs`), plus a `[sandbox]` table for the host's own limits,
//! which never reaches the component:
//!
//! ```toml
//! read_only = false
//! [read]
//! block = ["secrets/**"]
//! [sandbox]
//! fuel_per_call = 100_000_000_000
//! memory_bytes = 536_870_912
//! timeout_ms = 30_000
//! ```

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use file_tools_host::{HostError, Limits};

/// A parsed policy file.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyFile {
    /// What the component gets.
    pub policy: Value,
    /// The host's limits (defaults where the file is silent).
    pub limits: Limits,
}

/// Reads and splits a policy file.
///
/// # Errors
/// `HostError::Config` when the file cannot be read, does not parse, or its `[sandbox]`
/// table holds an unknown key or a value of the wrong type.
pub fn load(path: &Path) -> Result<PolicyFile, HostError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HostError::Config(format!("{}: {e}", path.display())))?;
    let is_json = path.extension().is_some_and(|e| e == "json");
    parse(&text, is_json).map_err(|e| HostError::Config(format!("{}: {e}", path.display())))
}

/// Parses policy text (TOML, or JSON when `json` is set).
///
/// # Errors
/// As [`load`], with the message only.
pub fn parse(text: &str, json: bool) -> Result<PolicyFile, String> {
    let mut value: Value = if json {
        serde_json::from_str(text).map_err(|e| e.to_string())?
    } else {
        toml::from_str(text).map_err(|e| e.to_string())?
    };
    let obj = value.as_object_mut().ok_or("the policy must be a table")?;
    let mut limits = Limits::default();
    if let Some(sandbox) = obj.remove("sandbox") {
        let table = sandbox.as_object().ok_or("[sandbox] must be a table")?;
        for (k, v) in table {
            let n = v
                .as_u64()
                .ok_or_else(|| format!("sandbox.{k} must be a non-negative integer"))?;
            match k.as_str() {
                "fuel_per_call" => limits.fuel_per_call = n,
                "memory_bytes" => {
                    limits.memory_bytes =
                        usize::try_from(n).map_err(|_| "sandbox.memory_bytes is too large")?
                }
                "timeout_ms" => limits.timeout = Duration::from_millis(n),
                other => {
                    return Err(format!(
                    "unknown key sandbox.{other} (known: fuel_per_call, memory_bytes, timeout_ms)"
                ))
                }
            }
        }
    }
    Ok(PolicyFile {
        policy: value,
        limits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_table_is_split_off() {
        let p = parse(
            "read_only = true\n[read]\nblock = [\"x/**\"]\n[sandbox]\ntimeout_ms = 1500\n",
            false,
        )
        .unwrap();
        assert_eq!(p.policy["read_only"], true);
        assert_eq!(p.policy["read"]["block"][0], "x/**");
        assert!(p.policy.get("sandbox").is_none());
        assert_eq!(p.limits.timeout, Duration::from_millis(1500));
    }

    #[test]
    fn unknown_sandbox_keys_are_refused() {
        assert!(parse("[sandbox]\nfuel = 1\n", false)
            .unwrap_err()
            .contains("unknown key"));
        assert!(parse("{\"sandbox\": {\"timeout_ms\": -1}}", true).is_err());
    }
}
