//! The directories a scan's walk visited: for each, how many entries the walk visited in
//! it and which of them are directories. Kept with a session's newest snapshot, so that a
//! later call that lists again only the directories a watch says changed
//! ([`super::watched`]) can tell whether each still holds the same subdirectories, and
//! how many entries the whole walk would now visit.

use crate::rules::fsx::EntryType;
use crate::rules::walk::WalkEntry;
use crate::text::keyhash::KeyMap;

/// What the walk visited directly in one directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirInfo {
    /// Entries visited (files, links, directories and special files alike).
    pub entries: u32,
    /// The names of the directories among them, in the walk's order.
    pub subdirs: Vec<String>,
    /// A file or link among them, or one of its ignore files, has other names, or its
    /// metadata is not known: a change through another name is reported to that name's
    /// directory only, so this one is listed again at every call.
    pub linked: bool,
}

impl DirInfo {
    /// Counts the visited entry `e`, which this directory holds.
    pub fn visited(&mut self, e: &WalkEntry) {
        self.entries += 1;
        match e.ty {
            EntryType::Dir => self.subdirs.push(e.path.name().to_string()),
            EntryType::File | EntryType::Symlink => {
                self.linked |= e.stat.is_none_or(|st| st.nlink > 1);
            }
            EntryType::Other => {}
        }
    }
}

/// Every directory a walk visited, the start directory included, by logical path.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    dirs: KeyMap<String, DirInfo>,
    /// Entries visited in all.
    total: u64,
    /// An ignore file of a directory above the walk's start has other names: no call may
    /// carry records over.
    pub fragile: bool,
}

impl Tree {
    /// The tree of a walk from `start`, before it visits anything.
    pub fn new(start: &str) -> Tree {
        let mut dirs = KeyMap::default();
        dirs.insert(start.to_string(), DirInfo::default());
        Tree {
            dirs,
            total: 0,
            fragile: false,
        }
    }

    /// Counts the visited entry `e` in its directory (already visited: a walk visits a
    /// directory before anything in it).
    pub fn visited(&mut self, e: &WalkEntry) {
        self.total += 1;
        if let Some(parent) = self.dirs.get_mut(e.path.parent_str()) {
            parent.visited(e);
        }
        if e.ty == EntryType::Dir {
            self.dirs
                .insert(e.path.as_str().to_string(), DirInfo::default());
        }
    }

    /// Marks the directories whose ignore files have other names (see
    /// [`crate::rules::walk_memo::WalkMemo::linked_rules`]): those the walk visited are
    /// listed again at every call; one above the start makes the tree fragile.
    pub fn linked_rules(&mut self, dirs: &[String]) {
        for d in dirs {
            match self.dirs.get_mut(d.as_str()) {
                Some(info) => info.linked = true,
                None => self.fragile = true,
            }
        }
    }

    /// What the walk visited directly in `dir`, when it visited `dir`.
    pub fn get(&self, dir: &str) -> Option<&DirInfo> {
        self.dirs.get(dir)
    }

    /// The directories listed again at every call (see [`DirInfo::linked`]).
    pub fn linked(&self) -> impl Iterator<Item = &str> {
        self.dirs
            .iter()
            .filter(|(_, d)| d.linked)
            .map(|(p, _)| p.as_str())
    }

    /// Entries visited in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// `dir`'s entry replaced by `info`, the total moved by the difference.
    pub fn replace(&mut self, dir: &str, info: DirInfo) {
        if let Some(old) = self.dirs.get_mut(dir) {
            self.total =
                (self.total + u64::from(info.entries)).saturating_sub(u64::from(old.entries));
            *old = info;
        }
    }
}
