//! Long lines shown in results: a window around a match, with every cut marked.
//!
//! A matched line longer than [`MAX_LINE_TEXT`] bytes is shown as a window that keeps the
//! match (its first [`MAX_MATCH_TEXT`] bytes when it is longer still) with context on both
//! sides; `[…N bytes cut]` before and `[N bytes cut…]` after say how much of the line is
//! not shown. Windows never end inside a UTF-8 character.

/// Most bytes of a line shown (markers aside).
pub const MAX_LINE_TEXT: usize = 500;
/// Most bytes of one match shown.
pub const MAX_MATCH_TEXT: usize = 1000;
/// Context kept around a match however long it is (when the line has it).
const MIN_CONTEXT: usize = 40;

/// A matched line as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The window, with its markers.
    pub text: String,
    /// Bytes of the line not shown before the window.
    pub cut_before: u32,
    /// Bytes of the line not shown after the window.
    pub cut_after: u32,
    /// Byte offset of the match in `text`.
    pub match_start: u32,
    /// Bytes of the match shown in `text`.
    pub match_len: u32,
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn is_continuation(line: &[u8], i: usize) -> bool {
    line.get(i).is_some_and(|b| b & 0xC0 == 0x80)
}

/// The largest character boundary at or below `i` (and not below `floor`).
fn floor_boundary(line: &[u8], mut i: usize, floor: usize) -> usize {
    while i > floor && is_continuation(line, i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary at or above `i` (and not above `ceil`).
fn ceil_boundary(line: &[u8], mut i: usize, ceil: usize) -> usize {
    while i < ceil && is_continuation(line, i) {
        i += 1;
    }
    i
}

fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Marks `n` bytes cut before the window.
pub fn marker_before(n: usize) -> String {
    format!("[…{n} bytes cut]")
}

/// Marks `n` bytes cut after the window.
pub fn marker_after(n: usize) -> String {
    format!("[{n} bytes cut…]")
}

/// The line (without its line ending) around the match at `start..end`.
pub fn around(line: &[u8], start: usize, end: usize) -> Snippet {
    let line = strip_cr(line);
    let len = line.len();
    let start = start.min(len);
    let end = end.clamp(start, len);
    let shown_end = if end - start > MAX_MATCH_TEXT {
        floor_boundary(line, start + MAX_MATCH_TEXT, start)
    } else {
        end
    };
    let (ws, we) = if len <= MAX_LINE_TEXT && shown_end == end {
        (0, len)
    } else {
        let room = MAX_LINE_TEXT
            .saturating_sub(shown_end - start)
            .max(2 * MIN_CONTEXT);
        let after = (len - shown_end).min(room - (start.min(room / 2)));
        let before = start.min(room - after);
        (
            ceil_boundary(line, start - before, start),
            floor_boundary(line, shown_end + after, shown_end),
        )
    };
    let mut text = String::new();
    if ws > 0 {
        text.push_str(&marker_before(ws));
    }
    text.push_str(&lossy(&line[ws..start]));
    let match_start = text.len();
    text.push_str(&lossy(&line[start..shown_end]));
    let match_len = text.len() - match_start;
    text.push_str(&lossy(&line[shown_end..we]));
    if we < len {
        text.push_str(&marker_after(len - we));
    }
    Snippet {
        text,
        cut_before: ws as u32,
        cut_after: (len - we) as u32,
        match_start: match_start as u32,
        match_len: match_len as u32,
    }
}

/// A context line (without its line ending): its first [`MAX_LINE_TEXT`] bytes, the cut
/// marked.
pub fn head(line: &[u8]) -> String {
    let line = strip_cr(line);
    if line.len() <= MAX_LINE_TEXT {
        return lossy(line).into_owned();
    }
    let end = floor_boundary(line, MAX_LINE_TEXT, 0);
    let mut text = lossy(&line[..end]).into_owned();
    text.push_str(&marker_after(line.len() - end));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_never_split_characters_and_account_for_every_byte() {
        for pad in 0..4 {
            let line = format!(
                "{}{}MATCH{}",
                "a".repeat(pad),
                "€".repeat(400),
                "ß".repeat(400)
            );
            let at = line.find("MATCH").unwrap();
            let s = around(line.as_bytes(), at, at + 5);
            assert!(!s.text.contains('\u{fffd}'), "{}", s.text);
            let m = s.match_start as usize;
            assert_eq!(&s.text[m..m + 5], "MATCH");
            let body_len = s.text.len()
                - marker_before(s.cut_before as usize).len()
                - marker_after(s.cut_after as usize).len();
            assert_eq!(
                s.cut_before as usize + body_len + s.cut_after as usize,
                line.len()
            );
        }
    }

    #[test]
    fn a_match_at_either_end_gives_its_room_to_the_other_side() {
        let line = format!("M{}", "x".repeat(2000));
        let s = around(line.as_bytes(), 0, 1);
        assert_eq!((s.cut_before, s.match_start), (0, 0));
        assert_eq!(s.cut_after as usize, 2001 - MAX_LINE_TEXT);
        let s = around(line.as_bytes(), 2000, 2001);
        assert_eq!(s.cut_after, 0);
        assert_eq!(s.cut_before as usize, 2001 - MAX_LINE_TEXT);
    }

    #[test]
    fn invalid_utf8_is_shown_lossily_with_the_match_offset_right() {
        let mut line = vec![0xFFu8; 10];
        line.extend_from_slice(b"hit");
        let s = around(&line, 10, 13);
        let m = s.match_start as usize;
        assert_eq!(&s.text[m..m + s.match_len as usize], "hit");
    }
}
