//! Allocation sites of a traced method, and the modules they lie in.
//!
//! While a trace is recorded, every allocation reaches the out-of-line slow path, whose C
//! entry point (`src/driver/site.c`) passes on its return address: the allocation's call
//! site in the JIT's code. The arena keeps each method's distinct sites once
//! ([`MethodSites`]: a table of addresses and, per allocation, an index into it); the trace
//! writer turns each address into a module and an offset from the module's load address
//! ([`Modules`], from `dl_iterate_phdr` on Linux), which stays the same under ASLR and tells
//! two copies of a JIT in one process apart. Where modules cannot be listed (Windows, macOS:
//! not yet), every site is written as an unknown module. Nothing here panics or aborts when
//! memory runs out: a failure is returned and the method's trace is refused.

use crate::fallible;

/// The sites of one method's allocations: each distinct return address once, in order of
/// first use, and per allocation the index of its site. Addresses are looked up in an
/// open-addressing table, so that a method of many allocations costs one probe or two each.
#[derive(Default)]
pub(crate) struct MethodSites {
    /// The distinct sites, in order of first use (0: unknown).
    addrs: Vec<usize>,
    /// Per allocation, in order: the index of its site in `addrs`.
    of_alloc: Vec<u32>,
    /// Open addressing over `addrs`: index + 1, or 0 for an empty slot. Its length is 0 or a
    /// power of two at least twice `addrs.len()`.
    table: Vec<u32>,
}

impl MethodSites {
    /// Records the site of the next allocation. Fails, with nothing recorded, only when
    /// memory runs out.
    #[inline]
    pub(crate) fn record(&mut self, addr: usize) -> Result<(), ()> {
        let index = self.index_of(addr)?;
        match fallible::push_within(&mut self.of_alloc, index) {
            Ok(()) => Ok(()),
            Err(index) => fallible::push(&mut self.of_alloc, index).map_err(drop),
        }
    }

    /// The index of `addr` in the table, added when new.
    #[inline]
    fn index_of(&mut self, addr: usize) -> Result<u32, ()> {
        if let Some(&last) = self.of_alloc.last() {
            // The same site twice in a row (a loop allocating) takes no probe.
            if self.addrs.get(last as usize) == Some(&addr) {
                return Ok(last);
            }
        }
        self.probe(addr)
    }

    /// [`MethodSites::index_of`] past its last-site check: the table's probe, out of line.
    #[inline(never)]
    fn probe(&mut self, addr: usize) -> Result<u32, ()> {
        if (self.addrs.len() + 1) * 2 > self.table.len() {
            self.grow()?;
        }
        let mask = self.table.len().wrapping_sub(1);
        let mut at = hash(addr) & mask;
        loop {
            match self.table.get(at).copied() {
                Some(0) => break,
                Some(entry) => {
                    let index = entry.wrapping_sub(1);
                    if self.addrs.get(index as usize) == Some(&addr) {
                        return Ok(index);
                    }
                }
                None => return Err(()),
            }
            at = at.wrapping_add(1) & mask;
        }
        let index = u32::try_from(self.addrs.len()).map_err(drop)?;
        fallible::push(&mut self.addrs, addr).map_err(drop)?;
        if let Some(slot) = self.table.get_mut(at) {
            *slot = index.wrapping_add(1);
        }
        Ok(index)
    }

    /// Doubles the table (at least 64 slots) and puts every address back in.
    #[cold]
    fn grow(&mut self) -> Result<(), ()> {
        let len = self.table.len().max(32).checked_mul(2).ok_or(())?;
        let mut table = fallible::filled(0u32, len).ok_or(())?;
        let mask = len - 1;
        for (index, &addr) in self.addrs.iter().enumerate() {
            let mut at = hash(addr) & mask;
            while table.get(at).is_some_and(|&e| e != 0) {
                at = at.wrapping_add(1) & mask;
            }
            if let Some(slot) = table.get_mut(at) {
                *slot = (index as u32).wrapping_add(1);
            }
        }
        self.table = table;
        Ok(())
    }

    /// Forgets the method's sites, keeping the memory for the next method.
    pub(crate) fn clear(&mut self) {
        // The table holds entries only for sites listed (no call to `memset` for an arena that
        // records no trace: a reset's every method).
        if !self.addrs.is_empty() {
            self.table.fill(0);
        }
        self.addrs.clear();
        self.of_alloc.clear();
    }

    /// After a part of the method was written: its allocations' indices are let go of (the
    /// table stays, so that later allocations keep their sites' indices).
    pub(crate) fn part_written(&mut self) {
        self.of_alloc.clear();
    }

    /// The distinct sites, in order of first use.
    pub(crate) fn addrs(&self) -> &[usize] {
        &self.addrs
    }

    /// Per allocation, in order, the index of its site in [`MethodSites::addrs`].
    pub(crate) fn of_alloc(&self) -> &[u32] {
        &self.of_alloc
    }
}

/// Fibonacci hashing of a code address (its low bits vary least between sites).
#[inline]
fn hash(addr: usize) -> usize {
    let h = (addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 32) as usize
}

/// A module loaded in the process: where its segments lie and the file it was loaded from.
pub(crate) struct Module {
    /// The lowest and one past the highest address of its loaded segments.
    start: usize,
    end: usize,
    /// Its load address: a site's offset is the address less this (the ELF virtual address of
    /// the site in the module's file).
    base: usize,
    /// Its file as the loader names it (the main program's from `/proc/self/exe`).
    pub(crate) path: Vec<u8>,
    /// Whether its frame is in the trace already.
    pub(crate) written: bool,
    /// Whether the method being written carries its frame.
    pub(crate) pending: bool,
}

impl Module {
    /// A module declared by a tool writing a trace: it holds no address of this process.
    pub(crate) fn declared(path: Vec<u8>) -> Module {
        Module {
            start: 0,
            end: 0,
            base: 0,
            path,
            written: false,
            pending: false,
        }
    }
}

/// The modules of the process seen so far, listed again when a site lies in none of them
/// (a module loaded since). A module's id in the trace is its index here plus 1 (0: unknown),
/// kept for the life of the trace.
#[derive(Default)]
pub(crate) struct Modules {
    pub(crate) list: Vec<Module>,
    /// Whether the modules were listed since the last site that lay in none of them.
    listed_for_miss: bool,
}

impl Modules {
    /// The module id (from 1; 0 when unknown) and offset of `addr`. Lists the process's
    /// modules when `addr` lies in none seen so far (at most once per method: see
    /// [`Modules::method_start`]). Fails only when memory runs out.
    pub(crate) fn locate(&mut self, addr: usize) -> Result<(u32, u64), ()> {
        if addr == 0 {
            return Ok((0, 0));
        }
        if let Some(found) = self.find(addr) {
            return Ok(found);
        }
        if !self.listed_for_miss {
            self.listed_for_miss = true;
            loaded(&mut self.list)?;
            if let Some(found) = self.find(addr) {
                return Ok(found);
            }
        }
        Ok((0, 0))
    }

    /// A new method: a site outside every known module may list them again.
    pub(crate) fn method_start(&mut self) {
        self.listed_for_miss = false;
    }

    fn find(&self, addr: usize) -> Option<(u32, u64)> {
        // The latest first: a module loaded where an unloaded one was.
        let (index, m) = self
            .list
            .iter()
            .enumerate()
            .rev()
            .find(|(_, m)| (m.start..m.end).contains(&addr))?;
        Some(((index + 1) as u32, addr.wrapping_sub(m.base) as u64))
    }
}

/// Adds the process's loaded modules that `list` lacks (by load address and file).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn loaded(list: &mut Vec<Module>) -> Result<(), ()> {
    use std::ffi::{c_int, c_void, CStr};

    struct State<'a> {
        list: &'a mut Vec<Module>,
        failed: bool,
        first: bool,
    }

    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the `State` passed to dl_iterate_phdr below, borrowed for the
        // call; `info` is the loader's description of one module, valid during the callback.
        let (state, info) = unsafe { (&mut *data.cast::<State<'_>>(), &*info) };
        let first = std::mem::replace(&mut state.first, false);
        let base = info.dlpi_addr as usize;
        let (mut start, mut end) = (usize::MAX, 0usize);
        for i in 0..usize::from(info.dlpi_phnum) {
            // SAFETY: the loader gives `dlpi_phnum` program headers at `dlpi_phdr`.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type == libc::PT_LOAD {
                let lo = base.wrapping_add(ph.p_vaddr as usize);
                start = start.min(lo);
                end = end.max(lo.wrapping_add(ph.p_memsz as usize));
            }
        }
        if start >= end {
            return 0;
        }
        let name: &[u8] = if info.dlpi_name.is_null() {
            &[]
        } else {
            // SAFETY: a non-NULL module name is a NUL-terminated string the loader keeps.
            unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes()
        };
        let known = state
            .list
            .iter()
            .any(|m| m.base == base && m.start == start && (name.is_empty() || m.path == name));
        if known {
            return 0;
        }
        let mut path = Vec::new();
        let ok = if name.is_empty() && first {
            main_program(&mut path)
        } else {
            path.try_reserve_exact(name.len()).is_ok() && fallible::extend_within(&mut path, name)
        };
        let module = Module {
            start,
            end,
            base,
            path,
            written: false,
            pending: false,
        };
        if !ok || fallible::push(state.list, module).is_err() {
            state.failed = true;
        }
        0
    }

    let mut state = State {
        list,
        failed: false,
        first: true,
    };
    // SAFETY: the callback only reads what the loader hands it and writes to `state`, which
    // outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut state).cast()) };
    if state.failed {
        Err(())
    } else {
        Ok(())
    }
}

/// The main program's file, from `/proc/self/exe` (empty when it cannot be read). False only
/// when memory runs out.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn main_program(path: &mut Vec<u8>) -> bool {
    const MAX: usize = 4096;
    if path.try_reserve_exact(MAX).is_err() {
        return false;
    }
    // SAFETY: the buffer has room for MAX bytes; readlink writes at most that many.
    let n = unsafe { libc::readlink(c"/proc/self/exe".as_ptr(), path.as_mut_ptr().cast(), MAX) };
    if n > 0 && (n as usize) < MAX {
        // SAFETY: readlink initialized the first n bytes.
        unsafe { path.set_len(n as usize) };
    }
    true
}

/// Modules cannot be listed here yet: every site is written as an unknown module.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn loaded(_list: &mut Vec<Module>) -> Result<(), ()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_numbered_once_in_order_of_first_use() {
        let mut s = MethodSites::default();
        let addrs: Vec<usize> = (0..1000).map(|i| 0x40_0000 + (i % 300) * 13).collect();
        for &a in &addrs {
            s.record(a).unwrap();
        }
        assert_eq!(s.addrs().len(), 300);
        assert_eq!(s.of_alloc().len(), 1000);
        for (i, &a) in addrs.iter().enumerate() {
            assert_eq!(s.addrs()[s.of_alloc()[i] as usize], a);
        }
        s.clear();
        s.record(7).unwrap();
        assert_eq!((s.addrs(), s.of_alloc()), (&[7][..], &[0][..]));
    }

    #[test]
    fn this_function_lies_in_a_listed_module() {
        let mut m = Modules::default();
        let here = this_function_lies_in_a_listed_module as fn() as usize;
        let (id, offset) = m.locate(here).unwrap();
        if cfg!(target_os = "linux") {
            assert!(id >= 1, "no module holds {here:#x}");
            assert!(!m.list[id as usize - 1].path.is_empty());
            assert!((offset as usize) < here || m.list[id as usize - 1].base == 0);
        }
        assert_eq!(m.locate(0).unwrap(), (0, 0));
    }
}
