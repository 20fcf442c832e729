//! The events a recording arena holds of the method it serves: at most [`PART_EVENTS`] (and
//! the two a phase mark adds), whatever the method's length. When the buffer is full, the API
//! layer writes it to the trace as a part of the method (`TraceWriter::write_part`, under the
//! trace's lock) and it starts again empty; the method's end writes the rest, in its one
//! frame when no part was written, else in its closing frame (`docs/formats.md`, "Methods in
//! parts").
//!
//! Positions are the method's: events written in parts count, so that a phase mark can name
//! where the events since the mark before began. A switch that belongs before an event
//! already written goes with the next frame as a fix-up (its position and phase), which
//! readers put in. Nothing here panics or aborts when memory runs out: a push fails.

use crate::error::Error;
use crate::fallible;
use crate::sys::jitarena_event as Event;

/// Events an arena holds before it writes them as a part: 64 Ki (1 MiB of events, 256 KiB of
/// site indices).
pub(crate) const PART_EVENTS: usize = 1 << 16;

/// A recording arena's events of the method it serves, and where its parts stand.
#[derive(Default)]
pub(crate) struct TraceBuffer {
    /// The events not written yet.
    events: Vec<Event>,
    /// The method's events before `events`: written in parts, or dropped, and the switches
    /// given as fix-ups.
    before: u64,
    /// The method's stream id in the trace, 0 until its first part.
    pub(crate) stream: u64,
    /// The parts written.
    pub(crate) parts: u64,
    /// The entries of the method's site table that parts carried.
    pub(crate) sites_written: usize,
    /// A phase switch to put in before an event written already: its position and phase.
    pub(crate) fixup: Option<(u64, u32)>,
    /// Why a part could not be written: the method writes nothing more, and its end says so.
    pub(crate) broken: Option<Error>,
    /// Whether events were dropped unwritten (no trace open, a part that could not be written,
    /// an event that could not be recorded): the method is then not written.
    pub(crate) lost: bool,
}

impl TraceBuffer {
    /// Appends an event. Fails only when memory runs out.
    #[inline]
    pub(crate) fn push(&mut self, event: Event) -> Result<(), ()> {
        fallible::push(&mut self.events, event).map_err(drop)
    }

    /// The method's events so far, written ones included.
    pub(crate) fn len(&self) -> usize {
        (self.before as usize).wrapping_add(self.events.len())
    }

    /// Puts `event` (a phase switch) at the method's position `at`: among the events held, or
    /// as the fix-up of an event written already. Fails when memory runs out, or for a second
    /// fix-up before a part carries the first (which one mark per part never makes).
    pub(crate) fn insert(&mut self, at: usize, event: Event) -> Result<(), ()> {
        let at = at as u64;
        match at.checked_sub(self.before) {
            Some(i) if i as usize <= self.events.len() => {
                self.events.try_reserve(1).map_err(drop)?;
                self.events.insert(i as usize, event); // within the room: no growth
                Ok(())
            }
            Some(_) => Err(()),
            None if self.fixup.is_none() => {
                self.fixup = Some((at, event.arg));
                self.before += 1;
                Ok(())
            }
            None => Err(()),
        }
    }

    /// Whether the buffer is to be written as a part.
    #[inline]
    pub(crate) fn full(&self) -> bool {
        self.events.len() >= PART_EVENTS
    }

    /// The events not written yet.
    pub(crate) fn events(&self) -> &[Event] {
        &self.events
    }

    /// After the events held were written as a part carrying the site table up to `sites`
    /// entries: they count as before the buffer, which is empty again.
    pub(crate) fn part_written(&mut self, sites: usize) {
        self.before += self.events.len() as u64;
        self.events.clear();
        self.parts += 1;
        self.sites_written = sites;
        self.fixup = None;
    }

    /// Drops the events held unwritten: the method will not be written.
    pub(crate) fn drop_held(&mut self) {
        self.before += self.events.len() as u64;
        self.events.clear();
        self.fixup = None;
        self.lost = true;
    }

    /// Forgets the method, keeping the buffer's memory for the next.
    #[inline(never)] // reached only by arenas that record a trace
    pub(crate) fn clear(&mut self) {
        self.events.clear();
        self.before = 0;
        self.stream = 0;
        self.parts = 0;
        self.sites_written = 0;
        self.fixup = None;
        self.broken = None;
        self.lost = false;
    }

    /// Forgets the method and gives the buffer's memory back.
    pub(crate) fn release(&mut self) {
        self.clear();
        self.events = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::{JITARENA_EVENT_ALLOC, JITARENA_EVENT_PHASE};

    fn alloc_event(kind: u32, size: u64) -> Event {
        Event {
            op: JITARENA_EVENT_ALLOC,
            arg: kind,
            size,
        }
    }

    fn phase_event(phase: u32) -> Event {
        Event {
            op: JITARENA_EVENT_PHASE,
            arg: phase,
            size: 0,
        }
    }

    #[test]
    fn positions_count_written_events_and_a_switch_before_them_is_a_fixup() {
        let mut b = TraceBuffer::default();
        for i in 0..5 {
            b.push(alloc_event(0, i)).unwrap();
        }
        b.insert(2, phase_event(7)).unwrap();
        assert_eq!(b.len(), 6);
        assert_eq!(b.events()[2], phase_event(7));
        b.part_written(0);
        assert_eq!((b.len(), b.events().len(), b.parts), (6, 0, 1));
        b.push(alloc_event(0, 9)).unwrap();
        b.insert(4, phase_event(3)).unwrap();
        assert_eq!(b.fixup, Some((4, 3)));
        assert_eq!(b.len(), 8);
        assert!(b.insert(5, phase_event(1)).is_err(), "a second fix-up");
        b.insert(7, phase_event(1)).unwrap();
        assert_eq!(b.events(), &[phase_event(1), alloc_event(0, 9)]);
        assert!(b.insert(99, phase_event(1)).is_err());
        b.clear();
        assert_eq!((b.len(), b.parts, b.fixup), (0, 0, None));
    }
}
