//! Failure messages built without `format!`, for the code that a JIT links.
//!
//! `format!` runs `core::fmt`, whose code can panic, and grows a `String` that aborts the
//! process when memory runs out. A message of the C boundary is instead put together from
//! pieces ([`Piece`]: text, integers, addresses, paths, quoted names, I/O errors) by the
//! `message!` macro, into a `String` whose one allocation is fallible: if
//! memory runs out, the message keeps the pieces that fitted, and the failure is still
//! reported with its code (`tests/alloc_failure.rs` makes every allocation fail on the
//! arena's and the stats log's paths). Pieces of text, numbers and paths run no `core::fmt`.

use std::ffi::c_int;
#[cfg(unix)]
use std::ffi::{c_char, CStr};
use std::path::Path;

/// Bytes reserved for a message at its first piece: the messages of the arena's paths fit, so
/// that a message takes one allocation.
const FIRST_RESERVE: usize = 192;

/// A message being built. Appending never panics and never aborts.
#[derive(Debug, Default)]
pub struct Message {
    text: String,
    /// An allocation failed: later pieces are dropped, so that the message stays a prefix of
    /// the one intended.
    short: bool,
}

impl Message {
    /// An empty message.
    pub const fn new() -> Message {
        Message {
            text: String::new(),
            short: false,
        }
    }

    /// Appends a piece.
    pub fn push(&mut self, piece: impl Piece) -> &mut Message {
        piece.put(self);
        self
    }

    /// Appends `s`, or drops it (and every later piece) if the memory for it cannot be had.
    /// Out of line, as every piece's work: a message is made of many calls, each small.
    #[inline(never)]
    pub fn push_str(&mut self, s: &str) {
        if self.short || s.is_empty() {
            return;
        }
        let want = if self.text.capacity() == 0 {
            s.len().max(FIRST_RESERVE)
        } else {
            s.len()
        };
        if self.text.try_reserve(want).is_err() {
            self.short = true;
            return;
        }
        // SAFETY: `try_reserve` made room for `s.len()` more bytes past the length, and `s` is
        // UTF-8, so the string stays UTF-8 when its length covers the copied bytes. (Not
        // `String::push_str`, whose growth path, dead here, would link a panic.)
        unsafe {
            let bytes = self.text.as_mut_vec();
            let len = bytes.len();
            std::ptr::copy_nonoverlapping(s.as_ptr(), bytes.as_mut_ptr().add(len), s.len());
            bytes.set_len(len + s.len());
        }
    }

    /// The message's text (a prefix of it, if memory ran out).
    pub fn into_string(self) -> String {
        self.text
    }

    /// The message's text if every piece is in it (`None`: memory ran out): for text that must
    /// be whole, such as a path.
    pub fn into_whole(self) -> Option<String> {
        (!self.short).then_some(self.text)
    }
}

/// A part of a [`Message`].
pub trait Piece {
    /// Appends this piece to `m`.
    fn put(self, m: &mut Message);
}

impl Piece for &str {
    fn put(self, m: &mut Message) {
        m.push_str(self);
    }
}

/// Decimal digits of `v`.
#[inline(never)]
fn put_decimal(m: &mut Message, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        start -= 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if let Some(Ok(text)) = digits.get(start..).map(std::str::from_utf8) {
        m.push_str(text);
    }
}

macro_rules! unsigned_pieces {
    ($($t:ty),*) => {$(
        impl Piece for $t {
            fn put(self, m: &mut Message) {
                put_decimal(m, self as u64);
            }
        }
    )*};
}
unsigned_pieces!(u8, u16, u32, u64, usize);

impl Piece for i32 {
    fn put(self, m: &mut Message) {
        if self < 0 {
            m.push_str("-");
        }
        put_decimal(m, u64::from(self.unsigned_abs()));
    }
}

/// An address, written as `{:p}` writes it: `0x` and lowercase hexadecimal digits.
#[derive(Debug, Clone, Copy)]
pub struct Hex(pub usize);

impl Piece for Hex {
    #[inline(never)]
    fn put(self, m: &mut Message) {
        let mut digits = [0u8; 2 + 2 * size_of::<usize>()];
        let mut start = digits.len();
        let mut v = self.0;
        for slot in digits.iter_mut().skip(2).rev() {
            *slot = b"0123456789abcdef"[v & 15];
            start -= 1;
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        start -= 2;
        if let Some(prefix) = digits.get_mut(start..start + 2) {
            prefix.copy_from_slice(b"0x");
        }
        if let Some(Ok(text)) = digits.get(start..).map(std::str::from_utf8) {
            m.push_str(text);
        }
    }
}

/// A name in double quotes, escaped: printable ASCII stays as it is, but for `"` and `\`;
/// tab, newline, carriage return and NUL read `\t`, `\n`, `\r`, `\0`; every other
/// character (control, and anything outside ASCII: combining marks, bidi overrides, ...) reads
/// `\u{hex}`, as `{:?}` writes it. A name from a caller may hold anything, and `{:?}`'s own
/// choice of what to escape takes Unicode tables whose lookups link a panic.
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(pub &'a str);

impl Piece for Quoted<'_> {
    #[inline(never)]
    fn put(self, m: &mut Message) {
        m.push_str("\"");
        for c in self.0.chars() {
            let mut utf8 = [0u8; 4];
            match c {
                '"' => m.push_str("\\\""),
                '\\' => m.push_str("\\\\"),
                '\t' => m.push_str("\\t"),
                '\n' => m.push_str("\\n"),
                '\r' => m.push_str("\\r"),
                '\0' => m.push_str("\\0"),
                ' '..='~' => m.push_str(c.encode_utf8(&mut utf8)),
                _ => put_unicode_escape(m, c),
            }
        }
        m.push_str("\"");
    }
}

/// `\u{hex}` of `c`, lowercase hex without leading zeros, as `char::escape_unicode` writes it.
fn put_unicode_escape(m: &mut Message, c: char) {
    let mut text = *b"\\u{000000}";
    let v = u32::from(c);
    let digits = (8 - (v | 1).leading_zeros() as usize / 4).max(1);
    let mut end = 3;
    for i in (0..digits).rev() {
        if let Some(slot) = text.get_mut(end) {
            *slot = b"0123456789abcdef"[(v >> (4 * i)) as usize & 0xf];
        }
        end += 1;
    }
    if let Some(close) = text.get_mut(end) {
        *close = b'}';
    }
    if let Some(Ok(escape)) = text.get(..end + 1).map(std::str::from_utf8) {
        m.push_str(escape);
    }
}

impl Piece for &Path {
    /// The path as `Path::display` shows it: bytes that are not UTF-8 become U+FFFD.
    #[inline(never)]
    fn put(self, m: &mut Message) {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            for chunk in self.as_os_str().as_bytes().utf8_chunks() {
                m.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    m.push_str("\u{fffd}");
                }
            }
        }
        #[cfg(not(unix))]
        m.push_str(&self.to_string_lossy());
    }
}

impl std::fmt::Write for Message {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

impl Piece for &std::io::Error {
    /// An error of the operating system as its `Display` shows it (`No space left on device
    /// (os error 28)`), from `strerror_r` into a buffer on the stack (its `Display` would
    /// allocate the text). An error with an error inside is that error's text; any other, its
    /// kind's text (`out of memory`), where `Display` would show a message of the standard
    /// library's own (`failed to fill whole buffer` reads `unexpected end of file`). Not
    /// `io::Error`'s own `Display`, whose code (and its landing pads) would bring the standard
    /// library's panic machinery into a JIT.
    #[inline(never)]
    fn put(self, m: &mut Message) {
        use std::fmt::Write;
        if let Some(code) = self.raw_os_error() {
            put_os_error(m, code, self);
        } else if let Some(inner) = self.get_ref() {
            let _ = write!(m, "{inner}");
        } else {
            let _ = write!(m, "{}", self.kind());
        }
    }
}

/// The text `strerror_r` gives for `code`, then ` (os error <code>)`: what `io::Error`'s
/// `Display` shows for it, from a buffer on the stack.
#[cfg(unix)]
fn put_os_error(m: &mut Message, code: c_int, _: &std::io::Error) {
    let mut buf = [0 as c_char; 256];
    // SAFETY: `buf` is writable for its length; the XSI `strerror_r` writes a
    // NUL-terminated text of at most that length (for a number it does not know, glibc's
    // "Unknown error N", with a failure returned that `io::Error` ignores too).
    unsafe { strerror_r(code, buf.as_mut_ptr(), buf.len()) };
    if let Some(last) = buf.last_mut() {
        *last = 0; // terminated even if cut short, or left untouched
    }
    // SAFETY: `buf` holds a NUL (its last byte).
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes();
    for chunk in text.utf8_chunks() {
        m.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            m.push_str("\u{fffd}");
        }
    }
    m.push(" (os error ").push(code).push(")");
}

/// Elsewhere, as `Display` shows it.
#[cfg(not(unix))]
fn put_os_error(m: &mut Message, _: c_int, e: &std::io::Error) {
    use std::fmt::Write;
    let _ = write!(m, "{e}");
}

#[cfg(unix)]
extern "C" {
    /// The XSI `strerror_r`, under the name the C libraries that also have a GNU one give it
    /// (the condition the standard library uses: the `libc` crate's declaration binds the GNU
    /// one on newlib outside Linux, which writes nothing into the buffer).
    #[cfg_attr(
        any(target_os = "linux", target_os = "hurd", target_env = "newlib"),
        link_name = "__xpg_strerror_r"
    )]
    fn strerror_r(errnum: c_int, buf: *mut c_char, buflen: usize) -> c_int;
}

/// A `String` made of pieces, like `format!` but with nothing that can panic:
/// `message!("a page of ", size, " bytes at ", Hex(addr))`.
macro_rules! message {
    ($($piece:expr),+ $(,)?) => {{
        let mut m = $crate::message::Message::new();
        $( m.push($piece); )+
        m.into_string()
    }};
}
pub(crate) use message;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_read_as_format_writes_them() {
        let path = Path::new("/tmp/a b.jas");
        let got = message!(
            "n=",
            0u32,
            " ",
            7u8,
            " ",
            u64::MAX,
            " ",
            -12i32,
            " ",
            i32::MIN,
            " ",
            Hex(0),
            " ",
            Hex(0xdead_beef),
            " ",
            Hex(usize::MAX),
            " ",
            path
        );
        let want = format!(
            "n=0 7 {} -12 {} {:p} {:p} {:p} {}",
            u64::MAX,
            i32::MIN,
            std::ptr::null::<u8>(),
            std::ptr::without_provenance::<u8>(0xdead_beef),
            std::ptr::without_provenance::<u8>(usize::MAX),
            path.display()
        );
        assert_eq!(got, want);
    }

    #[test]
    fn quoted_names_escape_quotes_controls_and_all_but_ascii() {
        for (name, quoted) in [
            ("CMK_ASTNode", r#""CMK_ASTNode""#),
            ("", r#""""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("tab\there\nnl\r\0", r#""tab\there\nnl\r\0""#),
            (
                "esc\u{1b}[31m\u{7f}\u{9f}",
                r#""esc\u{1b}[31m\u{7f}\u{9f}""#,
            ),
            ("ünï ✓", r#""\u{fc}n\u{ef} \u{2713}""#),
            ("it's ~", r#""it's ~""#),
            (
                "bidi\u{202e}e\u{301}\u{10ffff}",
                r#""bidi\u{202e}e\u{301}\u{10ffff}""#,
            ),
        ] {
            assert_eq!(message!(Quoted(name)), quoted, "{name:?}");
            // Every escape reads as Rust's for the same character.
            for c in name.chars().filter(|c| !c.is_ascii()) {
                assert!(quoted.contains(&c.escape_unicode().to_string()), "{c:?}");
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn paths_that_are_not_utf8_read_as_display_shows_them() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(OsStr::from_bytes(b"/tmp/\xff\xfeok\xc3"));
        assert_eq!(message!(path), path.display().to_string());
    }

    #[test]
    fn io_errors_read_as_display_shows_them() {
        for e in [
            std::io::Error::from_raw_os_error(28),
            std::io::Error::from_raw_os_error(9999),
            std::io::Error::from(std::io::ErrorKind::OutOfMemory),
            std::io::Error::other("a reason of our own"),
        ] {
            assert_eq!(message!(&e), e.to_string());
        }
    }
}
