//! Long-lived sessions of the `large` section that report the limits their calls run
//! into. They keep the default fuel and memory limits but a long wall-clock limit, so that
//! a call past the default 60 s is measured to its end and reported as over it; a call
//! refused by another limit is reported and measured again in a session with the
//! benchmark's large limits.

use std::path::Path;
use std::time::{Duration, Instant};

use file_tools_host::{code_name, Limits, Runtime, Session, ToolError};
use serde_json::{json, Value};

use super::{big_limits, policy};

pub fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

/// A long-lived session of one tree (the index on, the watch on or off) and what its
/// calls ran into.
pub struct Limited<'a> {
    rt: &'a Runtime,
    root: &'a Path,
    state: &'a Path,
    watch: bool,
    s: Session,
    big: Option<Session>,
    pub hits: Vec<String>,
}

impl<'a> Limited<'a> {
    pub fn open(rt: &'a Runtime, root: &'a Path, state: &'a Path, watch: bool) -> Self {
        let limits = Limits {
            timeout: Duration::from_secs(3600),
            ..Limits::default()
        };
        let s = session(rt, root, state, watch, limits);
        Limited {
            rt,
            root,
            state,
            watch,
            s,
            big: None,
            hits: Vec::new(),
        }
    }

    /// Runs `f` in the session; past the default timeout, or refused by a limit (then run
    /// again with large limits), it is noted. The time is the answering run's.
    pub fn run(
        &mut self,
        what: &str,
        f: impl Fn(&mut Session) -> Result<Value, ToolError>,
    ) -> (f64, Value) {
        let (t, r) = timed(|| f(&mut self.s));
        let default = Limits::default().timeout.as_secs_f64();
        if t > default {
            self.hits.push(format!(
                "{what}: {t:.1} s, over the default {default:.0} s call timeout"
            ));
        }
        match r {
            Ok(v) => (t, v),
            Err(e) => {
                self.hits.push(format!(
                    "{what}: {} after {t:.1} s ({}); measured again with large limits",
                    code_name(e.code),
                    e.message
                ));
                let (rt, root, state, watch) = (self.rt, self.root, self.state, self.watch);
                let big = self
                    .big
                    .get_or_insert_with(|| session(rt, root, state, watch, big_limits()));
                let (t, r) = timed(|| f(big));
                (t, r.unwrap_or_else(|e| panic!("{what}: {}", e.message)))
            }
        }
    }

    /// The middle time of three runs, and the last answer.
    pub fn p50(
        &mut self,
        what: &str,
        f: impl Fn(&mut Session) -> Result<Value, ToolError>,
    ) -> (f64, Value) {
        let mut times = Vec::new();
        let mut last = Value::Null;
        for _ in 0..3 {
            let (t, v) = self.run(what, &f);
            times.push(t);
            last = v;
        }
        times.sort_by(f64::total_cmp);
        (times[1], last)
    }
}

/// A session with the index on (up to 1 GiB); with the watch, it is also the index's
/// builder (`index_build::build` runs in it).
fn session(rt: &Runtime, root: &Path, state: &Path, watch: bool, limits: Limits) -> Session {
    let mut p = policy();
    p["limits"]["max_index_bytes"] = json!(1u64 << 30);
    Session::builder(rt)
        .repo(root)
        .policy(p)
        .limits(limits)
        .state_dir(state)
        .watch_tree(watch)
        .index_builder(watch)
        .build()
        .expect("session")
}
