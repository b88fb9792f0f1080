//! The system's limit on file-system watches, reached for real. Linux also counts inotify
//! watches per user namespace (`/proc/sys/user/max_inotify_watches`, which leaves the
//! machine's `fs.inotify.max_user_watches` alone), so the test runs itself again inside a
//! new namespace whose limit it lowers (`unshare -Ur`): there a watch that cannot start
//! says so, and a running watch reports the limit when new directories go past it, instead
//! of missing their changes without a word.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use file_tools_host::watch::{watch, WatchEvent, WatchOptions};

use crate::support::*;

/// Set in the inner run, inside the namespace with the lowered limit.
const INNER: &str = "FILE_TOOLS_TEST_LOW_WATCH_LIMIT";
/// The watch limit inside the namespace.
const LIMIT: usize = 40;

#[test]
fn the_systems_watch_limit_is_reported_not_missed() {
    if std::env::var_os(INNER).is_some() {
        inside_the_lowered_limit();
        return;
    }
    let namespaces = Command::new("unshare")
        .args(["-Ur", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !namespaces {
        eprintln!(
            "SKIPPED: this machine gives no user namespaces (unshare -Ur), so the watch limit \
             cannot be lowered for this test alone"
        );
        return;
    }
    let script = format!(
        "echo {LIMIT} > /proc/sys/user/max_inotify_watches && exec \"$0\" --exact \
         watch_limit::the_systems_watch_limit_is_reported_not_missed --nocapture"
    );
    let out = Command::new("unshare")
        .args(["-Ur", "sh", "-c", &script])
        .arg(std::env::current_exe().unwrap())
        .env(INNER, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The inner run did run the test (a filter that matched nothing would pass too).
    assert!(stdout.contains("1 passed"), "{stdout}\n{stderr}");
}

fn inside_the_lowered_limit() {
    // More directories than the limit allows: the watch cannot start, and says why.
    let big = Fixture::new();
    for i in 0..LIMIT + 20 {
        std::fs::create_dir_all(big.repo.join(format!("many/d{i}"))).unwrap();
    }
    let session = Arc::new(Mutex::new(big.session()));
    let refused = watch(session, WatchOptions::default(), |_| {});
    let err = refused.expect_err("a watch past the limit cannot start");
    assert!(err.to_string().contains("limit"), "{err}");

    // Positive control: a small tree is watched, and a change in it is delivered.
    let small = Fixture::new();
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let got = got.clone();
        move |e: WatchEvent| got.lock().unwrap().push(e)
    };
    let session = Arc::new(Mutex::new(small.session()));
    let options = WatchOptions::default().debounce(Duration::from_millis(100));
    let w = watch(session, options, sink).unwrap();
    small.write("src/first.rs", b"x\n");
    let heard = |want: fn(&WatchEvent) -> bool| {
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if got.lock().unwrap().iter().any(want) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    let changes = |e: &WatchEvent| matches!(e, WatchEvent::Changes(r) if r.changes.iter().any(|c| c.path == "src/first.rs"));
    assert!(heard(changes), "{:?}", got.lock().unwrap());
    // New directories past the limit: the watch reports that it reached it.
    for i in 0..LIMIT + 20 {
        small.write(&format!("grown/d{i}/f.txt"), b"x\n");
    }
    let limit = |e: &WatchEvent| matches!(e, WatchEvent::WatchLimit(m) if m.contains("limit"));
    assert!(heard(limit), "{:?}", got.lock().unwrap());
    drop(w);
    let told = got
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, WatchEvent::WatchLimit(_)))
        .count();
    assert!(told <= 3, "the limit was told {told} times");
}
