//! The C entry points the out-of-memory tests call, declared once, and the few steps they all
//! take through them (shared by the test binaries that include it: `mod c_entry;`).
#![allow(dead_code)] // each binary calls some of it

use std::ffi::{c_char, c_void, CStr};

use ::jitarena::sys::{jitarena, jitarena_config, jitarena_method};

extern "C" {
    pub fn jitarena_config_init(config: *mut jitarena_config);
    pub fn jitarena_create(config: *const jitarena_config) -> *mut jitarena;
    pub fn jitarena_destroy(arena: *mut jitarena);
    pub fn jitarena_alloc_slow(arena: *mut jitarena, size: usize, kind: u32) -> *mut c_void;
    pub fn jitarena_method_done(arena: *mut jitarena, method: *const jitarena_method) -> i32;
    pub fn jitarena_trace_open(path: *const c_char) -> i32;
    pub fn jitarena_trace_close() -> i32;
    pub fn jitarena_last_error_message() -> *const c_char;
}

/// This thread's last error, as the library says it.
pub fn last_error() -> String {
    // SAFETY: the library returns a NUL-terminated string, valid until the next failure.
    unsafe { CStr::from_ptr(jitarena_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// A config of `kinds` and `phases` (the arrays must outlive the arenas made from it).
pub fn config(kinds: &[*const c_char], phases: &[*const c_char]) -> jitarena_config {
    let mut c = std::mem::MaybeUninit::<jitarena_config>::uninit();
    // SAFETY: `jitarena_config_init` writes the whole struct.
    let mut c = unsafe {
        jitarena_config_init(c.as_mut_ptr());
        c.assume_init()
    };
    c.kind_names = kinds.as_ptr();
    c.kind_count = kinds.len() as u32;
    c.phase_names = phases.as_ptr();
    c.phase_count = phases.len() as u32;
    c
}

/// An arena of `kinds` and `phases` (the arrays outlive it), with memory.
pub fn new_arena(kinds: &[*const c_char], phases: &[*const c_char]) -> *mut jitarena {
    // SAFETY: a valid config whose names outlive the call.
    let arena = unsafe { jitarena_create(&config(kinds, phases)) };
    assert!(!arena.is_null(), "{}", last_error());
    arena
}

/// A method named `name` (a static string) of context `context`, with no tier.
pub fn method(name: &'static CStr, context: i64) -> jitarena_method {
    jitarena_method {
        struct_size: std::mem::size_of::<jitarena_method>(),
        name: name.as_ptr(),
        context,
        tier: std::ptr::null(),
        failed: 0,
        reserved: 0,
    }
}
