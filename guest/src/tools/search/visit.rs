//! What a search does with each entry a walk shows, and the replay of a recorded walk
//! (see [`crate::tools::index::tree`]) that shows the same entries without walking.

use super::{indexed, State};
use crate::rules::classify::Kind;
use crate::rules::fsx::EntryType;
use crate::rules::glob::Globs;
use crate::rules::walk::{Flow, Skips, WalkEntry};

impl State<'_> {
    /// What the search does with one entry a walk shows.
    pub(super) fn visit(&mut self, e: &WalkEntry, include: &Globs, exclude: &Globs) -> Flow {
        let p = e.path.as_str();
        if e.ty != EntryType::File {
            if e.ty == EntryType::Symlink {
                self.skips.add("symlink");
            } else if e.ty == EntryType::Other {
                self.skips.add("special");
            }
            return Flow::Continue;
        }
        if !include.is_empty() && !include.matches(p) || exclude.matches(p) {
            return Flow::Continue;
        }
        self.search_file(&e.path, p, e.kind, e.dir.as_ref());
        if self.stopped_by.is_some() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// Replays a recorded whole walk (see [`crate::tools::index::tree::Tree::replay`]).
    /// True when it stopped early (the search asked, or the recorded walk ran out of
    /// budget).
    pub(super) fn replay(
        &mut self,
        tree: &crate::tools::index::tree::Tree,
        include: &Globs,
        exclude: &Globs,
        walk_skips: &mut Skips,
    ) -> bool {
        tree.replay(walk_skips, |i, shown| {
            if self.replay_quick(shown, tree.ticket(i), include, exclude) {
                return Flow::Continue;
            }
            if let Some(ix) = &mut self.index {
                ix.visiting(i);
            }
            let e = WalkEntry {
                path: shown.path.clone(),
                ty: shown.ty,
                depth: 0,
                kind: shown.kind,
                dir: None,
                stat: None,
            };
            self.visit(&e, include, exclude)
        })
    }

    /// What [`State::visit`] does with a file the index answers for without a look, done
    /// without building a walk entry (most files of a replay while nothing changed), its
    /// record found by the walk's `ticket` to it. False when the entry needs the whole
    /// path.
    fn replay_quick(
        &mut self,
        shown: &crate::tools::index::tree::Shown,
        ticket: crate::tools::index::Ticket,
        include: &Globs,
        exclude: &Globs,
    ) -> bool {
        if shown.ty != EntryType::File {
            return false;
        }
        let p = shown.path.as_str();
        if !include.is_empty() && !include.matches(p) || exclude.matches(p) {
            return true;
        }
        if matches!(shown.kind, Kind::Secret | Kind::GitInternal | Kind::Binary) {
            return false;
        }
        let answer = self.index.as_ref().and_then(|ix| ix.trusted_by(ticket));
        match answer {
            Some(Some(indexed::Answer::Binary)) => self.skips.add("binary"),
            Some(Some(indexed::Answer::TooLarge)) => self.skips.add("too_large"),
            Some(Some(indexed::Answer::NoMatch)) => self.searched += 1,
            _ => return false,
        }
        self.meter.file(self.s.fs.services(), 0, 0);
        true
    }
}
