//! The stats logs a command reads: files as given, directories as the files in them.

use std::path::PathBuf;

use jitarena::error::Error;

/// Files to read for the given paths: a directory stands for the files in it (not recursive),
/// sorted by name.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| jitarena::format::io_error(path, "list", &e))?;
            let entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            // A shard linked to a log that is not there would be left out silently.
            if let Some(dangling) = entries
                .iter()
                .filter(|p| std::fs::metadata(p).is_err())
                .min()
            {
                return Err(Error::new(
                    jitarena::ErrorCode::Io,
                    format!(
                        "{}: cannot be read (a dangling link, or a loop?)",
                        dangling.display()
                    ),
                ));
            }
            let mut files: Vec<PathBuf> = entries.into_iter().filter(|p| p.is_file()).collect();
            if files.is_empty() {
                return Err(Error::new(
                    jitarena::ErrorCode::Io,
                    format!("{}: the directory holds no log", path.display()),
                ));
            }
            files.sort();
            out.extend(files);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}
