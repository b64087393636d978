//! What cleans up after passk when passk cannot: a tiny child, `passk __reaper`, that
//! outlives it by a moment.
//!
//! A run killed with SIGKILL runs no code of its own, yet its drivers, their candidates,
//! its control groups and its working directory must not outlive it. So the first pool
//! a process starts also starts a reaper, in a process group of its own so that a
//! terminal's Ctrl-C does not reach it, and tells it on a pipe about each thing it makes
//! and each it has cleaned up itself. When the pipe closes (passk has exited, however)
//! the reaper stops whatever is left: the drivers' process groups (SIGTERM, for their
//! own clean-up, then SIGKILL), every process still in the run's control groups; then it
//! removes the groups and the directories, and exits. A normal end leaves it nothing.
//!
//! A driver is named by its pid and its start time, and the reaper holds a pidfd for it
//! from then on, so a pid reused after passk is gone is never signalled.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long drivers get to clean up after SIGTERM before SIGKILL.
const GROUP_GRACE: Duration = Duration::from_millis(500);
/// How long the reaper keeps killing what its control groups hold and trying to remove
/// them.
const GROUPS_LIMIT: Duration = Duration::from_millis(1000);
/// How long the reaper keeps trying to remove the run's directories.
const DIRS_LIMIT: Duration = Duration::from_millis(1000);
const POLL: Duration = Duration::from_millis(10);

/// Something of the run's that must not outlive passk.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Left {
    /// A process group, by its leader's pid and start time (in clock ticks since boot).
    Group { leader: libc::pid_t, started: u64 },
    /// A control group, and the groups below it.
    Cgroup(PathBuf),
    /// A directory, and everything in it.
    Dir(PathBuf),
}

#[derive(Debug, Serialize, Deserialize)]
enum Message {
    /// Clean this up if passk does not.
    Watch(Left),
    /// passk cleaned this up itself.
    Release(Left),
}

/// The pipe to this process's reaper, once started.
static REAPER: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();

/// Starts this process's reaper, `executable __reaper`, unless one runs. Without one,
/// passk still cleans up after itself on every path but SIGKILL.
pub(crate) fn start(executable: &Path) {
    REAPER.get_or_init(|| {
        let spawned = Command::new(executable)
            .arg("__reaper")
            .env_clear()
            // Holds no directory of the run.
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match spawned {
            // Never waited for: it exits only once this process has.
            Ok(mut child) => Mutex::new(child.stdin.take()),
            Err(error) => {
                tracing::warn!("cannot start the reaper; a run killed outright may leave processes behind: {error}");
                Mutex::new(None)
            }
        }
    });
}

/// Tells the reaper to clean `left` up should this process end without doing it.
pub(crate) fn watch(left: Left) {
    send(&Message::Watch(left));
}

/// Tells the reaper that `left` is cleaned up.
pub(crate) fn release(left: Left) {
    send(&Message::Release(left));
}

fn send(message: &Message) {
    let Some(pipe) = REAPER.get() else { return };
    let mut pipe = pipe.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(stdin) = pipe.as_mut() else { return };
    let mut line = serde_json::to_vec(message).expect("a message serializes");
    line.push(b'\n');
    // One small write to a pipe the reaper keeps reading; it fails only if the reaper is
    // gone, and then there is no one to tell.
    if let Err(error) = stdin.write_all(&line) {
        tracing::warn!("the reaper is gone: {error}");
        *pipe = None;
    }
}

/// A process's start time, in clock ticks since boot, which with its pid names it once
/// and for all.
pub(crate) fn start_time(pid: libc::pid_t) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may hold spaces and parentheses; the start
    // time is field 22, the 20th after it.
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// `passk __reaper`: keeps track of what passk reports until its pipe closes, then
/// cleans up what is left and exits. Must be called before any other thread exists.
pub fn run() -> ! {
    // SAFETY: setting dispositions to SIG_IGN has no preconditions. Only the pipe's end
    // may end the reaper's watch; SIGTERM and SIGKILL still end the reaper.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    let mut watched = Watched::default();
    for line in std::io::stdin().lock().split(b'\n') {
        let Ok(line) = line else { break };
        match serde_json::from_slice(&line) {
            Ok(Message::Watch(left)) => watched.watch(left),
            Ok(Message::Release(left)) => watched.release(&left),
            Err(_) => continue,
        }
    }
    watched.clean_up();
    std::process::exit(0)
}

/// What the reaper would clean up now, in the order it was made.
#[derive(Debug, Default)]
struct Watched {
    /// Each driver's group by its leader, with a pidfd for the leader.
    groups: HashMap<libc::pid_t, OwnedFd>,
    cgroups: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Watched {
    fn watch(&mut self, left: Left) {
        match left {
            Left::Group { leader, started } => {
                // The pid is checked to be the process passk meant after the pidfd holds
                // it, so the pidfd cannot be of a process that reused the pid.
                let Some(pidfd) = pidfd_open(leader) else { return };
                if start_time(leader) == Some(started) {
                    self.groups.insert(leader, pidfd);
                }
            }
            Left::Cgroup(path) => self.cgroups.push(path),
            Left::Dir(path) => self.dirs.push(path),
        }
    }

    fn release(&mut self, left: &Left) {
        match left {
            Left::Group { leader, .. } => {
                self.groups.remove(leader);
            }
            Left::Cgroup(path) => self.cgroups.retain(|kept| kept != path),
            Left::Dir(path) => self.dirs.retain(|kept| kept != path),
        }
    }

    fn clean_up(self) {
        let Watched { groups, cgroups, dirs } = self;
        stop_groups(&groups);
        let deadline = Instant::now() + GROUPS_LIMIT;
        for cgroup in cgroups.iter().rev() {
            empty_and_remove(cgroup, deadline);
        }
        let deadline = Instant::now() + DIRS_LIMIT;
        for dir in dirs.iter().rev() {
            remove_dir(dir, deadline);
        }
    }
}

/// Asks each driver's group to stop, gives the drivers a moment to clean up after their
/// candidates, and kills what is left.
fn stop_groups(groups: &HashMap<libc::pid_t, OwnedFd>) {
    for (&leader, pidfd) in groups {
        signal_group(leader, pidfd, libc::SIGTERM);
    }
    let deadline = Instant::now() + GROUP_GRACE;
    while groups.values().any(|pidfd| !has_exited(pidfd)) && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    for (&leader, pidfd) in groups {
        signal_group(leader, pidfd, libc::SIGKILL);
    }
}

/// Signals `leader`'s group, only while the leader is unreaped: until then no other
/// process can have its pid, nor so its group's id.
fn signal_group(leader: libc::pid_t, pidfd: &OwnedFd, signal: libc::c_int) {
    // SAFETY: plain system calls on a descriptor this process owns.
    unsafe {
        let unreaped =
            libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), 0, std::ptr::null::<libc::siginfo_t>(), 0)
                == 0;
        if unreaped {
            libc::kill(-leader, signal);
        }
    }
}

/// Whether the process has exited (a zombie has).
fn has_exited(pidfd: &OwnedFd) -> bool {
    let mut poll = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, no wait.
    unsafe { libc::poll(&mut poll, 1, 0) != 0 }
}

fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes plain integers and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the descriptor was just made, and nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Kills every process in the control group `root` and the groups below it until none is
/// left, then removes them, deepest first; gives up at `deadline`.
fn empty_and_remove(root: &Path, deadline: Instant) {
    loop {
        let mut dirs = Vec::new();
        tree(root, &mut dirs);
        let mut members = 0;
        for dir in &dirs {
            // cgroup v2 kills a whole group in one write, forks in flight included.
            let kill = dir.join("cgroup.kill");
            if kill.exists() {
                let _ = std::fs::write(kill, "1");
            }
            for pid in std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default().lines() {
                if let Ok(pid) = pid.trim().parse::<libc::pid_t>() {
                    members += 1;
                    // SAFETY: kill has no memory-safety preconditions; a listed member is
                    // alive, so its pid is its own.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        if members == 0 {
            // Deepest first: a group is removed after the groups below it.
            let removed = dirs.iter().rev().all(|dir| std::fs::remove_dir(dir).is_ok() || !dir.exists());
            if removed {
                return;
            }
        }
        if Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(POLL);
    }
}

/// Removes `dir` and what it holds, again until `deadline` should it fail: an entry made
/// while the removal walks the tree (by a process that is still dying) makes it fail
/// with the directory still there.
fn remove_dir(dir: &Path, deadline: Instant) {
    while std::fs::remove_dir_all(dir).is_err() && dir.exists() && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
}

/// `dir` and every directory below it, each after the one above it.
fn tree(dir: &Path, found: &mut Vec<PathBuf>) {
    if !dir.is_dir() {
        return;
    }
    found.push(dir.to_owned());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            tree(&entry.path(), found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_processs_start_time_names_it() {
        let own = libc::pid_t::try_from(std::process::id()).unwrap();
        let started = start_time(own).unwrap();
        assert!(started > 0);
        assert_eq!(start_time(own), Some(started), "it does not change");
    }

    /// Guards against signalling a process that merely reused a driver's pid: one
    /// whose start time is not the driver's is never watched.
    #[test]
    fn a_group_whose_leader_is_not_the_one_named_is_not_watched() {
        let own = libc::pid_t::try_from(std::process::id()).unwrap();
        let started = start_time(own).unwrap();
        let mut watched = Watched::default();
        watched.watch(Left::Group { leader: own, started: started + 1 });
        assert!(watched.groups.is_empty());
        watched.watch(Left::Group { leader: own, started });
        assert_eq!(watched.groups.len(), 1);
        watched.release(&Left::Group { leader: own, started });
        assert!(watched.groups.is_empty());
    }

    #[test]
    fn directories_are_removed_with_what_they_hold() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("passk-x");
        std::fs::create_dir_all(dir.join("slot-0/scratch")).unwrap();
        std::fs::write(dir.join("slot-0/scratch/file"), "x").unwrap();
        let mut watched = Watched::default();
        watched.watch(Left::Dir(dir.clone()));
        watched.clean_up();
        assert!(!dir.exists());
    }
}
