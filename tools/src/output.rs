//! The files that `merge`, `replay` and `dump -o` write: never one of their inputs, and written
//! through a temporary file in the same directory that is renamed into place once complete, so
//! that a failed run leaves the earlier file (or none) and no partial output behind.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;

use jitarena::error::{Error, ErrorCode};
use jitarena::format::io_error;

/// Refuses `output` when it is one of `inputs` (after resolving `.`, `..` and symbolic links,
/// or as another name of the same file) or lies inside an input directory, where the next run
/// would read it back. Inputs that cannot be resolved are left to fail when they are read.
pub fn check_not_input(output: &Path, inputs: &[PathBuf]) -> Result<(), Error> {
    let Some(out) = resolve(output) else {
        return Ok(()); // its directory does not exist: it cannot be an input; creating it fails
    };
    for input in inputs {
        let Ok(resolved) = input.canonicalize() else {
            continue;
        };
        let refuse = |why: String| {
            Err(Error::new(
                ErrorCode::Config,
                format!("refusing to write {}: {why}", output.display()),
            ))
        };
        if out == resolved || same_file(output, input) {
            return refuse(format!(
                "it is also an input ({}), which writing would destroy; choose another output path",
                input.display()
            ));
        }
        if resolved.is_dir() && out.starts_with(&resolved) {
            return refuse(format!(
                "it lies inside the input directory {}, so the next run would read it as an input; choose a path outside it",
                input.display()
            ));
        }
    }
    Ok(())
}

/// The absolute path `output` names, through symbolic links; for a file that does not exist
/// yet, its resolved directory joined with its name. `None` if its directory does not exist.
fn resolve(output: &Path) -> Option<PathBuf> {
    if let Ok(path) = output.canonicalize() {
        return Some(path);
    }
    let name = output.file_name()?;
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Whether two existing paths are the same file (hard links included).
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &Path, _: &Path) -> bool {
    false
}

/// An output file being written under a temporary name next to it. [`OutputFile::commit`]
/// renames it into place; dropped without that, the temporary file is removed.
#[derive(Debug)]
pub struct OutputFile {
    target: PathBuf,
    temp: PathBuf,
    file: File,
    committed: bool,
    writeback: Option<Writeback>,
    /// Whether [`OutputFile::preallocate`] tried to reserve space (which may lie past what
    /// will be written).
    preallocated: bool,
}

/// A thread that makes what was written so far durable (`fdatasync`) when asked, while more is
/// being written, so that the disk writes most of a large output during the run instead of all
/// of it at [`OutputFile::commit`].
#[derive(Debug)]
struct Writeback {
    ask: SyncSender<()>,
    thread: JoinHandle<io::Result<()>>,
}

/// Bytes written between two requests to the writeback thread of an output file (see
/// [`OutputFile::start_writeback`]).
pub const WRITEBACK_EVERY: u64 = 64 << 20;

/// A writer of an [`OutputFile`] that asks its writeback thread, if any, to make the file
/// durable so far after every `every` bytes (see [`OutputFile::start_writeback`]).
pub struct OutputWriter<'a> {
    file: &'a File,
    ask: Option<SyncSender<()>>,
    every: u64,
    until_next: u64,
}

impl Write for OutputWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&*self.file).write(buf)?;
        self.until_next = self.until_next.saturating_sub(n as u64);
        if self.until_next == 0 {
            self.until_next = self.every;
            if let Some(ask) = &self.ask {
                // A thread still busy with the last request takes this one with it.
                let _ = ask.try_send(());
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self.file).flush()
    }
}

impl OutputFile {
    /// Creates the temporary file for `target` in `target`'s directory.
    pub fn create(target: &Path) -> Result<OutputFile, Error> {
        let name = target.file_name().ok_or_else(|| {
            Error::new(
                ErrorCode::Config,
                format!("{}: not a file name", target.display()),
            )
        })?;
        let dir = target.parent().unwrap_or(Path::new(""));
        let mut attempt = 0u32;
        loop {
            let mut temp_name = std::ffi::OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".{}-{attempt}.tmp", std::process::id()));
            let temp = dir.join(temp_name);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(OutputFile {
                        target: target.to_path_buf(),
                        temp,
                        file,
                        committed: false,
                        writeback: None,
                        preallocated: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(io_error(target, "create", &e)),
            }
        }
    }

    /// The temporary file, to write to (`&File` is a writer).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Starts a thread that makes the file durable so far whenever one of its
    /// [`OutputFile::writer`]s has written another `WRITEBACK_EVERY` bytes; without one (the
    /// thread or the file's second handle could not be had), the file is written as before.
    /// Any error the thread meets is [`OutputFile::commit`]'s.
    pub fn start_writeback(&mut self) {
        let Ok(file) = self.file.try_clone() else {
            return;
        };
        let (ask, asked) = std::sync::mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("output writeback".into())
            .spawn(move || {
                while asked.recv().is_ok() {
                    file.sync_data()?;
                }
                Ok(())
            });
        if let Ok(thread) = thread {
            self.writeback = Some(Writeback { ask, thread });
        }
    }

    /// A writer of the file that drives its writeback thread, if started, every `every`
    /// bytes (see [`WRITEBACK_EVERY`]).
    pub fn writer(&self, every: u64) -> OutputWriter<'_> {
        OutputWriter {
            file: &self.file,
            ask: self.writeback.as_ref().map(|w| w.ask.clone()),
            every: every.max(1),
            until_next: every.max(1),
        }
    }

    /// Reserves `len` bytes of disk for the file before it is written (Linux: `fallocate`),
    /// so that the writes that follow need not find blocks for every page as they go (merge's
    /// output is about the size of its inputs). The file reads as `len` bytes until
    /// [`OutputFile::commit`] cuts it to what was written. Where the space cannot be had (a
    /// full disk, a file system without it, a system other than Linux with the GNU C library),
    /// the file is written as it would have been.
    pub fn preallocate(&mut self, len: u64) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            use std::os::fd::AsRawFd;
            let Ok(len) = libc::off64_t::try_from(len) else {
                return;
            };
            // Even a call that fails may have reserved part of the space (and grown the file):
            // commit cuts the file to what was written either way.
            self.preallocated = true;
            // SAFETY: the descriptor is this file's, open for writing, for the whole call.
            let _ = unsafe { libc::fallocate64(self.file.as_raw_fd(), 0, 0, len) };
        }
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let _ = len;
    }

    /// The file this becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Makes the output durable and renames it into place, replacing any earlier file.
    pub fn commit(mut self) -> Result<(), Error> {
        if let Some(Writeback { ask, thread }) = self.writeback.take() {
            drop(ask); // the thread ends once its writers are gone too
            thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the writeback thread failed")))
                .map_err(|e| io_error(&self.target, "write", &e))?;
        }
        if self.preallocated {
            // What was written ends at the file's position: the rest of the reserved space goes.
            let written = (&self.file)
                .stream_position()
                .and_then(|end| self.file.set_len(end));
            written.map_err(|e| io_error(&self.target, "write", &e))?;
        }
        self.file
            .sync_all()
            .map_err(|e| io_error(&self.target, "write", &e))?;
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| io_error(&self.target, "replace", &e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        // Its writers are gone (they borrow the file): the writeback thread ends once its
        // channel is closed. Waiting for it leaves no thread behind a failed or dropped output
        // (its thread-local state would outlive the run that made it).
        if let Some(Writeback { ask, thread }) = self.writeback.take() {
            drop(ask);
            let _ = thread.join();
        }
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_back_while_written_holds_every_byte_once() {
        let dir = std::env::temp_dir().join(format!("jitarena-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = OutputFile::create(&target).unwrap();
        file.start_writeback();
        assert!(file.writeback.is_some(), "the writeback thread started");
        let temp = file.temp.clone();
        {
            // Asked for every 4 KiB, in odd-sized writes: far more often than it can keep up.
            let mut w = io::BufWriter::with_capacity(1000, file.writer(4096));
            for chunk in bytes.chunks(777) {
                w.write_all(chunk).unwrap();
            }
            w.flush().unwrap();
        }
        file.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), bytes);
        assert!(!temp.exists(), "the temporary file was renamed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Space reserved past what is written is given back at commit; space reserved short of
    /// it grows as the file does: either way the file is what was written.
    #[test]
    fn a_preallocated_file_is_cut_to_what_was_written() {
        let dir = std::env::temp_dir().join(format!("jitarena-prealloc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i * 13 % 251) as u8).collect();
        for reserve in [4_000_000, 1000, 0] {
            let target = dir.join(format!("out-{reserve}.bin"));
            let mut file = OutputFile::create(&target).unwrap();
            file.preallocate(reserve);
            file.start_writeback();
            {
                let mut w = io::BufWriter::with_capacity(4096, file.writer(65536));
                w.write_all(&bytes).unwrap();
                w.flush().unwrap();
            }
            file.commit().unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), bytes, "reserved {reserve}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
