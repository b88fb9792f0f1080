//! The records of an index by path, each kept in a numbered slot, so that a recorded walk
//! can hold a [`Ticket`] to each file's record and find it again without hashing the path
//! (on a large tree, the hash lookups were most of a search that reads nothing).

use std::collections::hash_map::Entry;

use super::Rec;
use crate::text::keyhash::KeyMap;

/// Where a record was put: its slot and the serial number it got there. A ticket finds
/// its record only while that very record is in the slot: a record replaced or removed
/// since, or another one put in the freed slot, has a serial no ticket ever held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    slot: u32,
    serial: u64,
}

impl Ticket {
    /// A ticket that finds nothing.
    pub const NONE: Ticket = Ticket {
        slot: u32::MAX,
        serial: 0,
    };
}

#[derive(Debug)]
struct Slot {
    /// 0 while the slot is free.
    serial: u64,
    /// The last mark put on the record ([`Records::mark`]); 0 for none.
    mark: u64,
    rec: Option<Rec>,
}

/// Records by path, and by ticket.
#[derive(Debug, Default)]
pub struct Records {
    slot_of: KeyMap<Box<str>, u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The last serial handed out (the first is 1).
    serial: u64,
}

impl Records {
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn get(&self, path: &str) -> Option<&Rec> {
        let slot = *self.slot_of.get(path)?;
        self.slots[slot as usize].rec.as_ref()
    }

    /// The record of `path` to change in place (its ticket stays valid), and its ticket.
    pub fn get_mut(&mut self, path: &str) -> Option<(&mut Rec, Ticket)> {
        let slot = *self.slot_of.get(path)?;
        let s = &mut self.slots[slot as usize];
        let ticket = Ticket {
            slot,
            serial: s.serial,
        };
        Some((s.rec.as_mut()?, ticket))
    }

    /// The record `ticket` holds, while it is still the one put there.
    pub fn by_ticket(&self, ticket: Ticket) -> Option<&Rec> {
        let s = self.slots.get(ticket.slot as usize)?;
        if s.serial != ticket.serial || ticket.serial == 0 {
            return None;
        }
        s.rec.as_ref()
    }

    /// Room for `n` more records without growing; `None` when the memory is not there.
    pub fn try_reserve(&mut self, n: usize) -> Option<()> {
        self.slot_of.try_reserve(n).ok()?;
        self.slots.try_reserve(n).ok()
    }

    /// Puts `rec` as the record of `path`, replacing any (whose tickets then find
    /// nothing); returns the new record's ticket and the old record. One hash of the path.
    pub fn insert(&mut self, path: &str, rec: Rec) -> (Ticket, Option<Rec>) {
        self.serial += 1;
        let serial = self.serial;
        match self.slot_of.entry(path.into()) {
            Entry::Occupied(e) => {
                let slot = *e.get();
                let s = &mut self.slots[slot as usize];
                s.serial = serial;
                (Ticket { slot, serial }, s.rec.replace(rec))
            }
            Entry::Vacant(e) => {
                let filled = Slot {
                    serial,
                    mark: 0,
                    rec: Some(rec),
                };
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot as usize] = filled;
                        slot
                    }
                    None => {
                        self.slots.push(filled);
                        (self.slots.len() - 1) as u32
                    }
                };
                e.insert(slot);
                (Ticket { slot, serial }, None)
            }
        }
    }

    /// Takes out the record of `path`; its slot is freed for another.
    pub fn remove(&mut self, path: &str) -> Option<Rec> {
        let slot = self.slot_of.remove(path)?;
        let s = &mut self.slots[slot as usize];
        s.serial = 0;
        self.free.push(slot);
        s.rec.take()
    }

    /// Puts `mark` on the record of `path`, if there is one.
    pub fn mark(&mut self, path: &str, mark: u64) {
        if let Some(&slot) = self.slot_of.get(path) {
            self.slots[slot as usize].mark = mark;
        }
    }

    /// Puts `mark` on the record `ticket` holds, while it is still the one put there.
    pub fn mark_by_ticket(&mut self, ticket: Ticket, mark: u64) {
        if let Some(s) = self.slots.get_mut(ticket.slot as usize) {
            if s.serial == ticket.serial && ticket.serial != 0 {
                s.mark = mark;
            }
        }
    }

    /// Takes out every record that does not bear `mark`, handing each to `gone`.
    pub fn retain_marked(&mut self, mark: u64, mut gone: impl FnMut(&str, Rec)) {
        let (slots, free) = (&mut self.slots, &mut self.free);
        self.slot_of.retain(|path, &mut slot| {
            let s = &mut slots[slot as usize];
            if s.mark == mark {
                return true;
            }
            s.serial = 0;
            free.push(slot);
            if let Some(rec) = s.rec.take() {
                gone(path, rec);
            }
            false
        });
    }

    /// Every path with its record, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Rec)> {
        self.slot_of
            .iter()
            .filter_map(|(p, &slot)| Some((&**p, self.slots[slot as usize].rec.as_ref()?)))
    }
}
