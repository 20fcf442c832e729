//! Sites to source: a JIT module's DWARF line tables and inline frames, through the
//! `addr2line` crate's loader (ELF, split DWARF: `.dwo` and `.dwp` files). It does not follow
//! `.gnu_debuglink`: a separate debug file is given as the module itself. Windows' PE/PDB is
//! not read yet: such modules give `module+offset`.

use std::collections::HashMap;
use std::path::Path;

/// One frame at a site, innermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Its function, demangled (`?` when the debug information does not name it).
    pub function: String,
    /// Its source file (empty when unknown).
    pub file: String,
    /// Its line (0 when unknown).
    pub line: u32,
}

/// A module's debug information, and the frames of the sites looked up so far.
pub struct Symbolizer {
    loader: addr2line::Loader,
    cache: HashMap<u64, Vec<Frame>>,
    lines: bool,
}

impl Symbolizer {
    /// Opens `path`'s debug information; None when it cannot be read as an object file.
    pub fn open(path: &Path) -> Option<Symbolizer> {
        let loader = addr2line::Loader::new(path).ok()?;
        let mut s = Symbolizer {
            loader,
            cache: HashMap::new(),
            lines: false,
        };
        s.lines = s.loader.get_section_range(b".debug_line").is_some()
            || s.loader.get_section_range(b".debug_info").is_some();
        Some(s)
    }

    /// Whether the module has line tables (else only its symbols name functions).
    pub fn has_lines(&self) -> bool {
        self.lines
    }

    /// The frames of the call whose return address is at `offset` in the module, innermost
    /// first (empty when nothing is known of it). The call is looked up one byte before the
    /// return address, inside the call instruction.
    pub fn frames(&mut self, offset: u64) -> Vec<Frame> {
        if let Some(f) = self.cache.get(&offset) {
            return f.clone();
        }
        let probe = offset.saturating_sub(1);
        let mut out = Vec::new();
        if let Ok(mut iter) = self.loader.find_frames(probe) {
            while let Ok(Some(frame)) = iter.next() {
                let function = frame
                    .function
                    .as_ref()
                    .and_then(|f| f.demangle().ok().map(|n| n.into_owned()))
                    .unwrap_or_else(|| "?".to_string());
                let (file, line) = frame
                    .location
                    .map(|l| (l.file.unwrap_or("").to_string(), l.line.unwrap_or(0)))
                    .unwrap_or_default();
                out.push(Frame {
                    function,
                    file,
                    line,
                });
            }
        }
        if out.is_empty() {
            if let Some(symbol) = self.loader.find_symbol(probe) {
                out.push(Frame {
                    function: addr2line::demangle_auto(symbol.into(), None).into_owned(),
                    file: String::new(),
                    line: 0,
                });
            }
        }
        self.cache.insert(offset, out.clone());
        out
    }
}
