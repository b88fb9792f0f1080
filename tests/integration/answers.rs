//! Answers an agent can act on (issue 15, section 4): clipped search lines that keep the
//! match, no-match errors that show the difference, new files in the repository's line
//! endings, envelopes as models write them, and opt-in relaxed patch matching.

use serde_json::json;

use crate::support::*;

#[test]
fn search_shows_a_match_at_column_5001_of_a_long_line_and_marks_the_cuts() {
    let fx = Fixture::new();
    let line = format!("{}needle_here{}\n", "é".repeat(2500), "z".repeat(3000));
    fx.write("long.txt", line.as_bytes());
    let mut s = fx.session();
    let v = call(&mut s, "search_text", json!({ "query": "needle_here" })).unwrap();
    let m = &v["matches"][0];
    assert_eq!(m["column"], 5001);
    let text = m["text"].as_str().unwrap();
    assert!(text.contains("needle_here"), "{text}");
    let (before, after) = (
        m["cut_before"].as_u64().unwrap(),
        m["cut_after"].as_u64().unwrap(),
    );
    assert!(before > 4000 && after > 2000, "{m}");
    assert!(
        text.starts_with(&format!("[…{before} bytes cut]")),
        "{text}"
    );
    assert!(text.ends_with(&format!("[{after} bytes cut…]")), "{text}");
    let at = m["match_start"].as_u64().unwrap() as usize;
    assert_eq!(&text[at..at + 11], "needle_here");
}
