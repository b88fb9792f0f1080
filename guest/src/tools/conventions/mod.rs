//! The line endings and encoding the repository declares: for new files, and the
//! encoding of existing ones.
//!
//! When a tool creates a file, `.gitattributes` (`eol=crlf`, `eol=lf`, `-text`/`binary`,
//! `working-tree-encoding`) and `.editorconfig` (`end_of_line`, `insert_final_newline`,
//! `charset`) found on the way from the root to the file decide its line breaks, final
//! newline, encoding and BOM; `.gitattributes` wins where both speak, and a file it marks
//! `-text` is written exactly as given. Existing files keep their own style (`mutate`,
//! `text_file`); the declared encoding is how one whose bytes are not UTF-8 is read
//! ([`declared_encoding`], asked by `text_file` only then, and for an ASCII file that
//! gains other characters).
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
use crate::error::ToolResult;
use crate::rules::path::LogicalPath;
use crate::rules::policy::Policy;
use crate::text::encoding::{Encoding, Label};
use crate::tools::session::Session;
use crate::tools::text_file::{encode_as, to_crlf, Declared};

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
    /// The declared encoding (and whether the file starts with a BOM), and the rule.
    pub charset: Option<(Label, String)>,
    /// Configuration ignored or not applied, for the agent.
    pub notes: Vec<String>,
}

/// Configuration files one call has read already, by path: `None` for one absent, hidden,
/// refused or not UTF-8. A call that asks for many files' rules (a search) reads each
/// directory's configuration once.
#[derive(Debug, Default)]
pub struct Seen(std::collections::HashMap<String, Option<String>>);

/// Reads one configuration file through the read gate (or takes it from `seen`); `None`
/// when it is absent, hidden, refused, unusable (a note says so for text that is not
/// UTF-8) or larger than what is left of the call's `budget` of configuration bytes. A
/// file passed over for its size gets no note: the size of a file whose content the
/// sniffer might withhold is not told.
fn read_config(
    s: &Session,
    log: &mut CallLog,
    path: &LogicalPath,
    notes: &mut Vec<String>,
    budget: &mut u64,
    seen: &mut Seen,
) -> Option<String> {
    let room = (*budget).min(MAX_CONFIG_BYTES);
    if let Some(known) = seen.0.get(path.as_str()) {
        let text = known.as_ref().filter(|t| t.len() as u64 <= room)?;
        *budget -= text.len() as u64;
        return Some(text.clone());
    }
    let r = s.readable_path(path).ok();
    let Some(meta) = r
        .as_ref()
        .and_then(|r| r.resolved.meta.filter(|m| m.is_file()))
    else {
        seen.0.insert(path.to_string(), None);
        return None;
    };
    let r = r?;
    if meta.size > room {
        return None;
    }
    let (buf, _) = r.resolved.read(room + 1).ok()?;
    if buf.len() as u64 > room {
        return None;
    }
    *budget -= buf.len() as u64;
    if Policy::content_denial(path.as_str(), s.policy.sniff(&r.resolved.target, &buf)).is_err() {
        seen.0.insert(path.to_string(), None);
        return None;
    }
    log.read(path.as_str(), buf.len() as u64);
    let text = String::from_utf8(buf).ok();
    if text.is_none() {
        notes.push(format!("'{path}' was ignored: it is not UTF-8 text"));
    }
    seen.0.insert(path.to_string(), text.clone());
    text
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

/// The `.gitattributes` and `.editorconfig` rules that apply to `path`.
fn rules_for(
    s: &Session,
    log: &mut CallLog,
    path: &LogicalPath,
    notes: &mut Vec<String>,
    seen: &mut Seen,
) -> (gitattributes::Attributes, editorconfig::Properties) {
    // All configuration files of one call together: a hostile repository's deep tree of
    // large configurations costs no more than one.
    let mut budget = MAX_CONFIG_BYTES;
    let dirs = dirs_of(path);
    let mut attrs = gitattributes::Attributes::default();
    for d in &dirs {
        let f = d.join(".gitattributes");
        if let Some(text) = read_config(s, log, &f, notes, &mut budget, seen) {
            gitattributes::apply(&text, f.as_str(), d.as_str(), path.as_str(), &mut attrs);
        }
    }
    let mut configs = Vec::new();
    for d in dirs.iter().rev() {
        let f = d.join(".editorconfig");
        if let Some(text) = read_config(s, log, &f, notes, &mut budget, seen) {
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
    (attrs, props)
}

/// The declared encoding among the rules: `working-tree-encoding` (unless `-text`), else
/// `charset`, as written and with the rule that says it.
fn charset_of(
    attrs: &gitattributes::Attributes,
    props: &editorconfig::Properties,
) -> Option<(String, String)> {
    match &attrs.encoding {
        Some(e) if attrs.text != Some(false) => Some(e.clone()),
        _ => props
            .charset
            .clone()
            .map(|c| (c, props.charset_source.clone().unwrap_or_default())),
    }
}

/// The encoding the repository declares for the file at `path`, when it names one this
/// project reads (see `text::encoding::Encoding::for_label`).
pub fn declared_encoding(s: &Session, log: &mut CallLog, path: &LogicalPath) -> Option<Declared> {
    declared_encoding_in(s, log, path, &mut Seen::default())
}

/// [`declared_encoding`], reading each configuration file once across the calls that
/// share `seen`.
pub fn declared_encoding_in(
    s: &Session,
    log: &mut CallLog,
    path: &LogicalPath,
    seen: &mut Seen,
) -> Option<Declared> {
    let (attrs, props) = rules_for(s, log, path, &mut Vec::new(), seen);
    let (name, source) = charset_of(&attrs, &props)?;
    Some(Declared {
        label: Encoding::for_label(&name)?,
        source,
    })
}

/// The style the repository declares for a new file at `path`.
pub fn style_for(s: &Session, log: &mut CallLog, path: &LogicalPath) -> Style {
    let mut style = Style::default();
    let (attrs, props) = rules_for(s, log, path, &mut style.notes, &mut Seen::default());
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
    style.charset = match charset_of(&attrs, &props) {
        Some((name, why)) => match Encoding::for_label(&name) {
            Some(label) => Some((label, why)),
            None => {
                style.notes.push(format!(
                    "the encoding {name} ({why}) is not one file-tools writes; the file was written as UTF-8"
                ));
                None
            }
        },
        None => None,
    };
    style
}

/// `content` for a new file shaped by `style`, with a note per change made (and the
/// style's own notes).
///
/// # Errors
/// `ENCODING_ERROR` when the declared encoding cannot hold a character of `content`.
pub fn shape(shown: &str, style: &Style, content: &str) -> ToolResult<(Vec<u8>, Vec<String>)> {
    let mut notes = style.notes.clone();
    if style.verbatim || content.contains('\0') {
        return Ok((content.as_bytes().to_vec(), notes));
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
    let (encoding, bom) = match &style.charset {
        Some((label, why)) => {
            if label.bom != had_bom {
                let what = if label.bom {
                    "written with a BOM"
                } else {
                    "written without its BOM"
                };
                notes.push(format!("new file '{shown}': {what} ({why})"));
            }
            if label.encoding != Encoding::Utf8 {
                notes.push(format!(
                    "new file '{shown}': written in {} ({why})",
                    label.encoding.name()
                ));
            }
            (label.encoding, label.bom)
        }
        None => (Encoding::Utf8, had_bom),
    };
    let text = if bom { format!("\u{feff}{body}") } else { body };
    let why = style.charset.as_ref().map(|(_, why)| why.as_str());
    Ok((encode_as(shown, encoding, why, text)?, notes))
}

/// The new file's bytes for `content` in the repository's declared style; notes go to
/// `warnings` and to the audit log.
///
/// # Errors
/// `ENCODING_ERROR` when the declared encoding cannot hold a character of `content`.
pub fn new_file_bytes(
    s: &Session,
    log: &mut CallLog,
    path: &LogicalPath,
    content: &str,
    warnings: &mut Vec<String>,
) -> ToolResult<Vec<u8>> {
    let style = style_for(s, log, path);
    let (bytes, notes) = shape(path.as_str(), &style, content)?;
    for n in notes {
        log.notes.push(n.clone());
        warnings.push(n);
    }
    Ok(bytes)
}
