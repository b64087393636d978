//! One run per file written. Two runs writing one results or samples file would
//! interleave their lines and both claim success, so a run holds an exclusive lock on
//! `<file>.lock` from before it reads the file until its last write, and a second run
//! refuses at once, naming the first. The lock is the kernel's (flock): it goes with its holder's
//! last descriptor, so a run killed with SIGKILL never leaves one behind that blocks.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LockError {
    #[error("{file} is being written by another passk run{holder}; wait for it to finish, or choose another {option}")]
    Busy { file: String, holder: String, option: &'static str },
    #[error("cannot lock {option} {file} (through {})", .path.display())]
    Io {
        file: String,
        option: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The held lock; dropping it removes the lock file and lets go.
/// How long a lock whose run has died may still be held (by a child it was forking).
const DEAD_HOLDER_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
const DEAD_HOLDER_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether process `pid` exists (a zombie counts as gone: it holds no descriptors).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
    _held: Flock<File>,
}

impl FileLock {
    /// Locks `file`, which `option` names on the command line.
    pub fn acquire(locked: &Path, option: &'static str) -> Result<FileLock, LockError> {
        let path = crate::write::sibling(locked, ".lock");
        let io = |source| LockError::Io { file: locked.display().to_string(), option, path: path.clone(), source };
        let mut waited = std::time::Duration::ZERO;
        loop {
            let file =
                OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
            let mut held = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(held) => held,
                Err((mut file, Errno::EWOULDBLOCK)) => {
                    let mut pid = String::new();
                    let _ = file.read_to_string(&mut pid);
                    let pid = pid.trim().parse::<i32>().ok();
                    // A run killed a moment ago is gone, but a child it was forking may
                    // hold the lock until that child executes: wait that out.
                    if pid.is_some_and(|pid| !alive(pid)) && waited < DEAD_HOLDER_GRACE {
                        std::thread::sleep(DEAD_HOLDER_POLL);
                        waited += DEAD_HOLDER_POLL;
                        continue;
                    }
                    let holder = pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
                    return Err(LockError::Busy { file: locked.display().to_string(), holder, option });
                }
                Err((_, errno)) => return Err(io(errno.into())),
            };
            // The run that held it may have removed the file between our open and our
            // lock: then this lock is on a file no later run will open, and we go again.
            let ours = held.metadata().map_err(io)?;
            match std::fs::metadata(&path) {
                Ok(current) if current.ino() == ours.ino() && current.dev() == ours.dev() => {}
                _ => continue,
            }
            held.set_len(0).map_err(io)?;
            write!(held, "{}", std::process::id()).map_err(io)?;
            return Ok(FileLock { path, _held: held });
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still held, so that no other run can have locked it meanwhile.
        let _ = std::fs::remove_file(&self.path);
    }
}
