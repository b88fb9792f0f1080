//! Progress of a long call (a walk, a search, a patch of many files), told to the host through
//! [`crate::rules::services::Services::progress`] at most once per [`FILES_PER_REPORT`] files or
//! [`BYTES_PER_REPORT`] bytes read: each report is a host call, and per-file host calls
//! are what makes walks slow.

use crate::rules::services::Services;

/// Files between two reports.
pub const FILES_PER_REPORT: u64 = 32;
/// Bytes read between two reports.
pub const BYTES_PER_REPORT: u64 = 1 << 20;

/// Counts files and matches of one call and reports them now and then.
#[derive(Debug, Default)]
pub struct Meter {
    files: u64,
    matches: u64,
    files_since: u64,
    bytes_since: u64,
}

impl Meter {
    /// One more file looked at (`bytes` of it read), and `matches` more matches.
    pub fn file(&mut self, services: &dyn Services, bytes: u64, matches: u64) {
        self.files += 1;
        self.matches += matches;
        self.files_since += 1;
        self.bytes_since += bytes;
        if self.files_since >= FILES_PER_REPORT || self.bytes_since >= BYTES_PER_REPORT {
            self.files_since = 0;
            self.bytes_since = 0;
            services.progress(self.files, self.matches);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<(u64, u64)>>);

    impl Services for Recorder {
        fn progress(&self, files: u64, matches: u64) {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((files, matches));
        }
    }

    #[test]
    fn reports_every_32_files_or_every_mebibyte_and_counts_only_grow() {
        let r = Recorder::default();
        let mut m = Meter::default();
        for _ in 0..100 {
            m.file(&r, 10, 1);
        }
        m.file(&r, 2 << 20, 5);
        let seen = r.0.lock().unwrap().clone();
        assert_eq!(seen, [(32, 32), (64, 64), (96, 96), (101, 105)]);
    }
}
