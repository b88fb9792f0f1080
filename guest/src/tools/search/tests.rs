use super::*;
use regex::bytes::Regex;

fn re(q: &str, regex: bool, ci: bool) -> Matcher {
    let a = SearchTextArgs {
        query: q.into(),
        regex: Some(regex),
        case_insensitive: Some(ci),
        ..Default::default()
    };
    compile(&a, &Policy::from_json("").unwrap()).unwrap()
}

#[test]
fn one_record_per_line_with_columns_and_numbers() {
    let buf = b"foo foo\nbar\nxfoo\n";
    let m = search_buffer(&re("foo", false, false), "f", buf, 0, 10);
    assert_eq!(m.count, 2);
    assert_eq!((m.lines[0].line, m.lines[0].column), (1, 1));
    assert_eq!(
        (m.lines[1].line, m.lines[1].column, m.lines[1].text.as_str()),
        (3, 2, "xfoo")
    );
}

#[test]
fn anchors_work_per_line_and_before_crlf() {
    let buf = b"a1\r\nb2\r\na3\r\n";
    let m = search_buffer(&re("^a\\d$", true, false), "f", buf, 0, 10);
    assert_eq!(m.count, 2);
    assert_eq!(m.lines[1].line, 3);
    assert_eq!(m.lines[1].text, "a3");
}

#[test]
fn matches_never_span_lines() {
    let buf = b"foo\nbar\n";
    assert_eq!(
        search_buffer(&re("foo\\s+bar", true, false), "f", buf, 0, 10).count,
        0
    );
    let buf = b"x foo\nfoo  bar\n";
    let m = search_buffer(&re("foo\\s+bar", true, false), "f", buf, 0, 10);
    assert_eq!((m.count, m.lines[0].line), (1, 2));
}

#[test]
fn context_and_case() {
    let buf = b"l1\nl2\nHIT\nl4\n";
    let m = search_buffer(&re("hit", false, true), "f", buf, 2, 10);
    assert_eq!(m.lines[0].before, ["l1", "l2"]);
    assert_eq!(m.lines[0].after, ["l4"]);
    assert_eq!(
        search_buffer(&re("hit", false, false), "f", buf, 0, 10).count,
        0
    );
}

#[test]
fn counting_without_records() {
    let m = search_buffer(&re("a", false, false), "f", b"a\na\na", 0, 0);
    assert_eq!((m.count, m.lines.len()), (3, 0));
}

#[test]
fn literal_metacharacters_are_literal() {
    let m = search_buffer(&re("a.b(", false, false), "f", b"axb(\na.b(\n", 0, 10);
    assert_eq!((m.count, m.lines[0].line), (1, 2));
}

#[test]
fn oversized_and_malformed_regexes_are_invalid_input() {
    let pol = Policy::from_json(r#"{"limits":{"max_regex_bytes":1000}}"#).unwrap();
    let a = SearchTextArgs {
        query: "(a{1,100}){1,100}".into(),
        regex: Some(true),
        ..Default::default()
    };
    assert_eq!(
        compile(&a, &pol).unwrap_err().code,
        crate::error::ErrorCode::InvalidInput
    );
    let a = SearchTextArgs {
        query: "(".into(),
        regex: Some(true),
        ..Default::default()
    };
    assert!(compile(&a, &pol).is_err());
    let deep = format!("{}a{}", "(".repeat(200), ")".repeat(200));
    let a = SearchTextArgs {
        query: deep,
        regex: Some(true),
        ..Default::default()
    };
    assert!(compile(&a, &Policy::from_json("").unwrap()).is_err());
}

#[test]
fn case_insensitive_literals_fold_ascii_and_still_see_unicode_forms() {
    let m = re("Mutex_Lock", false, true);
    assert!(m.literal.as_ref().is_some_and(Literal::folds));
    let buf = b"mutex_lock(a);\nMUTEX_LOCK\nmutex-lock\nx MuTeX_lOcK y mutex_lock\n";
    let got = search_buffer(&m, "f", buf, 0, 10);
    assert_eq!(got.count, 3);
    assert_eq!(
        got.lines
            .iter()
            .map(|l| (l.line, l.column))
            .collect::<Vec<_>>(),
        [(1, 1), (2, 1), (4, 3)]
    );
    // The Kelvin sign folds to 'k': a file with it is searched by the regex.
    let kelvin = "mutex_loc\u{212A}\n".as_bytes();
    assert_eq!(search_buffer(&m, "f", kelvin, 0, 10).count, 1);
    // Regexes and non-ASCII case-insensitive literals go to the regex.
    assert!(re("a.b", true, true).literal.is_none());
    assert!(re("é", false, true).literal.is_none());
    assert!(re("é", false, false).literal.is_some());
}

#[test]
fn required_literals_come_from_the_top_level_sequence() {
    let lits = |p: &str| -> Vec<String> {
        required_literals(p, 50)
            .iter()
            .map(|l| String::from_utf8_lossy(l.needle()).into_owned())
            .collect()
    };
    assert_eq!(
        lits(r"static\s+int\s+\w+_probe"),
        ["static", "_probe", "int"]
    );
    assert_eq!(lits(r"(foo)+bar"), ["foo", "bar"]);
    assert_eq!(lits(r"(?:foo){2}x?bar"), ["foo", "bar"]);
    assert_eq!(lits(r"(foo)*bar"), ["bar"]);
    assert_eq!(lits(r"foo|bar"), Vec::<String>::new());
    assert_eq!(lits(r"[A-Z]{4}_[0-9]{3}"), ["_"]);
    assert_eq!(lits(r"(?i)static"), Vec::<String>::new());
    assert_eq!(lits(r"^caf\u{e9}$"), ["caf\u{e9}"]);
}

#[test]
fn only_two_non_ascii_characters_fold_to_ascii_letters() {
    // The folding literal relies on this for files that are not all ASCII.
    let mut found = Vec::new();
    for letter in b'a'..=b'z' {
        let re = Regex::new(&format!("(?i)^{}$", letter as char)).unwrap();
        for c in (0x80u32..0x11_0000).filter_map(char::from_u32) {
            if re.is_match(c.to_string().as_bytes()) {
                found.push((letter as char, c));
            }
        }
    }
    assert_eq!(found, [('k', '\u{212A}'), ('s', '\u{17F}')]);
}

#[test]
fn a_match_far_into_a_long_line_is_shown_with_its_context_and_the_cuts_marked() {
    // Regression: the line's first 500 bytes came back, without the match at column 5001
    // and without a word about the cut.
    let mut line = "é".repeat(2500); // 5000 bytes of two-byte characters
    line.push_str("NEEDLE");
    line.push_str(&"ü".repeat(3000));
    line.push('\n');
    let m = search_buffer(&re("NEEDLE", false, false), "f", line.as_bytes(), 0, 10);
    let hit = &m.lines[0];
    assert_eq!(hit.column, 5001);
    assert!(hit.text.contains("NEEDLE"), "{}", hit.text);
    assert!(hit.cut_before > 0 && hit.cut_after > 0, "{hit:?}");
    assert!(hit.text.len() < 700, "{}", hit.text.len());
    assert!(
        hit.text
            .starts_with(&format!("[…{} bytes cut]", hit.cut_before)),
        "{}",
        hit.text
    );
    assert!(
        hit.text
            .ends_with(&format!("[{} bytes cut…]", hit.cut_after)),
        "{}",
        hit.text
    );
    // What is kept plus what was cut is the whole line; no character was split.
    let kept = hit
        .text
        .split_once(']')
        .and_then(|(_, r)| r.rsplit_once('['))
        .map(|(k, _)| k)
        .unwrap();
    assert!(!kept.contains('\u{fffd}'));
    assert_eq!(
        hit.cut_before as usize + kept.len() + hit.cut_after as usize,
        line.len() - 1
    );
    let at = hit.match_start as usize;
    assert_eq!(&hit.text[at..at + hit.match_len as usize], "NEEDLE");
    // A short line is whole and unmarked.
    let m = search_buffer(&re("b", false, false), "f", b"abc\n", 0, 10);
    assert_eq!(
        (
            m.lines[0].text.as_str(),
            m.lines[0].cut_before,
            m.lines[0].cut_after
        ),
        ("abc", 0, 0)
    );
}

#[test]
fn a_match_longer_than_the_window_keeps_its_start() {
    let line = format!("{}{}\n", "x".repeat(100), "y".repeat(5000));
    let m = search_buffer(&re("y+", true, false), "f", line.as_bytes(), 0, 10);
    let hit = &m.lines[0];
    assert!(hit.text.contains("xyyy"), "{}", hit.text);
    assert!(
        hit.cut_after > 0 && hit.text.len() < 1600,
        "{}",
        hit.text.len()
    );
}

#[test]
fn long_context_lines_are_cut_with_a_marker() {
    let buf = format!("{}\nHIT\n", "c".repeat(2000));
    let m = search_buffer(&re("HIT", false, false), "f", buf.as_bytes(), 1, 10);
    assert!(
        m.lines[0].before[0].ends_with("bytes cut…]"),
        "{}",
        m.lines[0].before[0]
    );
}

#[test]
fn shards_partition_paths() {
    let n = (0..1000)
        .filter(|i| crate::rules::walk::shard_of(&format!("f{i}"), 4) == 0)
        .count();
    assert!(n > 150 && n < 350, "{n}");
}
