//! Failure codes and messages, shared by the C ABI and the Rust API.

use std::borrow::Cow;
use std::cell::UnsafeCell;
use std::ffi::c_char;
use std::fmt;

/// Why an operation failed. The numeric values are the C header's `jitarena_error` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    /// A required pointer argument was NULL.
    Null = 1,
    /// The page allocator returned no memory, or the library's own bookkeeping could not be
    /// allocated.
    OutOfMemory = 2,
    /// The requested size cannot be represented.
    SizeOverflow = 3,
    /// Obtaining another page would exceed the configured limit.
    Limit = 4,
    /// The configuration was rejected.
    Config = 5,
    /// An internal error was caught at the API boundary.
    Internal = 6,
    /// A file could not be opened, read, written or closed.
    Io = 7,
    /// A call came in the wrong order, or an arena pointer is not a live arena.
    State = 8,
}

impl ErrorCode {
    /// The code for a C `int`, if it is one.
    pub fn from_raw(code: i32) -> Option<ErrorCode> {
        Some(match code {
            1 => ErrorCode::Null,
            2 => ErrorCode::OutOfMemory,
            3 => ErrorCode::SizeOverflow,
            4 => ErrorCode::Limit,
            5 => ErrorCode::Config,
            6 => ErrorCode::Internal,
            7 => ErrorCode::Io,
            8 => ErrorCode::State,
            _ => return None,
        })
    }

    /// The static text `jitarena_strerror` returns for this code.
    pub fn text(self) -> &'static str {
        match self {
            ErrorCode::Null => "a required pointer argument was NULL",
            ErrorCode::OutOfMemory => "out of memory",
            ErrorCode::SizeOverflow => "requested size too large to represent",
            ErrorCode::Limit => "the arena's memory limit would be exceeded",
            ErrorCode::Config => "invalid configuration or argument",
            ErrorCode::Internal => "internal error caught at the API boundary",
            ErrorCode::Io => "file input/output error",
            ErrorCode::State => "call out of order, or not a live arena",
        }
    }
}

/// A failure: its code and a message that names the file, size or field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The failure code.
    pub code: ErrorCode,
    /// The detailed message: a static text where nothing varies, so that making the error
    /// allocates nothing.
    pub message: Cow<'static, str>,
}

impl Error {
    /// A new error with a code and a message (a `&'static str` or a `String`).
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Bytes of this thread's last failure message, its terminating NUL included.
const LAST_ERROR_BYTES: usize = 1024;

/// Of a message too long for [`LAST_ERROR_BYTES`], the bytes kept from its start (its code's
/// text and what failed); the rest of the room keeps its end (the file's name and the
/// operating system's reason), with `...` between.
const LAST_ERROR_HEAD: usize = 320;

thread_local! {
    /// This thread's last failure message, NUL-terminated. Fixed, and without a destructor:
    /// recording a failure allocates nothing, and the message outlives the thread's other
    /// thread-locals (a C thread-exit handler or a C++ `thread_local` destructor may still
    /// call the library).
    static LAST_ERROR: UnsafeCell<[u8; LAST_ERROR_BYTES]> =
        const { UnsafeCell::new([0; LAST_ERROR_BYTES]) };
}

/// Records `err` as this thread's last failure message (for `jitarena_last_error_message`):
/// `"<code's text>: <message>"`, a NUL in the message written as `\0`, a message too long for
/// the room cut in its middle. Allocates nothing and cannot fail.
pub(crate) fn set_last_error(err: &Error) {
    let parts = [err.code.text(), ": ", &err.message];
    let _ = LAST_ERROR.try_with(|slot| {
        // SAFETY: the slot is this thread's, and no reference into it is alive: the pointer
        // `last_error_message` hands out is a raw one, whose text the contract says the next
        // failure replaces.
        let room = unsafe { &mut *slot.get() };
        store_escaped(room, &parts);
    });
}

/// Writes `parts`, one after the other, into `room` with a NUL after them; each NUL within
/// them becomes `\0`. If they do not fit, the first [`LAST_ERROR_HEAD`] bytes and as many of
/// the last ones as fit are kept, with `...` between, cut at characters.
fn store_escaped(room: &mut [u8], parts: &[&str]) {
    let escaped_len = |c: char| if c == '\0' { 2 } else { c.len_utf8() };
    let total: usize = parts.iter().flat_map(|p| p.chars()).map(escaped_len).sum();
    let room_text = room.len().saturating_sub(1);
    let (head, tail_from) = if total <= room_text {
        (total, total)
    } else {
        let head = LAST_ERROR_HEAD.min(room_text.saturating_sub(3));
        (head, total - (room_text - head - 3))
    };
    let mut at = 0; // bytes of the escaped text passed
    let mut len = 0; // bytes written into `room`
    let mut cut = false;
    let mut put = |bytes: &[u8], len: &mut usize| {
        if let Some(dest) = room.get_mut(*len..*len + bytes.len()) {
            dest.copy_from_slice(bytes);
            *len += bytes.len();
        }
    };
    for part in parts {
        for (i, c) in part.char_indices() {
            let n = escaped_len(c);
            if at + n <= head || at >= tail_from {
                let bytes = match c {
                    '\0' => b"\\0".as_slice(),
                    _ => part.as_bytes().get(i..i + n).unwrap_or_default(),
                };
                put(bytes, &mut len);
            } else if !cut {
                cut = true;
                put(b"...", &mut len);
            }
            at += n;
        }
    }
    if let Some(end) = room.get_mut(len) {
        *end = 0;
    }
}

/// This thread's last failure message, valid until the thread's next failure ("" before the
/// first).
pub(crate) fn last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|slot| slot.get().cast::<c_char>().cast_const())
        .unwrap_or(c"".as_ptr())
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    /// Calls the library while the thread tears down its thread-locals, after `LAST_ERROR` is
    /// gone, as a C++ `thread_local` destructor or a C thread-exit handler may.
    struct CallsAtTeardown;

    impl Drop for CallsAtTeardown {
        fn drop(&mut self) {
            set_last_error(&Error::new(ErrorCode::Null, "a NULL at thread exit"));
            let message = last_error_message();
            assert!(!message.is_null());
            eprintln!("teardown calls returned");
        }
    }

    fn stored(room: usize, parts: &[&str]) -> String {
        let mut buf = vec![0xffu8; room];
        store_escaped(&mut buf, parts);
        let end = buf.iter().position(|&b| b == 0).expect("a NUL");
        String::from_utf8(buf[..end].to_vec()).expect("UTF-8")
    }

    #[test]
    fn the_last_error_is_escaped_and_cut_in_its_middle() {
        assert_eq!(stored(64, &["io", ": ", "a\0b"]), "io: a\\0b");
        assert_eq!(stored(64, &[]), "");
        let fits = "x".repeat(LAST_ERROR_BYTES - 1);
        assert_eq!(stored(LAST_ERROR_BYTES, &[&fits]), fits);
        // One byte more: cut, with the start and the end kept.
        let long = format!("start{}end", "é".repeat(LAST_ERROR_BYTES / 2));
        let got = stored(LAST_ERROR_BYTES, &["code", ": ", &long]);
        assert!(
            got.len() < LAST_ERROR_BYTES && got.len() > LAST_ERROR_BYTES - 8,
            "{got}"
        );
        assert!(
            got.starts_with("code: starté") && got.ends_with("éend"),
            "{got}"
        );
        assert_eq!(got.matches("...").count(), 1);
        let head = got.find("...").unwrap();
        assert!(
            head <= LAST_ERROR_HEAD && head > LAST_ERROR_HEAD - 2,
            "{head}"
        );
        // NULs count as the two bytes they become.
        let nuls = "\0".repeat(LAST_ERROR_BYTES);
        let got = stored(LAST_ERROR_BYTES, &[&nuls]);
        assert!(
            got.len() >= LAST_ERROR_BYTES - 3 && !got.contains('\0'),
            "{}",
            got.len()
        );
        assert!(got.starts_with("\\0\\0") && got.ends_with("\\0"));
    }

    thread_local! {
        static LATE: CallsAtTeardown = const { CallsAtTeardown };
    }

    /// The check runs in a child process: on failure the thread's teardown aborts the process.
    #[test]
    fn the_last_error_survives_thread_teardown() {
        if std::env::var_os("JITARENA_TEARDOWN_CHILD").is_some() {
            std::thread::spawn(|| {
                // `LATE`'s destructor runs at the thread's exit, after every destructor
                // registered later; `LAST_ERROR` has none, and stays usable.
                LATE.with(|_| {});
                set_last_error(&Error::new(ErrorCode::Io, "first"));
            })
            .join()
            .unwrap();
            return;
        }
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "error::tests::the_last_error_survives_thread_teardown",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("JITARENA_TEARDOWN_CHILD", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}\n{stderr}", out.status);
        assert!(stderr.contains("teardown calls returned"), "{stderr}");
    }
}
