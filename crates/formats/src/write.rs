//! Files passk writes. Nothing is left at a final path until it is complete: a file is
//! written under a `.writing` name beside it and moved into place once synced.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The file beside `path` whose name is `path`'s with `suffix` added:
/// `sibling("r.jsonl", ".lock")` is `r.jsonl.lock`.
pub fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Where a file is written before it is moved into place.
fn writing_path(path: &Path) -> PathBuf {
    sibling(path, ".writing")
}

/// Refuses a path that is there and not a regular file (`/dev/null`, a pipe): what passk
/// writes goes beside it and is moved into place, which would put a file where the
/// device was.
fn refuse_special(path: &Path) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => Err(std::io::Error::other(
            "not a regular file: passk writes a file beside it and moves that into place, which would replace it",
        )),
        _ => Ok(()),
    }
}

/// Whether `write_atomically` could write `path`, tried the way it will: by creating the
/// partial file beside it. Checked before a run, so that a bad path costs nothing.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    refuse_special(path)?;
    let partial = writing_path(path);
    let existed = partial.exists();
    OpenOptions::new().write(true).create(true).truncate(false).open(&partial)?;
    if !existed {
        std::fs::remove_file(&partial)?;
    }
    Ok(())
}

pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    refuse_special(path)?;
    let partial = writing_path(path);
    let mut file = File::create(&partial)?;
    file.write_all(contents)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}

/// A JSON Lines file written one whole, flushed line at a time. A line that cannot be
/// written whole (a full disk) is taken back, so the file never ends in half a line.
#[derive(Debug)]
pub struct LineWriter {
    path: PathBuf,
    file: File,
    /// Where the last whole line ends.
    end: u64,
    line: Vec<u8>,
}

impl LineWriter {
    /// Starts `path` afresh.
    pub fn create(path: &Path) -> std::io::Result<LineWriter> {
        let file = File::create(path)?;
        Ok(LineWriter { path: path.to_owned(), file, end: 0, line: Vec::new() })
    }

    /// Goes on with `path` after its first `end` bytes, dropping the rest.
    pub fn append(path: &Path, end: u64) -> std::io::Result<LineWriter> {
        let mut file = OpenOptions::new().write(true).open(path)?;
        file.set_len(end)?;
        file.seek(SeekFrom::Start(end))?;
        Ok(LineWriter { path: path.to_owned(), file, end, line: Vec::new() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `value` as a line; returns where the line starts and how long it is.
    pub fn write(&mut self, value: &impl serde::Serialize) -> std::io::Result<(u64, usize)> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, value).map_err(std::io::Error::other)?;
        self.line.push(b'\n');
        match self.file.write_all(&self.line) {
            Ok(()) => {
                let start = self.end;
                self.end += self.line.len() as u64;
                Ok((start, self.line.len()))
            }
            Err(error) => {
                // Shrinking a file needs no space, so this works on a full disk too.
                let _ = self.file.set_len(self.end);
                let _ = self.file.seek(SeekFrom::Start(self.end));
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use super::*;

    /// Where the child of `a_line_that_cannot_be_written_whole_is_taken_back` writes.
    const FULL_DISK_FILE: &str = "PASSK_LINE_WRITER_TEST_FILE";
    /// The size the child's files may not pass, which stands for a full disk.
    const ROOM: u64 = 100;

    /// Writes lines of 29 bytes until the file may grow no more: the fourth does not
    /// fit whole. Does nothing unless run as the child of the test below.
    #[test]
    fn writes_until_the_disk_is_full() {
        let Some(path) = std::env::var_os(FULL_DISK_FILE) else { return };
        let mut writer = LineWriter::create(Path::new(&path)).unwrap();
        let line = serde_json::json!({"sample": "x".repeat(15)});
        let mut written = 0;
        while writer.write(&line).is_ok() {
            written += 1;
            assert!(written < 10, "the file size limit never stopped a write");
        }
        // What comes after a failed line goes where the failed line would have started.
        writer.write(&serde_json::json!(1)).unwrap();
    }

    /// A line that cannot be written whole (a full disk, here the file size limit) is
    /// taken back: the file holds only whole lines, and the next write starts where the
    /// last whole line ended.
    #[test]
    fn a_line_that_cannot_be_written_whole_is_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.jsonl");
        let mut child = Command::new(std::env::current_exe().unwrap());
        child.args(["--exact", "write::tests::writes_until_the_disk_is_full", "--test-threads", "1"]);
        child.env(FULL_DISK_FILE, &path);
        // SAFETY: only async-signal-safe calls between fork and exec. The limit and the
        // ignored SIGXFSZ (a write past the limit fails with EFBIG instead of killing the
        // process) both last across the exec.
        unsafe {
            child.pre_exec(|| {
                nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE, ROOM, ROOM)?;
                nix::sys::signal::signal(nix::sys::signal::Signal::SIGXFSZ, nix::sys::signal::SigHandler::SigIgn)?;
                Ok(())
            });
        }
        let output = child.output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
        let text = std::fs::read_to_string(&path).unwrap();
        let line = "{\"sample\":\"xxxxxxxxxxxxxxx\"}\n";
        assert_eq!(text, format!("{line}{line}{line}1\n"), "the file holds only whole lines");
    }
}
