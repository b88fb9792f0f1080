//! New files in the line endings and encoding the repository declares.
//!
//! When a tool creates a file, `.gitattributes` (`eol=crlf`, `eol=lf`, `-text`/`binary`)
//! and `.editorconfig` (`end_of_line`, `insert_final_newline`, `charset` utf-8 or
//! utf-8-bom) found on the way from the root to the file decide its line breaks, final
//! newline and BOM; `.gitattributes` wins on line endings, and a file it marks `-text` is
//! written exactly as given. Existing files keep their own style (`mutate`, `text`).
//!
//! The configuration files are read like any other file: through the session's read gate
//! (a path the policy hides or refuses is passed over without a word), at most
//! [`MAX_CONFIG_BYTES`] for all of one call's files together (a deeper one that would pass
//! the total is passed over, without a note that would tell its size). A configuration that
//! is not UTF-8 or malformed never fails the write: it is ignored, with a note when the
//! agent may read it.

pub mod editorconfig;
pub mod gitattributes;

use crate::audit::CallLog;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::tools::session::Session;
use crate::tools::text_file::to_crlf;

/// Most bytes of configuration one call reads (all its files together).
pub const MAX_CONFIG_BYTES: u64 = 64 * 1024;

/// Line breaks a new file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    Crlf,
}

/// How a new file's content is shaped, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Style {
    /// Write the content exactly as given (`-text`, `binary`).
    pub verbatim: bool,
    pub eol: Option<(Eol, String)>,
    /// Add a final line break when missing, and the rule that says so.
    pub final_newline: Option<String>,
    /// `Some(true)`: start with a BOM; `Some(false)`: without one; and the rule.
    pub bom: Option<(bool, String)>,
    /// Configuration ignored or not applied, for the agent.
    pub notes: Vec<String>,
}

/// Reads one configuration file through the read gate; `None` when it is absent, hidden,
/// refused, unusable (a note says so for text that is not UTF-8) or larger than what is
/// left of the call's `budget` of configuration bytes. A file passed over for its size
/// gets no note: the size of a file whose content the sniffer might withhold is not told.
fn read_config(
    s: &Session,
    log: &mut CallLog,
    path: &LogicalPath,
    notes: &mut Vec<String>,
    budget: &mut u64,
) -> Option<String> {
    let r = s.readable_path(path).ok()?;
    let meta = r.resolved.meta.filter(|m| m.is_file())?;
    let room = (*budget).min(MAX_CONFIG_BYTES);
    if meta.size > room {
        return None;
    }
    let (buf, _) = r.resolved.read(room + 1).ok()?;
    if buf.len() as u64 > room {
        return None;
    }
    *budget -= buf.len() as u64;
    if Policy::content_denial(path.as_str(), s.policy.sniff(&r.resolved.target, &buf)).is_err() {
        return None;
    }
    log.read(path.as_str(), buf.len() as u64);
    match String::from_utf8(buf) {
        Ok(t) => Some(t),
        Err(_) => {
            notes.push(format!("'{path}' was ignored: it is not UTF-8 text"));
            None
        }
    }
}

/// The directories from the root down to `path`'s parent.
fn dirs_of(path: &LogicalPath) -> Vec<LogicalPath> {
    let mut out = vec![LogicalPath::root()];
    let parent = path.parent();
    let mut cur = LogicalPath::root();
    for part in parent.parts() {
        cur = cur.join(part);
        out.push(cur.clone());
    }
    out
}

/// The style the repository declares for a new file at `path`.
pub fn style_for(s: &Session, log: &mut CallLog, path: &LogicalPath) -> Style {
    let mut style = Style::default();
    // All configuration files of one call together: a hostile repository's deep tree of
    // large configurations costs no more than one.
    let mut budget = MAX_CONFIG_BYTES;
    let dirs = dirs_of(path);
    let mut attrs = gitattributes::Attributes::default();
    for d in &dirs {
        let f = d.join(".gitattributes");
        if let Some(text) = read_config(s, log, &f, &mut style.notes, &mut budget) {
            gitattributes::apply(&text, f.as_str(), d.as_str(), path.as_str(), &mut attrs);
        }
    }
    let mut configs = Vec::new();
    for d in dirs.iter().rev() {
        let f = d.join(".editorconfig");
        if let Some(text) = read_config(s, log, &f, &mut style.notes, &mut budget) {
            let root = editorconfig::is_root(&text);
            configs.push((f, d.clone(), text));
            if root {
                break;
            }
        }
    }
    let mut props = editorconfig::Properties::default();
    for (f, d, text) in configs.iter().rev() {
        editorconfig::apply(text, f.as_str(), d.as_str(), path.as_str(), &mut props);
    }
    let from_attrs = attrs.source.clone().unwrap_or_default();
    let from_props = props.source.clone().unwrap_or_default();
    if attrs.text == Some(false) {
        style.verbatim = true;
        return style;
    }
    style.eol = match attrs.eol.as_deref() {
        Some("crlf") => Some((Eol::Crlf, from_attrs)),
        Some("lf") => Some((Eol::Lf, from_attrs)),
        _ => match props.end_of_line.as_deref() {
            Some("crlf") => Some((Eol::Crlf, from_props.clone())),
            Some("lf") => Some((Eol::Lf, from_props.clone())),
            Some(other) => {
                style.notes.push(format!("end_of_line = {other} ({from_props}) is not applied; line breaks were written as given"));
                None
            }
            None => None,
        },
    };
    if props.insert_final_newline == Some(true) {
        style.final_newline = Some(from_props.clone());
    }
    style.bom = match props.charset.as_deref() {
        Some("utf-8-bom") => Some((true, from_props)),
        Some("utf-8") => Some((false, from_props)),
        Some(other) => {
            style.notes.push(format!(
                "charset = {other} ({from_props}) is not applied; the file was written as UTF-8"
            ));
            None
        }
        None => None,
    };
    style
}

/// `content` for a new file shaped by `style`, with a note per change made (and the
/// style's own notes).
pub fn shape(shown: &str, style: &Style, content: &str) -> (Vec<u8>, Vec<String>) {
    let mut notes = style.notes.clone();
    if style.verbatim || content.contains('\0') {
        return (content.as_bytes().to_vec(), notes);
    }
    let had_bom = content.starts_with('\u{feff}');
    let mut body = content.trim_start_matches('\u{feff}').to_string();
    if let Some((eol, why)) = &style.eol {
        let converted = match eol {
            Eol::Crlf => to_crlf(&body),
            Eol::Lf => body.replace("\r\n", "\n"),
        };
        if converted != body {
            let name = if *eol == Eol::Crlf { "CRLF" } else { "LF" };
            notes.push(format!(
                "new file '{shown}': line breaks written as {name} ({why})"
            ));
            body = converted;
        }
    }
    if let Some(why) = &style.final_newline {
        if !body.is_empty() && !body.ends_with('\n') {
            let crlf = matches!(style.eol, Some((Eol::Crlf, _)))
                || (style.eol.is_none() && body.contains("\r\n"));
            body.push_str(if crlf { "\r\n" } else { "\n" });
            notes.push(format!(
                "new file '{shown}': final line break added ({why})"
            ));
        }
    }
    let bom = match &style.bom {
        Some((want, why)) => {
            if *want != had_bom {
                let what = if *want {
                    "written with a BOM"
                } else {
                    "written without its BOM"
                };
                notes.push(format!("new file '{shown}': {what} ({why})"));
            }
            *want
        }
        None => had_bom,
    };
    let mut out = Vec::with_capacity(body.len() + 3);
    if bom {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    out.extend_from_slice(body.as_bytes());
    (out, notes)
}

/// The new file's bytes for `content` in the repository's declared style; notes go to
/// `warnings` and to the audit log.
pub fn new_file_bytes(
    s: &Session,
    log: &mut CallLog,
    path: &LogicalPath,
    content: &str,
    warnings: &mut Vec<String>,
) -> Vec<u8> {
    let style = style_for(s, log, path);
    let (bytes, notes) = shape(path.as_str(), &style, content);
    for n in notes {
        log.notes.push(n.clone());
        warnings.push(n);
    }
    bytes
}
