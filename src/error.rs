//! Failure codes and messages, shared by the C ABI and the Rust API.

use std::cell::RefCell;
use std::ffi::CString;
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
pub(crate) fn set_last_error(err: &Error) {
    let text = format!("{}: {}", err.code.text(), err.message);
    let c = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = c);
}

/// Runs `f` with this thread's last failure message.
pub(crate) fn with_last_error<R>(f: impl FnOnce(&CString) -> R) -> R {
    LAST_ERROR.with(|slot| f(&slot.borrow()))
}
