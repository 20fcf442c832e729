//! Failure codes and messages, shared by the C ABI and the Rust API.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::fmt;

/// Why an operation failed. The numeric values are the C header's `jitarena_error` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    /// A required pointer argument was NULL.
    Null = 1,
    /// The page allocator returned no memory.
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
            ErrorCode::OutOfMemory => "out of memory: the page allocator returned no memory",
            ErrorCode::SizeOverflow => "requested size too large to represent",
            ErrorCode::Limit => "the arena's memory limit would be exceeded",
            ErrorCode::Config => "invalid arena configuration",
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
    /// The detailed message.
    pub message: String,
}

impl Error {
    /// A new error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
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

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `err` as this thread's last failure message (for `jitarena_last_error_message`).
/// During thread teardown, once the message's storage is gone, the message is dropped: a C
/// thread-exit handler or a C++ `thread_local` destructor may still call the library.
pub(crate) fn set_last_error(err: &Error) {
    let text = format!("{}: {}", err.code.text(), err.message);
    let c = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = c;
        }
    });
}

/// This thread's last failure message, valid until the thread's next failure; "" during
/// thread teardown, once the message's storage is gone.
pub(crate) fn last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|slot| slot.try_borrow().map(|message| message.as_ptr()).ok())
        .ok()
        .flatten()
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

    thread_local! {
        static LATE: CallsAtTeardown = const { CallsAtTeardown };
    }

    /// The check runs in a child process: on failure the thread's teardown aborts the process.
    #[test]
    fn the_last_error_survives_thread_teardown() {
        if std::env::var_os("JITARENA_TEARDOWN_CHILD").is_some() {
            std::thread::spawn(|| {
                // Destructors run in the reverse order of first use: `LATE` is first used
                // before `LAST_ERROR`, so its destructor runs after `LAST_ERROR` is destroyed.
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
