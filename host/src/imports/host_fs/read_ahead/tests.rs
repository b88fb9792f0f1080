#![allow(clippy::unwrap_used)]
use super::*;
use crate::imports::host_fs::read_dir_stat;
use std::time::{Duration, Instant};

#[test]
fn the_walk_order_puts_a_subtree_before_the_next_sibling() {
    let mut paths = vec!["a.b", "a/z", "a", "", "a/b/c", "b", "a-b", "a/b"];
    paths.sort_by(|a, b| walk_order(a, b));
    assert_eq!(paths, ["", "a", "a/b", "a/b/c", "a/z", "a-b", "a.b", "b"]);
}

/// A repository of `dirs` directories `d000`... below `repo/`, each with a file and
/// a subdirectory `sub` holding a file; `outside/` beside it holds `secret.txt`.
fn tree(dirs: usize) -> (tempfile::TempDir, Arc<Dir>) {
    let t = tempfile::tempdir().unwrap();
    for i in 0..dirs {
        let d = t.path().join(format!("repo/d{i:03}/sub"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f.txt"), "x").unwrap();
        std::fs::write(d.parent().unwrap().join("g.txt"), "y").unwrap();
    }
    std::fs::create_dir_all(t.path().join("outside")).unwrap();
    std::fs::write(t.path().join("outside/secret.txt"), "s").unwrap();
    let dir = Dir::open_ambient_dir(t.path().join("repo"), cap_std::ambient_authority());
    (t, Arc::new(dir.unwrap()))
}

fn names(listing: &Listing<DirEntryStat>) -> Vec<String> {
    let mut n: Vec<String> = listing
        .as_ref()
        .unwrap()
        .iter()
        .map(|e| e.name.clone().unwrap())
        .collect();
    n.sort();
    n
}

/// Waits until the thread has made the listing of `path` (or, with `queued`, until it
/// has it or has it not to list), or is full without `path` (10 s at most).
fn settled_as(l: &Listings<DirEntryStat>, path: Option<&str>, queued: bool) -> bool {
    let shared = &l.ahead.as_ref().unwrap().shared;
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let st = shared.lock();
        let ready = match path {
            Some(p) if queued => {
                st.done.contains_key(p)
                    || (st.busy.as_deref() != Some(p) && !st.todo.iter().any(|t| t == p))
            }
            Some(p) => st.done.contains_key(p),
            None => st.busy.is_none() && (st.todo.is_empty() || st.full()),
        };
        if ready {
            return true;
        }
        drop(st);
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

fn settled(l: &Listings<DirEntryStat>, path: Option<&str>) -> bool {
    settled_as(l, path, false)
}

/// Lists `path` as the host does: read ahead (by `by`), else at once and noted.
fn list_by(
    l: &mut Listings<DirEntryStat>,
    dir: &Arc<Dir>,
    path: &str,
    by: List<DirEntryStat>,
) -> (Listing<DirEntryStat>, bool) {
    if let Some(listing) = l.take(path) {
        return (listing, true);
    }
    let listing = read_dir_stat(dir, path, usize::MAX);
    l.listed(dir, path, &listing, by);
    (listing, false)
}

fn list(
    l: &mut Listings<DirEntryStat>,
    dir: &Arc<Dir>,
    path: &str,
) -> (Listing<DirEntryStat>, bool) {
    list_by(l, dir, path, read_dir_stat)
}

/// The root's listing and `d000`'s, made at once: the second starts the thread
/// (reading by `by`) when none of the instance runs.
fn begun(l: &mut Listings<DirEntryStat>, dir: &Arc<Dir>, by: List<DirEntryStat>) {
    for path in ["", "d000"] {
        let (_, from_ahead) = list_by(l, dir, path, by);
        assert!(!from_ahead);
    }
}

#[test]
fn a_walk_gets_the_listings_it_would_make_and_most_from_ahead() {
    let (_t, dir) = tree(40);
    let mut l = Listings::default();
    let _ = list(&mut l, &dir, "");
    assert!(l.ahead.is_none(), "one listing starts no thread");
    let _ = list(&mut l, &dir, "d000");
    assert!(l.ahead.is_some(), "a second listing does");
    let mut ahead = 0;
    for i in 0..40 {
        for path in [format!("d{i:03}"), format!("d{i:03}/sub")] {
            if path == "d000" {
                continue;
            }
            // Every third directory is waited for, so that some answers surely come
            // from the thread; the rest race it, as a walk does.
            if i % 3 == 0 {
                assert!(settled(&l, Some(&path)), "{path} was never read ahead");
            }
            let (got, from_ahead) = list(&mut l, &dir, &path);
            assert_eq!(
                names(&got),
                names(&read_dir_stat(&dir, &path, usize::MAX)),
                "{path}"
            );
            ahead += usize::from(from_ahead);
        }
    }
    assert!(ahead >= 26, "only {ahead} listings came from ahead");
    // Nothing the walk passed is kept (the last one asked for may come in late).
    assert!(settled(&l, None));
    let st = l.ahead.as_ref().unwrap().shared.lock();
    assert!(st.todo.is_empty());
    assert!(
        st.done.keys().all(|k| k == "d039/sub"),
        "{:?}",
        st.done.keys()
    );
}

/// Directories (each with a subdirectory) of the tree [`at_its_bound`] makes: more
/// than the bound holds.
const DIRS: usize = MAX_LISTINGS * 3 / 4 + 50;

/// A tree of [`DIRS`] directories (see [`tree`]) and the listings of a walk begun in it,
/// once its thread has listed ahead as far as it may.
fn at_its_bound() -> (tempfile::TempDir, Arc<Dir>, Listings<DirEntryStat>) {
    let (t, dir) = tree(DIRS);
    let mut l = Listings::default();
    begun(&mut l, &dir, read_dir_stat);
    assert!(settled(&l, None));
    (t, dir, l)
}

#[test]
fn the_thread_holds_at_most_its_bound_and_lets_go_of_what_the_walk_passed() {
    let (_t, dir, mut l) = at_its_bound();
    {
        let st = l.ahead.as_ref().unwrap().shared.lock();
        assert_eq!(st.done.len(), MAX_LISTINGS);
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        l.ahead.as_ref().unwrap().shared.lock().done.len(),
        MAX_LISTINGS
    );
    // The walk jumps ahead: everything before is let go, and the thread goes on.
    let (_, from_ahead) = list(&mut l, &dir, "d300");
    assert!(!from_ahead);
    assert!(settled(&l, Some("d301/sub")));
    let st = l.ahead.as_ref().unwrap().shared.lock();
    assert!(
        st.done.keys().all(|k| k.as_str() > "d300"),
        "{:?}",
        st.done.keys()
    );
}

/// A thread that ran ahead to its bound is not woken at every listing the walk takes
/// (it would make one listing and wait again, a wake-up per directory), nor goes on
/// when woken for no reason, but once half of the listings are taken; then it fills
/// the bound again.
#[test]
fn a_full_thread_is_woken_once_half_its_listings_are_taken() {
    let (_t, dir, mut l) = at_its_bound();
    let waiting = |l: &Listings<DirEntryStat>| l.ahead.as_ref().unwrap().shared.lock().done.len();
    assert_eq!(waiting(&l), MAX_LISTINGS);
    let mut order = vec!["d000/sub".to_string()];
    for i in 1..DIRS {
        order.push(format!("d{i:03}"));
        order.push(format!("d{i:03}/sub"));
    }
    let mut taken = order.iter();
    for _ in 0..MAX_LISTINGS / 2 - 1 {
        let (_, from_ahead) = list(&mut l, &dir, taken.next().unwrap());
        assert!(from_ahead);
    }
    // A wake-up for no reason (as a condition variable may have) puts it back to
    // sleep; then time enough for a woken thread to list many directories.
    l.ahead.as_ref().unwrap().shared.changed.notify_all();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(waiting(&l), MAX_LISTINGS / 2 + 1);
    let (_, from_ahead) = list(&mut l, &dir, taken.next().unwrap());
    assert!(from_ahead);
    assert!(settled(&l, None));
    assert_eq!(waiting(&l), MAX_LISTINGS);
}

/// A walk that passes over listings the thread made (a subtree it skips) and takes
/// the rest leaves the thread waiting with only passed-over listings, more than half
/// its bound, so no listing taken wakes it: the first directory the walk then lists
/// itself lets those go and wakes the thread, and the next listings come from ahead
/// again.
#[test]
fn a_walk_that_skips_listings_made_ahead_gets_the_thread_back() {
    let (_t, dir, mut l) = at_its_bound();
    let shared = l.ahead.as_ref().unwrap().shared.clone();
    let last = {
        let st = shared.lock();
        st.done
            .keys()
            .max_by(|a, b| walk_order(a, b))
            .unwrap()
            .clone()
    };
    // Skips `d000/sub` to the subdirectory before `from` (more than half the bound),
    // then takes all the rest that was made.
    let mut from = MAX_LISTINGS / 4 + 10;
    let skipped = 2 * from - 1;
    loop {
        let path = format!("d{from:03}");
        for p in [path.clone(), format!("{path}/sub")] {
            if walk_order(&p, &last) != Ordering::Greater {
                let (_, from_ahead) = list(&mut l, &dir, &p);
                assert!(from_ahead, "{p}");
            }
        }
        if walk_order(&format!("{path}/sub"), &last) != Ordering::Less {
            break;
        }
        from += 1;
    }
    {
        let st = shared.lock();
        assert!(st.done.len() <= skipped, "{}", st.done.len());
    }
    let next = format!("d{:03}", from + 1);
    let (_, from_ahead) = list(&mut l, &dir, &next);
    assert!(
        !from_ahead,
        "the thread was at its bound, not beyond {last}"
    );
    assert!(shared
        .lock()
        .done
        .keys()
        .all(|k| walk_order(k, &next) == Ordering::Greater));
    assert!(settled(&l, Some(&format!("d{:03}/sub", from + 2))));
    let (_, from_ahead) = list(&mut l, &dir, &format!("d{:03}/sub", from + 1));
    assert!(from_ahead);
}

/// A walk that lists a directory for itself while the listings made ahead fill the
/// bound (they lie after it: made while a directory whose subtree comes first was
/// being listed) lets go of those farthest ahead, down to half the bound, and the
/// thread lists again.
#[test]
fn a_bound_filled_far_ahead_is_let_go_when_the_walk_lists_for_itself() {
    let (t, dir, mut l) = at_its_bound();
    let shared = l.ahead.as_ref().unwrap().shared.clone();
    let (nearest, farthest) = {
        let st = shared.lock();
        let mut made: Vec<String> = st.done.keys().cloned().collect();
        made.sort_by(|a, b| walk_order(a, b));
        (made[0].clone(), made[made.len() - 1].clone())
    };
    assert_eq!(nearest, "d000/sub");
    // A directory that came after the thread listed its parent: the walk lists it.
    std::fs::create_dir(t.path().join("repo/d000/sub/new")).unwrap();
    let (_, from_ahead) = list(&mut l, &dir, "d000/sub");
    assert!(from_ahead);
    let (_, from_ahead) = list(&mut l, &dir, "d000/sub/new");
    assert!(!from_ahead);
    {
        let st = shared.lock();
        assert!(!st.done.contains_key(&farthest), "{farthest} was kept");
        assert!(st.done.contains_key("d001"));
    }
    // The thread lists on past what was let go's start, and the walk's next listings
    // come from ahead.
    assert!(settled(&l, None));
    assert!(shared.lock().done.len() > MAX_LISTINGS / 2);
    let (_, from_ahead) = list(&mut l, &dir, "d001");
    assert!(from_ahead);
}

type Gate = (Mutex<bool>, Condvar);

/// Lists as the host does, but holds `d005` until `gate` opens (10 s at most).
fn held_at_d005(gate: &Gate, dir: &Dir, path: &str, max: usize) -> Listing<DirEntryStat> {
    if path == "d005" {
        let (open, changed) = gate;
        let mut is_open = open.lock().unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        while !*is_open && Instant::now() < until {
            is_open = changed
                .wait_timeout(is_open, Duration::from_millis(50))
                .unwrap()
                .0;
        }
    }
    read_dir_stat(dir, path, max)
}

fn open(gate: &Gate) {
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
}

static GATE: Gate = (Mutex::new(false), Condvar::new());
static GATE_LARGE: Gate = (Mutex::new(false), Condvar::new());

fn held(dir: &Dir, path: &str, max: usize) -> Listing<DirEntryStat> {
    held_at_d005(&GATE, dir, path, max)
}

fn held_large(dir: &Dir, path: &str, max: usize) -> Listing<DirEntryStat> {
    held_at_d005(&GATE_LARGE, dir, path, max)
}

/// Asks for `d001` to `d004/sub` (from ahead), until the thread is held at `d005`.
fn up_to_d005(l: &mut Listings<DirEntryStat>, dir: &Arc<Dir>, by: List<DirEntryStat>) {
    begun(l, dir, by);
    let shared = l.ahead.as_ref().unwrap().shared.clone();
    for path in ["d000/sub", "d001", "d001/sub", "d002", "d002/sub", "d003"] {
        assert!(settled(l, Some(path)));
        assert!(list_by(l, dir, path, by).1, "{path}");
    }
    let until = Instant::now() + Duration::from_secs(10);
    while shared.lock().busy.as_deref() != Some("d005") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    for path in ["d003/sub", "d004", "d004/sub"] {
        assert!(list_by(l, dir, path, by).1, "{path}");
    }
}

/// While the thread is held at `d005`, a walk waiting for it may list the next one
/// itself, but only up to [`HELP_MAX_ENTRIES`] entries: a larger directory (`d006`
/// here) goes back to the thread, whole, and the walk waits.
#[test]
fn a_walk_waiting_for_the_thread_leaves_a_large_directory_to_it() {
    let (t, dir) = tree(12);
    for i in 0..=HELP_MAX_ENTRIES {
        std::fs::write(t.path().join(format!("repo/d006/f{i}")), "").unwrap();
    }
    let mut l = Listings::default();
    up_to_d005(&mut l, &dir, held_large);
    let shared = l.ahead.as_ref().unwrap().shared.clone();
    let walk = std::thread::spawn(move || {
        let got = list_by(&mut l, &dir, "d005", held_large);
        (l, dir, got)
    });
    let until = Instant::now() + Duration::from_secs(10);
    while !shared.lock().waiting && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Time for a walk that would list on to do so.
    std::thread::sleep(Duration::from_millis(100));
    {
        let st = shared.lock();
        assert!(st.waiting, "the walk is not waiting");
        assert_eq!(st.todo.last().map(String::as_str), Some("d006"));
        assert!(st.done.is_empty(), "{:?}", st.done.keys());
    }
    open(&GATE_LARGE);
    let (mut l, dir, (_, from_ahead)) = walk.join().unwrap();
    assert!(from_ahead);
    for path in ["d005/sub", "d006"] {
        assert!(settled(&l, Some(path)));
    }
    let (_, from_ahead) = list_by(&mut l, &dir, "d005/sub", held_large);
    assert!(from_ahead);
    let (got, from_ahead) = list_by(&mut l, &dir, "d006", held_large);
    assert!(from_ahead);
    assert_eq!(names(&got).len(), HELP_MAX_ENTRIES + 3);
}

/// A walk that asks for the listing the thread is making does not wait idle: it makes
/// the next listings to come meanwhile, so that both list when the thread is the
/// slower.
#[test]
fn a_walk_waiting_for_the_thread_makes_the_next_listings_itself() {
    let (_t, dir) = tree(12);
    let (done, got) = std::sync::mpsc::channel();
    let mut l = Listings::default();
    up_to_d005(&mut l, &dir, held);
    let shared = l.ahead.as_ref().unwrap().shared.clone();
    let walk = std::thread::spawn(move || {
        let got = list_by(&mut l, &dir, "d005", held);
        done.send(()).unwrap();
        (l, dir, got)
    });
    // While the thread is held at d005, the waiting walk lists what follows it.
    let until = Instant::now() + Duration::from_secs(10);
    while !shared.lock().done.contains_key("d006") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    let helped = shared.lock().done.contains_key("d006");
    assert!(got.try_recv().is_err(), "the walk did not wait for d005");
    open(&GATE);
    let (mut l, dir, (listing, from_ahead)) = walk.join().unwrap();
    assert!(
        helped,
        "nothing after d005 was listed while the thread was held"
    );
    assert!(from_ahead);
    assert_eq!(
        names(&listing),
        names(&read_dir_stat(&dir, "d005", usize::MAX))
    );
    for path in ["d005/sub", "d006"] {
        assert!(settled(&l, Some(path)));
        assert!(list_by(&mut l, &dir, path, held).1, "{path}");
    }
}

#[test]
fn nothing_is_read_ahead_after_the_call_begins_to_change_files() {
    let (t, dir) = tree(3);
    let mut l = Listings::default();
    begun(&mut l, &dir, read_dir_stat);
    assert!(settled(&l, Some("d001")));
    l.stop();
    std::fs::write(t.path().join("repo/d001/new.txt"), "n").unwrap();
    let (got, from_ahead) = list(&mut l, &dir, "d001");
    assert!(!from_ahead);
    assert!(names(&got).contains(&"new.txt".to_string()));
    assert!(l.ahead.is_none() && l.first.is_none());
}

/// Lists as the host does, but panics at `d001` (after a moment, so that a walk can
/// be waiting for it).
fn panics_at_d001(dir: &Dir, path: &str, max: usize) -> Listing<DirEntryStat> {
    if path == "d001" {
        std::thread::sleep(Duration::from_millis(200));
        panic!("a listing that fails hard");
    }
    read_dir_stat(dir, path, max)
}

/// Lists as the host does, slowly.
fn slowly(dir: &Dir, path: &str, max: usize) -> Listing<DirEntryStat> {
    std::thread::sleep(Duration::from_millis(300));
    read_dir_stat(dir, path, max)
}

fn stopped(running: &AtomicBool) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while running.load(AtomicOrdering::Acquire) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    !running.load(AtomicOrdering::Acquire)
}

#[test]
fn a_thread_that_panics_leaves_the_walk_to_list_for_itself() {
    let (_t, dir) = tree(3);
    let (done, got) = std::sync::mpsc::channel();
    let walk = std::thread::spawn(move || {
        let mut l = Listings::default();
        begun(&mut l, &dir, panics_at_d001);
        let running = l.running.clone();
        let _ = list_by(&mut l, &dir, "d000/sub", panics_at_d001);
        // The walk asks for d001 while the thread is at it, then it panics.
        let shared = l.ahead.as_ref().unwrap().shared.clone();
        let until = Instant::now() + Duration::from_secs(10);
        while shared.lock().busy.as_deref() != Some("d001") && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (listing, from_ahead) = list_by(&mut l, &dir, "d001", panics_at_d001);
        done.send((names(&listing), from_ahead, stopped(&running)))
            .unwrap();
    });
    let (seen, from_ahead, ended) = got
        .recv_timeout(Duration::from_secs(30))
        .expect("the walk hung");
    walk.join().unwrap();
    assert_eq!(
        (seen, from_ahead),
        (vec!["g.txt".to_string(), "sub".to_string()], false)
    );
    assert!(ended, "the thread did not end");
}

#[test]
fn one_thread_at_a_time_reads_ahead_for_an_instance() {
    let (_t, dir) = tree(3);
    let running = Arc::new(AtomicBool::new(false));
    let walk = || Listings {
        running: running.clone(),
        ..Listings::default()
    };
    let mut first = walk();
    begun(&mut first, &dir, slowly);
    assert!(first.ahead.is_some());
    let mut second = walk();
    begun(&mut second, &dir, slowly);
    assert!(second.ahead.is_none(), "a second thread started");
    drop(first);
    assert!(stopped(&running));
    let mut third = walk();
    begun(&mut third, &dir, slowly);
    assert!(third.ahead.is_some());
}

#[test]
fn a_directory_swapped_for_a_symlink_is_never_listed_through_it() {
    let (t, dir) = tree(1);
    let repo = t.path().join("repo");
    let real = repo.join("flip");
    let parked = repo.join(".parked");
    std::fs::create_dir_all(real.join("inner")).unwrap();
    std::fs::write(real.join("inner/ok.txt"), "o").unwrap();
    std::fs::create_dir_all(&parked).unwrap();
    let link = repo.join("flip-link");
    std::os::unix::fs::symlink(t.path().join("outside"), &link).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        let (real, parked, link) = (real.clone(), parked.join("flip"), link.clone());
        std::thread::spawn(move || {
            let mut flips = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // `flip` is the directory, then the link to outside, then again.
                let _ = std::fs::rename(&real, &parked);
                let _ = std::fs::rename(&link, &real);
                let _ = std::fs::rename(&real, &link);
                let _ = std::fs::rename(&parked, &real);
                flips += 1;
            }
            flips
        })
    };
    let (mut served, mut flip_served) = (0, 0);
    for _ in 0..300 {
        let mut l = Listings::default();
        begun(&mut l, &dir, read_dir_stat);
        for path in ["d000/sub", "flip", "flip/inner"] {
            // The thread's listing when it is to make one (of `flip` only when the
            // root's listing showed a directory there), so that both paths are tried.
            assert!(settled_as(&l, Some(path), true));
            let (got, from_ahead) = list(&mut l, &dir, path);
            served += usize::from(from_ahead);
            flip_served += usize::from(from_ahead && path == "flip");
            if let Ok(entries) = got {
                let seen: Vec<_> = entries.iter().filter_map(|e| e.name.clone()).collect();
                assert!(
                    !seen.contains(&"secret.txt".to_string()),
                    "{path}: {seen:?}"
                );
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(flipper.join().unwrap() > 0);
    // Positive control: the read-ahead served listings in these rounds (of `flip`
    // too), and the outside directory is listable by a plain read.
    assert!(served > 0 && flip_served > 0, "{served} / {flip_served}");
    assert!(std::fs::read_dir(t.path().join("outside"))
        .unwrap()
        .any(|e| e.unwrap().file_name() == "secret.txt"));
}
