//! The files that `merge`, `replay` and `dump -o` write: never one of their inputs, and written
//! through a temporary file in the same directory that is renamed into place once complete, so
//! that a failed run leaves the earlier file (or none) and no partial output behind.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

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

    /// The file this becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Makes the output durable and renames it into place, replacing any earlier file.
    pub fn commit(mut self) -> Result<(), Error> {
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
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}
