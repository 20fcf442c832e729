//! A stats-log record taken from its reader undecoded, with what decoding it needs: so that a
//! tool can read frames on one thread and decode records on another.
//!
//! A version-2 record's context and name are relative to the record before it, and its schema
//! and tier are ids into tables read before it: those are resolved by the reader, in file
//! order ([`crate::log::LogReader::detach_current`]); the counters, most of the work, depend
//! on nothing else and are decoded by [`RawRecord::decode`], anywhere.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::counters::Schema;
use crate::error::Error;
use crate::format::{self, Frame};
use crate::log::MethodRecord;
use crate::record::{self, Head};

/// A version-2 method record, detached from its reader (buffers reused from record to record).
#[derive(Default)]
pub struct RawRecord {
    path: PathBuf,
    offset: u64,
    payload: Vec<u8>,
    head: Head,
    schema: Option<Arc<Schema>>,
    tier: Option<Arc<str>>,
    name: String,
    context: i64,
    /// Reused by the checks of kinds by phase.
    scratch: Vec<u64>,
}

impl RawRecord {
    /// An empty record, to be filled by [`crate::log::LogReader::detach_current`].
    pub fn new() -> RawRecord {
        RawRecord::default()
    }

    /// Takes the frame of a record and what its reader resolved.
    pub(crate) fn fill(
        &mut self,
        path: &Path,
        frame: &Frame,
        head: &Head,
        (schema, tier): (&Arc<Schema>, Option<&Arc<str>>),
        (name, context): (&str, i64),
    ) {
        if self.path.as_path() != path {
            self.path = path.to_path_buf();
        }
        self.offset = frame.offset;
        self.payload.clear();
        self.payload.extend_from_slice(&frame.payload);
        self.head = head.clone();
        if !self.schema.as_ref().is_some_and(|s| Arc::ptr_eq(s, schema)) {
            self.schema = Some(Arc::clone(schema));
        }
        match (&self.tier, tier) {
            (Some(held), Some(t)) if Arc::ptr_eq(held, t) => {}
            _ => self.tier = tier.cloned(),
        }
        self.name.clear();
        self.name.push_str(name);
        self.context = context;
    }

    /// Decodes the record into `record`, reusing its buffers. A record that does not decode is
    /// an error naming the file and the record's offset, as its reader's would be.
    pub fn decode(&mut self, record: &mut MethodRecord) -> Result<(), Error> {
        let corrupt = |what: &str| format::corrupt(&self.path, self.offset, what);
        let Some(schema) = &self.schema else {
            return Err(corrupt("it was not read from a log"));
        };
        if !Arc::ptr_eq(&record.schema, schema) {
            record.schema = Arc::clone(schema);
        }
        let info = &mut record.info;
        info.context = self.context;
        match &self.tier {
            None => info.tier = None,
            Some(tier) => set(&mut info.tier, tier),
        }
        if self.name.is_empty() {
            info.name = None;
        } else {
            set(&mut info.name, &self.name);
        }
        record::decode_counts(
            &self.payload,
            &self.head,
            schema.kinds.len(),
            schema.phases.len(),
            &mut record.counts,
            &mut self.scratch,
        )
        .map_err(|e| corrupt(e.0))
    }
}

/// Sets `slot` to `text`, reusing its allocation.
fn set(slot: &mut Option<String>, text: &str) {
    match slot {
        Some(s) => {
            s.clear();
            s.push_str(text);
        }
        None => *slot = Some(text.to_string()),
    }
}
