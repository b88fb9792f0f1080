#![allow(clippy::unwrap_used)]
use super::*;
use crate::rules::services::NoServices;

fn rec(size: u64, mtime: u64, taken: u64, what: What) -> Rec {
    Rec {
        id: Identity {
            size,
            mtime: Some(mtime),
            ctime: Some(mtime),
            inode: Some(7),
        },
        taken,
        what,
        generation: 0,
    }
}

fn text(words: &[u64]) -> What {
    What::Text(Filter::from_words(words.to_vec()))
}

#[test]
fn a_record_answers_only_for_the_same_metadata_well_after_it_was_taken() {
    let r = rec(10, 1_000, 1_000 + RACY_NS + 1, What::Binary);
    assert!(r.answers_for(&r.id));
    for other in [
        Identity { size: 11, ..r.id },
        Identity {
            mtime: Some(999),
            ..r.id
        },
        Identity {
            ctime: Some(2_000),
            ..r.id
        },
        Identity {
            inode: Some(8),
            ..r.id
        },
        Identity {
            mtime: None,
            ..r.id
        },
    ] {
        assert!(!r.answers_for(&other), "{other:?}");
    }
    // Written in the same timestamp step as the look: a later write could hide.
    let racy = rec(10, 1_000, 1_000 + RACY_NS, What::Binary);
    assert!(!racy.answers_for(&racy.id));
}

#[test]
fn the_index_stays_under_its_bound() {
    let mut ix = Index::new("b".into());
    ix.record("a", rec(1, 0, 0, text(&[0; 100])), 10_000);
    let w = ix.weight();
    assert!(w > 800);
    ix.record("b", rec(1, 0, 0, text(&[0; 100])), w + 100);
    assert_eq!(ix.len(), 1, "the second record would pass the bound");
    // Replacing a record frees what the old one took.
    ix.record("a", rec(1, 0, 0, text(&[0; 10])), w);
    assert!(ix.weight() < w);
    // A whole walk that does not show "a" forgets it.
    ix.start_marking();
    ix.forget_unmarked();
    assert!(ix.is_empty());
    assert_eq!(ix.weight(), 0);
}

#[test]
fn a_whole_walk_forgets_only_the_files_it_did_not_show() {
    let mut ix = Index::new("m".into());
    for p in ["kept", "gone", "stopped"] {
        ix.record(p, rec(1, 0, 0, What::Binary), u64::MAX);
    }
    ix.start_marking();
    ix.mark_seen("kept");
    ix.mark_seen("never recorded");
    // Put while the walk runs: shown by it, so kept (a new record, and one replaced).
    ix.record("new", rec(2, 0, 0, What::Binary), u64::MAX);
    ix.record("stopped", rec(3, 0, 0, What::Binary), u64::MAX);
    ix.forget_unmarked();
    let mut left: Vec<&str> = ix.records().map(|(p, _)| p).collect();
    left.sort_unstable();
    assert_eq!(left, ["kept", "new", "stopped"]);
    // The marks of one walk do not count for the next.
    ix.start_marking();
    ix.mark_seen("new");
    ix.forget_unmarked();
    assert_eq!(ix.records().map(|(p, _)| p).collect::<Vec<_>>(), ["new"]);
    // A walk that ends without seeing the whole tree forgets nothing, and a later record
    // is not marked for a walk that has ended.
    ix.start_marking();
    ix.stop_marking();
    ix.record("after", rec(4, 0, 0, What::Binary), u64::MAX);
    ix.forget_unmarked();
    assert_eq!(ix.len(), 2);
    let before = ix.weight();
    ix.start_marking();
    ix.mark_seen("after");
    ix.forget_unmarked();
    assert_eq!(ix.len(), 1);
    assert!(ix.weight() < before);
}

#[test]
fn a_ticket_finds_its_record_and_nothing_put_after_it() {
    let mut ix = Index::new("f".repeat(64));
    let g = ix.next_generation();
    let a = ix
        .record("a", rec(1, 0, 0, What::Binary), u64::MAX)
        .unwrap();
    assert_eq!(
        ix.confirm("a", g),
        Some(a),
        "confirming keeps the record's ticket"
    );
    assert_eq!(ix.confirmed_by(a, g), Some(&What::Binary));
    assert_eq!(ix.confirmed_by(a, g + 1), None, "another walk's mark");
    assert_eq!(ix.confirmed_by(Ticket::NONE, 0), None);
    // Replaced: the old ticket finds nothing, the new one the new record.
    let mut again = rec(2, 0, 0, What::TooLarge);
    again.generation = g;
    let a2 = ix.record("a", again.clone(), u64::MAX).unwrap();
    assert_eq!(ix.confirmed_by(a, g), None);
    assert_eq!(ix.confirmed_by(a2, g), Some(&What::TooLarge));
    // Removed, and its slot taken by another path with the same mark: neither old ticket
    // finds the newcomer.
    ix.remove("a");
    let b = ix.record("b", again, u64::MAX).unwrap();
    assert_eq!(ix.confirmed_by(a2, g), None);
    assert_eq!(ix.confirmed_by(a, g), None);
    assert_eq!(ix.confirmed_by(b, g), Some(&What::TooLarge));
    assert_eq!(ix.confirmed("b", g), Some(&What::TooLarge));
    assert_eq!(ix.len(), 1);
}

fn sample() -> Index {
    let mut ix = Index::new("f".repeat(64));
    ix.record(
        "src/a.rs",
        rec(5, 10, 20, text(&[1, u64::MAX, 3])),
        u64::MAX,
    );
    ix.record("b.bin", rec(6, 11, 21, What::Binary), u64::MAX);
    ix.record("big", rec(7, 12, 22, What::TooLarge), u64::MAX);
    ix.record("notes/ké", rec(8, 13, 23, What::Secret), u64::MAX);
    let mut no_times = rec(9, 0, 24, What::Binary);
    no_times.id.mtime = None;
    no_times.id.inode = None;
    ix.record("t", no_times, u64::MAX);
    ix
}

/// Every record of `ix`, by path.
fn sorted(ix: &Index) -> Vec<(String, Rec)> {
    let mut v: Vec<(String, Rec)> = ix
        .records()
        .map(|(p, r)| (p.to_string(), r.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Block sizes that cut the sample's fields everywhere: inside every length, number and
/// name, and at their edges.
const SMALL_BLOCKS: [u64; 7] = [1, 2, 3, 5, 8, 13, 64];

#[test]
fn an_index_comes_back_from_its_bytes_whole() {
    let ix = sample();
    let bytes = file::encode(&ix, &NoServices);
    let back = file::decode(&bytes, ix.bound_to(), &NoServices).unwrap();
    assert_eq!(sorted(&back), sorted(&ix));
    assert_eq!(back.len(), 5);
    assert_eq!(back.weight(), ix.weight());
    // Read in blocks that end inside fields, the same index.
    for block in SMALL_BLOCKS {
        let back = file::decode_in_blocks(&bytes, ix.bound_to(), &NoServices, block).unwrap();
        assert_eq!(sorted(&back), sorted(&ix), "block {block}");
        assert_eq!(back.weight(), ix.weight(), "block {block}");
    }
}

/// `body` (an index file without its checksum) with the checksum the format gives it: what
/// a writer of another version, or anyone who can write the state directory, could leave.
fn sealed(mut body: Vec<u8>) -> Vec<u8> {
    let mut parts = Vec::new();
    for chunk in body.chunks(32 << 20) {
        parts.extend_from_slice(crate::fs::hash::sha256_hex(chunk).as_bytes());
    }
    body.extend_from_slice(&crate::fs::hash::sha256(&parts));
    body
}

/// The sample's file without its checksum, and where its record count lies.
fn sample_body() -> (Vec<u8>, std::ops::Range<usize>) {
    let mut body = file::encode(&sample(), &NoServices);
    body.truncate(body.len() - 32);
    let at = 7 + 1 + 64;
    (body, at..at + 8)
}

#[test]
fn a_path_given_twice_keeps_its_later_record_and_the_weight_stays_true() {
    // Not what `encode` writes (each path once): the decoder must stay consistent, not
    // count a record twice. The later record of `b.bin` is text with three words, so its
    // weight differs from the first's.
    let (mut body, count) = sample_body();
    body[count].copy_from_slice(&6u64.to_le_bytes());
    body.extend_from_slice(&5u32.to_le_bytes());
    body.extend_from_slice(b"b.bin");
    for v in [99u64, 1, 2, 3, 4] {
        body.extend_from_slice(&v.to_le_bytes());
    }
    body.push(0);
    body.extend_from_slice(&3u32.to_le_bytes());
    for w in [7u64, 8, 9] {
        body.extend_from_slice(&w.to_le_bytes());
    }
    let bytes = sealed(body);
    let mut want = sample();
    want.record("b.bin", rec(99, 1, 4, text(&[7, 8, 9])), u64::MAX);
    let want_b = want
        .records()
        .find(|(p, _)| *p == "b.bin")
        .unwrap()
        .1
        .clone();
    for block in SMALL_BLOCKS.into_iter().chain([1 << 20]) {
        let back = file::decode_in_blocks(&bytes, want.bound_to(), &NoServices, block).unwrap();
        assert_eq!(back.len(), 5, "block {block}");
        assert_eq!(back.weight(), want.weight(), "block {block}");
        assert_ne!(back.weight(), sample().weight(), "block {block}");
        let b = back.records().find(|(p, _)| *p == "b.bin").unwrap().1;
        assert_eq!((b.id.size, &b.what), (99, &want_b.what), "block {block}");
    }
}

#[test]
fn a_count_that_disagrees_with_the_records_is_refused_under_a_good_checksum() {
    let binding = sample().bound_to().to_string();
    let (body, count) = sample_body();
    let with_count = |n: u64| {
        let mut b = body.clone();
        b[count.clone()].copy_from_slice(&n.to_le_bytes());
        sealed(b)
    };
    let decode = |bytes: &[u8]| file::decode(bytes, &binding, &NoServices);
    assert!(decode(&with_count(5)).is_some(), "the control");
    // Fewer records than the body holds: bytes left over. More: the body ends first, or
    // the count is more than any body of this length could hold (refused before room is
    // made for them), up to the largest count there is.
    for n in [0, 4, 6, 1 << 20, u64::from(u32::MAX) + 1, u64::MAX] {
        assert!(decode(&with_count(n)).is_none(), "count {n}");
    }
}

#[test]
fn a_damaged_foreign_or_truncated_index_is_refused() {
    let ix = sample();
    let bytes = file::encode(&ix, &NoServices);
    assert!(file::decode(&bytes, &"e".repeat(64), &NoServices).is_none());
    for block in SMALL_BLOCKS.into_iter().chain([1 << 20]) {
        let decode = |b: &[u8]| file::decode_in_blocks(b, ix.bound_to(), &NoServices, block);
        assert!(decode(&bytes).is_some(), "the control, block {block}");
        for cut in 0..bytes.len() {
            assert!(
                decode(&bytes[..cut]).is_none(),
                "cut at {cut}, block {block}"
            );
        }
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            assert!(
                decode(&bad).is_none(),
                "a flipped byte at {at} was not noticed, block {block}"
            );
        }
    }
}

#[test]
fn lengths_past_the_end_are_refused_even_under_a_good_checksum() {
    // A well-formed checksum over a record whose filter claims more words than follow:
    // what a writer of another version, or an attacker who can write the state
    // directory, could leave. Decoding must say no, not panic or allocate without bound.
    let ix = sample();
    let (mut body, _) = sample_body();
    let pos = body.windows(8).position(|w| w == b"src/a.rs").unwrap() + 8 + 40 + 1;
    body[pos..pos + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(file::decode(&sealed(body), ix.bound_to(), &NoServices).is_none());
}

#[test]
fn a_saved_index_loads_only_for_its_binding() {
    let tmp = tempfile::tempdir().unwrap();
    let mut ix = sample();
    file::save(&mut ix, tmp.path(), &NoServices);
    let back = file::load(tmp.path(), ix.bound_to(), &NoServices, ix.weight()).unwrap();
    assert_eq!(back.len(), ix.len());
    assert!(file::load(tmp.path(), &"e".repeat(64), &NoServices, u64::MAX).is_none());
    // An index heavier than the bound is not loaded.
    assert!(file::load(tmp.path(), ix.bound_to(), &NoServices, ix.weight() - 1).is_none());
}

/// Random records, replacements, removals (also by the weight bound and by `retain`) and
/// confirmations against a model: every ticket ever handed out finds a record only while
/// it is the current record of its own path, and then exactly what a look-up by that
/// path finds under the same generation; a freed slot taken by another path is never
/// reached through an old ticket.
#[test]
fn every_ticket_ever_handed_out_finds_only_the_current_record_of_its_own_path() {
    use std::collections::HashMap;
    let seed = crate::tests::index::clock_seed();
    let mut x = seed;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for _run in 0..20 {
        let mut ix = Index::new("t".repeat(64));
        // The model: each path's current record (told apart by its size) and ticket.
        let mut model: HashMap<String, (u64, Ticket)> = HashMap::new();
        let mut handed: Vec<(String, Ticket)> = Vec::new();
        let mut stamp = 0u64;
        let mut generation = ix.next_generation();
        let (mut found_current, mut refused_stale) = (0, 0);
        for _step in 0..2_000 {
            let path = format!("d/p{}", next(12));
            match next(10) {
                0..=3 => {
                    stamp += 1;
                    let mut r = rec(stamp, 0, 0, text(&vec![stamp; next(6) as usize]));
                    r.generation = [0, generation][next(2) as usize];
                    // A bound that sometimes refuses it (and so forgets the path).
                    let bound = [u64::MAX, ix.weight() + 40, ix.weight() + 200][next(3) as usize];
                    match ix.record(&path, r, bound) {
                        Some(t) => {
                            handed.push((path.clone(), t));
                            model.insert(path, (stamp, t));
                        }
                        None => {
                            model.remove(&path);
                        }
                    }
                }
                4 => {
                    ix.remove(&path);
                    model.remove(&path);
                }
                5 => {
                    // A whole walk that shows every path but one.
                    let cut = next(12);
                    let keep = |p: &str| p != format!("d/p{cut}");
                    ix.start_marking();
                    for i in 0..12 {
                        let p = format!("d/p{i}");
                        if keep(&p) {
                            ix.mark_seen(&p);
                        }
                    }
                    ix.forget_unmarked();
                    model.retain(|p, _| keep(p));
                }
                6 | 7 => {
                    let t = ix.confirm(&path, generation);
                    assert_eq!(t, model.get(&path).map(|m| m.1), "confirm keeps the ticket");
                    if let Some(t) = t {
                        handed.push((path, t));
                    }
                }
                8 => generation = ix.next_generation(),
                _ => {}
            }
            assert_eq!(ix.len(), model.len());
            for (p, t) in &handed {
                for g in [0, generation, generation.saturating_sub(1)] {
                    let by_ticket = ix.confirmed_by(*t, g);
                    let current = model.get(p).is_some_and(|m| m.1 == *t);
                    if !current {
                        assert_eq!(by_ticket, None, "a stale ticket of {p} found a record");
                        refused_stale += 1;
                        continue;
                    }
                    let by_path = ix.confirmed(p, g);
                    assert_eq!(by_ticket, by_path, "{p}");
                    if let Some(w) = by_ticket {
                        assert!(std::ptr::eq(w, by_path.unwrap()));
                        assert_eq!(
                            ix.records().find(|(q, _)| q == p).unwrap().1.id.size,
                            model[p].0
                        );
                        found_current += 1;
                    }
                }
            }
            handed.retain(|(p, t)| model.get(p).is_some_and(|m| m.1 == *t) || next(8) != 0);
        }
        assert!(
            found_current > 0 && refused_stale > 0,
            "{found_current} {refused_stale}"
        );
    }
}
