//! The files a JIT's writers append to (the stats log and the trace), opened and written with
//! the C library's `open`, `write`, `ftruncate` and `lseek` rather than `std::fs`: `std::fs`
//! copies a long path to the heap with an allocation that aborts when memory runs out, and its
//! code links the standard library's panic machinery into every JIT (BENCHMARKS.md, section
//! 7). Other platforms use `std::fs`, whose `File::create` empties an existing file at once
//! (on Unix, a file is emptied at its first write, so that a writer that cannot be set up
//! leaves it as it was).
//!
//! A pipe or FIFO whose reader has gone, or a socket whose peer has, never kills the process
//! with `SIGPIPE`: SIGPIPE is blocked for the calling thread around each write to such a file
//! (`pthread_sigmask`), the signal that write raised is taken back (`sigtimedwait`; `sigwait`
//! where that is missing) unless one was pending already, and the thread's mask is restored,
//! so that the write fails with `EPIPE` (`JITARENA_E_IO`) and the JIT's own signal state (its
//! mask, its handlers, a SIGPIPE pending for it) is as it was. A regular file raises no
//! SIGPIPE, and its writes make no such calls. A FIFO is opened without waiting for a reader
//! (`O_NONBLOCK`, cleared once open, so that writes wait for room as usual): with no reader,
//! the open fails at once with `ENXIO` ("No such device or address") instead of blocking the
//! JIT forever.
//!
//! A file is held by its one writer: on Unix an advisory lock (`flock`, which two opens in one
//! process also contend for, unlike `fcntl`'s locks) on a regular file; on Windows a share
//! mode that lets readers in but no second writer. A second writer of the same file (another
//! copy of this library in the process, as when a replay tool loads two JITs, or another
//! process) fails to open it with [`io::ErrorKind::WouldBlock`] before anything is emptied,
//! instead of overwriting the first writer's records. Where the file system refuses locks
//! altogether, the file is written unlocked: a missing guard is better than no log.

use std::io;
use std::path::Path;

// Large files on 32-bit glibc: its `open`, `ftruncate` and `lseek` take a 32-bit offset there
// (files stop at 2 GiB, as `EFBIG`), where the `64` variants, which `std::fs` uses, do not.
#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
use libc::{ftruncate, lseek, off_t, open, pwrite};
#[cfg(all(unix, target_os = "linux", target_env = "gnu"))]
use libc::{
    ftruncate64 as ftruncate, lseek64 as lseek, off64_t as off_t, open64 as open,
    pwrite64 as pwrite,
};

/// A file opened for writing, closed on drop.
#[cfg(unix)]
pub(crate) struct OutFile {
    fd: libc::c_int,
    /// Whether the file is still to be emptied, at the first write: a writer that cannot be
    /// set up (out of memory) leaves a file it was to replace as it was.
    to_empty: bool,
    /// Whether a write may raise SIGPIPE: a FIFO or a socket (a pipe given by descriptor is a
    /// FIFO to `fstat`).
    pipe: bool,
}

#[cfg(unix)]
impl OutFile {
    /// Creates `path` (mode 0666 less the umask) for writing, or opens it to be emptied at the
    /// first write. Fails with `OutOfMemory` when the path cannot be copied, `InvalidInput`
    /// when it holds a NUL, and at once with `ENXIO` for a FIFO that no process reads.
    pub(crate) fn create(path: &Path) -> io::Result<OutFile> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        if bytes.contains(&0) {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let mut c_path = Vec::new();
        c_path
            .try_reserve_exact(bytes.len() + 1)
            .map_err(crate::fallible::no_memory)?;
        let _ = crate::fallible::extend_within(&mut c_path, bytes); // within the room
        let _ = crate::fallible::push_within(&mut c_path, 0);
        // Not waiting for a FIFO's reader: `O_NONBLOCK`, cleared below once the file is open.
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NONBLOCK;
        loop {
            // SAFETY: `c_path` is a NUL-terminated string (no NUL before its end, checked
            // above) that lives across the call; the mode is passed as the variadic argument
            // `open` reads when `O_CREAT` is set.
            let fd = unsafe { open(c_path.as_ptr().cast(), flags, 0o666 as libc::c_uint) };
            if fd >= 0 {
                let mut file = OutFile {
                    fd,
                    to_empty: true,
                    pipe: false,
                };
                // On failure, `file` is dropped: its descriptor closed.
                file.blocking()?;
                file.hold()?;
                return Ok(file);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Clears `O_NONBLOCK`, with which the file was opened: a write to a full pipe waits for
    /// room, as it would have without it.
    fn blocking(&self) -> io::Result<()> {
        // SAFETY: `fd` is this file's open descriptor; F_GETFL takes no argument.
        let flags = unsafe { libc::fcntl(self.fd, libc::F_GETFL) };
        // SAFETY: as above; F_SETFL takes the flags as an int.
        if flags < 0
            || unsafe { libc::fcntl(self.fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Takes the file's advisory lock for this writer, if it is a regular file (a device or a
    /// FIFO, `/dev/null` say, may have several writers), and notes whether a write to it may
    /// raise SIGPIPE. Fails with `WouldBlock` when another open of the file holds it.
    fn hold(&mut self) -> io::Result<()> {
        // SAFETY: `stat` is plain data, for which all zeroes is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is this file's open descriptor and `st` is writable for a `stat`.
        if unsafe { libc::fstat(self.fd, &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let kind = st.st_mode & libc::S_IFMT;
        self.pipe = kind == libc::S_IFIFO || kind == libc::S_IFSOCK;
        if kind != libc::S_IFREG {
            return Ok(());
        }
        loop {
            // SAFETY: `fd` is this file's open descriptor; `LOCK_NB` never waits.
            if unsafe { libc::flock(self.fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Err(e),
                // No lock on this file system (ENOLCK, EINVAL, ENOTSUP): written unlocked.
                _ => return Ok(()),
            }
        }
    }

    /// Cuts the file to `len` bytes and moves its position there.
    pub(crate) fn truncate(&mut self, len: u64) -> io::Result<()> {
        let len = off_t::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // A signal during the cut is no failure: the cut is made again.
        loop {
            // SAFETY: `fd` is this file's open descriptor.
            if unsafe { ftruncate(self.fd, len) } == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        // SAFETY: as above (`lseek` is not interrupted by signals).
        if unsafe { lseek(self.fd, len, libc::SEEK_SET) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.to_empty = false;
        Ok(())
    }

    /// Whether the file is a regular file, whose bytes [`OutFile::write_at`] can write again.
    pub(crate) fn is_regular(&self) -> bool {
        // SAFETY: `stat` is plain data, for which all zeroes is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is this file's open descriptor and `st` is writable for a `stat`.
        let ok = unsafe { libc::fstat(self.fd, &mut st) } == 0;
        ok && st.st_mode & libc::S_IFMT == libc::S_IFREG
    }

    /// Writes `bytes` over the file's at `offset` (written before), leaving its position
    /// where it is: a trace's header's version.
    pub(crate) fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let at =
            off_t::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        loop {
            // SAFETY: `fd` is this file's open descriptor; `bytes` is readable for its length.
            let n = unsafe { pwrite(self.fd, bytes.as_ptr().cast(), bytes.len(), at) };
            if n >= 0 && n as usize == bytes.len() {
                return Ok(());
            }
            let e = match n {
                0.. => io::Error::from(io::ErrorKind::WriteZero),
                _ => io::Error::last_os_error(),
            };
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Empties the file at its first write, out of the path every later write takes.
    #[cold]
    #[inline(never)]
    fn empty(&mut self) -> io::Result<()> {
        match self.truncate(0) {
            // Not a regular file (a device, a FIFO, a socket): there is nothing to empty, as
            // `O_TRUNC` would have done nothing.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                self.to_empty = false;
                Ok(())
            }
            result => result,
        }
    }
}

#[cfg(unix)]
impl io::Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.to_empty {
            self.empty()?;
        }
        // At most `isize::MAX` bytes per call, as `std::fs::File` does (`INT_MAX - 1` on Apple
        // systems, whose `write` refuses more).
        let most = match cfg!(target_vendor = "apple") {
            true => libc::c_int::MAX as usize - 1,
            false => isize::MAX as usize,
        };
        let n = buf.len().min(most);
        let written = match self.pipe {
            false => write_fd(self.fd, buf, n),
            true => write_pipe(self.fd, buf, n),
        };
        written.map_err(io::Error::from_raw_os_error)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(()) // every write goes to the operating system at once
    }
}

/// One `write` of the first `n` bytes of `buf` (at most its length) to `fd`: the bytes
/// written, or the error number.
#[cfg(unix)]
#[inline(never)]
fn write_fd(fd: libc::c_int, buf: &[u8], n: usize) -> Result<usize, i32> {
    // SAFETY: `buf` is readable for `n <= buf.len()` bytes; `fd` is an open descriptor.
    let written = unsafe { libc::write(fd, buf.as_ptr().cast(), n.min(buf.len())) };
    usize::try_from(written).map_err(|_| io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

/// [`write_fd`] to a pipe, a FIFO or a socket, with SIGPIPE blocked for this thread, so that a
/// reader that has gone makes it fail with `EPIPE` instead of killing the process; the SIGPIPE
/// it raised is taken back unless one was pending before, and the thread's mask is restored. A
/// thread that blocks SIGPIPE already is left as it is.
#[cfg(unix)]
#[inline(never)]
fn write_pipe(fd: libc::c_int, buf: &[u8], n: usize) -> Result<usize, i32> {
    // The sets stay where they are, used through pointers (a `sigset_t` is 128 bytes).
    let mut pipe = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let (pipe, old) = (pipe.as_mut_ptr(), old.as_mut_ptr());
    // SAFETY: `sigemptyset` initializes `pipe` (it cannot fail for a valid pointer), to which
    // SIGPIPE, a valid signal number, is added; `pthread_sigmask` changes the calling thread's
    // mask only, and fills `old`, which is read only when it succeeded. The mask is left alone
    // (nothing to take back or restore) when it cannot be changed, or when the JIT blocks
    // SIGPIPE itself.
    let guarded = unsafe {
        libc::sigemptyset(pipe);
        libc::sigaddset(pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, pipe, old) == 0
            && libc::sigismember(old, libc::SIGPIPE) != 1
    };
    let was_pending = guarded && sigpipe_pending();
    let written = write_fd(fd, buf, n);
    if guarded {
        if written == Err(libc::EPIPE) && !was_pending && sigpipe_pending() {
            take_sigpipe(pipe);
        }
        // SAFETY: `old` is the mask read above: this thread's own change undone.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
    }
    written
}

/// Whether a SIGPIPE is pending for this thread or the process.
#[cfg(unix)]
fn sigpipe_pending() -> bool {
    let mut pending = std::mem::MaybeUninit::uninit();
    // SAFETY: `pending` is writable; `sigismember` reads it only once `sigpending` filled it.
    unsafe {
        libc::sigpending(pending.as_mut_ptr()) == 0
            && libc::sigismember(pending.as_ptr(), libc::SIGPIPE) == 1
    }
}

/// Takes a pending SIGPIPE (`pipe`, blocked for this thread), without waiting.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn take_sigpipe(pipe: *const libc::sigset_t) {
    let none = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `pipe` holds SIGPIPE, blocked and pending for this thread; a zero timeout never
    // waits; no `siginfo` is asked for.
    while unsafe { libc::sigtimedwait(pipe, std::ptr::null_mut(), &none) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// Takes a pending SIGPIPE (`pipe`, blocked for this thread): `sigwait` returns at once, as
/// the signal is pending (the caller checked).
#[cfg(all(
    unix,
    not(any(target_os = "linux", target_os = "android", target_os = "freebsd"))
))]
fn take_sigpipe(pipe: *const libc::sigset_t) {
    let mut signal = 0;
    // SAFETY: `pipe` holds SIGPIPE, blocked and pending; `signal` is writable.
    unsafe { libc::sigwait(pipe, &mut signal) };
}

#[cfg(unix)]
impl Drop for OutFile {
    fn drop(&mut self) {
        // SAFETY: `fd` is this file's descriptor, closed once, here.
        unsafe { libc::close(self.fd) };
    }
}

/// A file opened for writing: `std::fs::File` where the C library's calls are not used.
#[cfg(not(unix))]
pub(crate) struct OutFile(std::fs::File);

#[cfg(not(unix))]
impl OutFile {
    /// Creates `path` or truncates it, for writing. On Windows, other processes may read the
    /// file while it is written, and a second writer fails with `WouldBlock` (a sharing
    /// violation) before anything is truncated.
    pub(crate) fn create(path: &Path) -> io::Result<OutFile> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            const FILE_SHARE_READ: u32 = 0x1;
            options.share_mode(FILE_SHARE_READ);
        }
        match options.open(path) {
            Ok(file) => Ok(OutFile(file)),
            #[cfg(windows)]
            Err(e) if e.raw_os_error() == Some(32) => {
                // ERROR_SHARING_VIOLATION: another handle writes the file (or holds it
                // without sharing it).
                Err(io::Error::from(io::ErrorKind::WouldBlock))
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the file is a regular file, whose bytes [`OutFile::write_at`] can write again.
    pub(crate) fn is_regular(&self) -> bool {
        cfg!(windows) && self.0.metadata().is_ok_and(|m| m.is_file())
    }

    /// Writes `bytes` over the file's at `offset` (written before), leaving its position at
    /// the file's end, where every write goes: a trace's header's version.
    pub(crate) fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        #[cfg(windows)]
        {
            use std::io::Seek;
            use std::os::windows::fs::FileExt;
            let n = self.0.seek_write(bytes, offset)?;
            self.0.seek(io::SeekFrom::End(0))?;
            if n != bytes.len() {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            Ok(())
        }
        #[cfg(not(windows))]
        {
            let _ = (offset, bytes);
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }

    /// Cuts the file to `len` bytes and moves its position there.
    pub(crate) fn truncate(&mut self, len: u64) -> io::Result<()> {
        use std::io::Seek;
        self.0.set_len(len)?;
        self.0.seek(io::SeekFrom::Start(len)).map(drop)
    }
}

#[cfg(not(unix))]
impl io::Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The value of the environment variable `name`, copied, if it is set and is UTF-8. `Err`
/// when memory for the copy runs out. Read with the C library's `getenv` (`std::env` copies
/// with an allocation that aborts when memory runs out); like `getenv`, it must not race
/// with a thread changing the environment.
#[cfg(unix)]
pub(crate) fn env_var(name: &std::ffi::CStr) -> Result<Option<String>, ()> {
    // SAFETY: `name` is NUL-terminated; what `getenv` returns is NULL or a NUL-terminated
    // string of the environment, which stays valid while no other thread changes the
    // environment (this function's contract, as `getenv`'s).
    let value = unsafe { libc::getenv(name.as_ptr()) };
    if value.is_null() {
        return Ok(None);
    }
    // SAFETY: as above: a NUL-terminated string, read before this function returns.
    // (`to_bytes`, then `from_utf8`: `CStr::to_str` links a panic.)
    let value = unsafe { std::ffi::CStr::from_ptr(value) }.to_bytes();
    match std::str::from_utf8(value) {
        Ok(text) => crate::fallible::string(text).map(Some).ok_or(()),
        Err(_) => Ok(None),
    }
}

/// The value of the environment variable `name`, if it is set and is UTF-8.
#[cfg(not(unix))]
pub(crate) fn env_var(name: &std::ffi::CStr) -> Result<Option<String>, ()> {
    Ok(name.to_str().ok().and_then(|name| std::env::var(name).ok()))
}

/// Writes `text` and a newline to the standard error, as `eprintln!` would, but without its
/// formatting machinery and with nothing said when the write fails.
#[cfg(unix)]
pub(crate) fn warn(text: &str) {
    for mut bytes in [text.as_bytes(), b"\n"] {
        while !bytes.is_empty() {
            // SAFETY: `bytes` is readable for its length; descriptor 2 is the standard error
            // (or nothing, when the write fails).
            let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
            match usize::try_from(n) {
                Ok(0) => return,
                Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
                Err(_) if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

/// Writes `text` and a newline to the standard error.
#[cfg(not(unix))]
pub(crate) fn warn(text: &str) {
    eprintln!("{text}");
}

/// The file name of the module (shared library, DLL or executable) that holds this copy of
/// the library, up to its first dot (`libminijit_base` for `/jits/libminijit_base.so.1`,
/// `clrjit` for `C:\jits\clrjit.dll`), with every character outside `A-Z a-z 0-9 _ - +`
/// made `_`, at most 128 bytes, appended to `out`. `false` when the module cannot be found.
pub(crate) fn push_module_name(out: &mut crate::message::Message) -> bool {
    let mut name = [0u8; 128];
    let Some(len) = module_name(&mut name) else {
        return false;
    };
    // Written without slicing by computed bounds, indexing or `char` encoding, whose panic
    // paths would link the panic handler into every JIT (BENCHMARKS.md, "Footprint").
    let mut stem = 0;
    for b in name.iter_mut().take(len) {
        if *b == b'.' && stem > 0 {
            break;
        }
        if !(b.is_ascii_alphanumeric() || matches!(*b, b'_' | b'-' | b'+')) {
            *b = b'_';
        }
        stem += 1;
    }
    let stem = name.get(..stem).unwrap_or_default();
    out.push(std::str::from_utf8(stem).unwrap_or("module"));
    true
}

/// Copies the last path component of this module's file name into `out`, cut to its length
/// (bytes outside ASCII as they come: [`push_module_name`] replaces them), and returns the
/// length copied.
#[cfg(unix)]
fn module_name(out: &mut [u8]) -> Option<usize> {
    // SAFETY: `Dl_info` is plain data, for which all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = push_module_name as *const libc::c_void;
    // SAFETY: `here` is an address in this module's code and `info` is writable; `dladdr`
    // only reads the loader's tables.
    if unsafe { libc::dladdr(here, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a non-NULL `dli_fname` is a NUL-terminated string of the loader's, valid while
    // the module is loaded (as this code is), read before this function returns.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
    let base = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let mut len = 0;
    for (to, &from) in out.iter_mut().zip(base) {
        *to = from;
        len += 1;
    }
    Some(len)
}

/// As above, from the module's file name as Windows has it (UTF-16; a character outside
/// ASCII becomes `_`).
#[cfg(windows)]
fn module_name(out: &mut [u8]) -> Option<usize> {
    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut *mut u8) -> i32;
        fn GetModuleFileNameW(module: *mut u8, file: *mut u16, size: u32) -> u32;
    }
    const FROM_ADDRESS: u32 = 0x4; // GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS
    const UNCHANGED_REFCOUNT: u32 = 0x2; // GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT
    let mut module: *mut u8 = std::ptr::null_mut();
    let here = push_module_name as *const u16;
    // SAFETY: with FROM_ADDRESS, `name` is an address in this module's code; `module` is
    // writable; the reference count is left alone, so nothing is to be released.
    if unsafe { GetModuleHandleExW(FROM_ADDRESS | UNCHANGED_REFCOUNT, here, &mut module) } == 0 {
        return None;
    }
    let mut wide = [0u16; 1024];
    // SAFETY: `module` is a loaded module's handle; `wide` is writable for its length.
    let n = unsafe { GetModuleFileNameW(module, wide.as_mut_ptr(), wide.len() as u32) };
    let wide = wide.get(..n as usize).filter(|w| !w.is_empty())?;
    let base = wide
        .rsplit(|&c| c == u16::from(b'\\') || c == u16::from(b'/'))
        .next()?;
    let mut len = 0;
    for (to, &from) in out.iter_mut().zip(base) {
        *to = u8::try_from(from).ok().filter(u8::is_ascii).unwrap_or(b'_');
        len += 1;
    }
    Some(len)
}

/// No module lookup elsewhere.
#[cfg(not(any(unix, windows)))]
fn module_name(_out: &mut [u8]) -> Option<usize> {
    None
}
