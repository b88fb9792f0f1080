//! Approval for clients of the 2026-07-28 revision, which forbids requests from server to
//! client: a call whose change needs approval answers with an input-required result that
//! carries the approval form (see [`super::approval`]) and a sealed state; the client asks
//! its user and calls again with the answer and the state. The state binds the answer to
//! the plan the user saw and to the call's arguments: the retry plans the change afresh,
//! and it is written only when its plan (tool, reasons, files, hashes, diff) and arguments
//! hash to what the state names; a changed plan is asked about again, a declined one is
//! refused with `APPROVAL_REQUIRED`. The seal is a sha256 under a key derived from the
//! session's cursor key, repository and state directory (server processes that share the
//! cursor key and the session's state accept each other's states; another session or
//! repository does not), over the binding and the state's issue time, so a client cannot
//! forge approval of a plan it was not shown, and a state expires after 15 minutes.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use rmcp::model::{ElicitRequest, ElicitResult, InputRequest, InputRequiredResult, InputResponses};
use sha2::{Digest, Sha256};

use file_tools_host::approval::{ApprovalRequest, Approver};

/// The key of the approval in `inputRequests` / `inputResponses`.
pub const INPUT_KEY: &str = "approve";

/// The server's sealing key, and the states it has taken: a state approves its plan once
/// (clones share both).
#[derive(Clone)]
pub(crate) struct SealKey {
    key: [u8; 32],
    /// Tags of the states that approved a change, with their issue times (kept until they
    /// expire).
    spent: Arc<Mutex<HashMap<[u8; 32], u64>>>,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

impl SealKey {
    /// A fresh key from the system's randomness.
    pub(crate) fn new() -> std::io::Result<SealKey> {
        use std::io::Read as _;
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
        Ok(SealKey::from_bytes(key))
    }

    /// The key `bytes`.
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> SealKey {
        SealKey {
            key: bytes,
            spent: Arc::default(),
        }
    }

    /// Takes the state `opened` for a change: true the first time only.
    fn spend(&self, opened: &Opened) -> bool {
        let Ok(mut spent) = self.spent.lock() else {
            return false;
        };
        let now = now_secs();
        spent.retain(|_, issued| now.saturating_sub(*issued) <= STATE_TTL_SECS);
        spent.insert(opened.tag, opened.issued).is_none()
    }

    fn tag(&self, binding: &[u8; 32], issued: u64) -> [u8; 32] {
        Sha256::new()
            .chain_update(self.key)
            .chain_update(binding)
            .chain_update(issued.to_le_bytes())
            .finalize()
            .into()
    }

    /// The state naming `binding`, issued now.
    fn seal(&self, binding: &[u8; 32]) -> String {
        let issued = now_secs();
        format!(
            "{}.{issued}.{}",
            hex(binding),
            hex(&self.tag(binding, issued))
        )
    }

    /// The state, when this key sealed it less than [`STATE_TTL_SECS`] ago. Only the form
    /// [`SealKey::seal`] writes is read: lower-case hex, a plain decimal time.
    fn open(&self, state: &str) -> Option<Opened> {
        let mut parts = state.split('.');
        let (binding, issued, tag) = (parts.next()?, parts.next()?, parts.next()?);
        let decimal = !issued.is_empty()
            && issued.bytes().all(|b| b.is_ascii_digit())
            && !(issued.len() > 1 && issued.starts_with('0'));
        if parts.next().is_some() || !decimal {
            return None;
        }
        let binding: [u8; 32] = unhex(binding)?.try_into().ok()?;
        let tag: [u8; 32] = unhex(tag)?.try_into().ok()?;
        let issued: u64 = issued.parse().ok()?;
        let expected = self.tag(&binding, issued);
        // Compared in constant time: the time taken tells nothing of the right tag.
        let same = expected.iter().zip(tag).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
        let now = now_secs();
        let fresh =
            issued <= now.saturating_add(60) && now.saturating_sub(issued) <= STATE_TTL_SECS;
        (same && fresh).then_some(Opened {
            binding,
            tag,
            issued,
        })
    }
}

/// How long an approval state may be answered: a state that leaked (through a log, say)
/// does not approve its plan for ever.
const STATE_TTL_SECS: u64 = 15 * 60;

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A state this key sealed, opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Opened {
    binding: [u8; 32],
    tag: [u8; 32],
    issued: u64,
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let lower_hex = text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !text.len().is_multiple_of(2) || !lower_hex {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What an approval binds: the call's arguments and every part of the plan.
fn binding(args: &str, r: &ApprovalRequest) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut field = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field(args);
    field(&r.tool);
    r.reasons.iter().for_each(|x| field(x));
    for f in &r.files {
        field(&f.path);
        field(&f.action);
        field(f.sha256_before.as_deref().unwrap_or("-"));
        field(f.sha256_after.as_deref().unwrap_or("-"));
    }
    field(&format!("{} {} {}", r.insertions, r.deletions, r.escaped));
    field(&r.diff);
    h.finalize().into()
}

/// The approver of one round: it says yes only to the plan the client's answer approved,
/// and remembers the plan it was asked about.
pub(crate) struct Round {
    key: SealKey,
    args: String,
    /// The state whose plan the user approved, from a valid state and an accepting answer.
    approved: Option<Opened>,
    /// Whether this round carried an answer at all (then a refusal is final).
    answered: bool,
    asked: Mutex<Option<ApprovalRequest>>,
}

impl Round {
    /// A round of the call with arguments `args`, and the client's answer to the last
    /// round, if any.
    pub(crate) fn new(
        key: SealKey,
        args: &str,
        responses: Option<&InputResponses>,
        state: Option<&str>,
    ) -> Round {
        let answer = responses
            .and_then(|r| r.get(INPUT_KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let approved = match (&answer, state.and_then(|s| key.open(s))) {
            (Some(a), Some(b)) if super::approval::approves(&a.action, a.content.as_ref()) => {
                Some(b)
            }
            _ => None,
        };
        Round {
            key,
            args: args.to_string(),
            approved,
            answered: answer.is_some(),
            asked: Mutex::new(None),
        }
    }

    /// The next round of the same call, with the client's answer to this one.
    pub(crate) fn next(&self, responses: Option<&InputResponses>, state: Option<&str>) -> Round {
        Round::new(self.key.clone(), &self.args, responses, state)
    }

    /// After a call refused for want of approval: the input-required result that asks the
    /// user, unless the user already declined (then the refusal stands).
    pub(crate) fn ask(&self) -> Option<InputRequiredResult> {
        let asked = self.asked.lock().ok()?.clone()?;
        let bound = binding(&self.args, &asked);
        // Declined (or a forged or stale state with no valid approval of this plan).
        if self.answered && self.approved.is_none() {
            return None;
        }
        let form = super::approval::form(&asked)?;
        let requests = BTreeMap::from([(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(form)),
        )]);
        Some(InputRequiredResult::new(
            Some(requests),
            Some(self.key.seal(&bound)),
        ))
    }
}

impl Approver for Round {
    fn approve(&self, request: &ApprovalRequest) -> bool {
        if let Ok(mut asked) = self.asked.lock() {
            *asked = Some(request.clone());
        }
        // The approved plan, and a state not taken before (a replay is asked about again).
        self.approved
            .is_some_and(|a| a.binding == binding(&self.args, request) && self.key.spend(&a))
    }
}

/// Whether a 2026-07-28 request's client declares form elicitation.
pub(super) fn modern_can_ask(meta: &rmcp::model::RequestMetaObject) -> bool {
    meta.client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The code of a failed call's error (`None` for a call that did not fail).
pub(super) fn error_code(result: &rmcp::model::CallToolResult) -> Option<&str> {
    if result.is_error != Some(true) {
        return None;
    }
    result.structured_content.as_ref()?["error"]["code"].as_str()
}

/// Whether a call was refused for want of approval.
pub(super) fn needs_approval(result: &rmcp::model::CallToolResult) -> bool {
    error_code(result) == Some("APPROVAL_REQUIRED")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_under_its_key_and_unaltered() {
        let (k, other) = (SealKey::new().unwrap(), SealKey::new().unwrap());
        let b = [7u8; 32];
        let s = k.seal(&b);
        assert_eq!(k.open(&s).map(|o| o.binding), Some(b));
        assert_eq!(other.open(&s), None);
        let forged = format!("{}{}", &"08".repeat(32), &s[64..]);
        assert_eq!(k.open(&forged), None);
        assert_eq!(k.open("zz.zz"), None);
        assert_eq!(k.open(""), None);
        // Another issue time under the same tag is refused.
        let (head, tag) = s.rsplit_once('.').unwrap();
        let (binding, issued) = head.split_once('.').unwrap();
        let later = issued.parse::<u64>().unwrap() + 1;
        assert_eq!(k.open(&format!("{binding}.{later}.{tag}")), None);
    }

    #[test]
    fn a_state_expires() {
        let k = SealKey::new().unwrap();
        let b = [9u8; 32];
        let at = |issued: u64| format!("{}.{issued}.{}", hex(&b), hex(&k.tag(&b, issued)));
        // Positive control: issued a minute ago, it opens.
        assert_eq!(k.open(&at(now_secs() - 60)).map(|o| o.binding), Some(b));
        assert_eq!(k.open(&at(now_secs() - STATE_TTL_SECS - 1)), None);
        // Nor is one from the future taken.
        assert_eq!(k.open(&at(now_secs() + 3600)), None);
    }

    #[test]
    fn only_the_written_form_opens_and_only_once() {
        let k = SealKey::new().unwrap();
        let b = [0xabu8; 32];
        let s = k.seal(&b);
        let (binding, rest) = s.split_once('.').unwrap();
        let (issued, tag) = rest.split_once('.').unwrap();
        for other in [
            format!("{binding}.+{issued}.{tag}"),
            format!("{binding}.0{issued}.{tag}"),
            format!("{}.{issued}.{tag}", binding.to_uppercase()),
            format!("{binding}.{issued}.{}", tag.to_uppercase()),
            format!("+{}.{issued}.{tag}", &binding[1..]),
        ] {
            assert_eq!(k.open(&other), None, "{other}");
        }
        let opened = k.open(&s).unwrap();
        assert!(k.spend(&opened));
        assert!(!k.spend(&opened), "a state approves its plan once");
        // A clone of the key (another request of the same server) knows it too.
        assert!(!k.clone().spend(&opened));
    }
}
