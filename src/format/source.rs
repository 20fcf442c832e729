//! A file opened for reading: its first bytes looked at (what it is) and kept for the reader.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::spec::{Content, HEADER_LEN, MAGIC};
use crate::error::{Error, ErrorCode};
use crate::message::message;

/// What the first bytes of a file say it is.
pub fn sniff(path: &Path) -> Result<Option<Content>, Error> {
    Ok(Source::open(path)?.content())
}

/// The byte stream of a [`Source`]: its first bytes, then the rest of the file.
pub type Input = BufReader<io::Chain<io::Cursor<Vec<u8>>, File>>;

/// A file opened once for reading, its first bytes looked at but kept: a pipe (which cannot
/// be opened twice) is sniffed and then read whole.
pub struct Source {
    pub(super) path: PathBuf,
    pub(super) head: Vec<u8>,
    pub(super) file: File,
}

impl Source {
    /// Opens `path` and reads its first [`HEADER_LEN`] bytes (fewer if it is shorter).
    pub fn open(path: &Path) -> Result<Source, Error> {
        let mut file = open(path)?;
        let mut head = vec![0u8; HEADER_LEN];
        let n = read_up_to(&mut file, &mut head).map_err(|e| io_error(path, "read", &e))?;
        head.truncate(n);
        Ok(Source {
            path: path.to_path_buf(),
            head,
            file,
        })
    }

    /// What the first bytes say the file is (`None`: not a jitarena file).
    pub fn content(&self) -> Option<Content> {
        if self.head.len() < HEADER_LEN || &self.head[..8] != MAGIC {
            return None;
        }
        match self.head[8] {
            b'L' => Some(Content::Log),
            b'T' => Some(Content::Trace),
            _ => None,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every byte of the file from its start, the first ones included.
    pub fn into_input(self) -> Input {
        BufReader::with_capacity(1 << 16, io::Cursor::new(self.head).chain(self.file))
    }
}

pub(crate) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// An I/O error naming the file (`ErrorCode::OutOfMemory` for an error of that kind). Made
/// without an allocation that could abort the process.
pub fn io_error(path: &Path, what: &str, err: &io::Error) -> Error {
    let code = match err.kind() {
        io::ErrorKind::OutOfMemory => ErrorCode::OutOfMemory,
        _ => ErrorCode::Io,
    };
    Error::new(code, message!(path, ": cannot ", what, ": ", err))
}

fn open(path: &Path) -> Result<File, Error> {
    File::open(path).map_err(|e| io_error(path, "open", &e))
}
