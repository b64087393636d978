//! Child processes that can only be signalled as a whole group.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::reaper::{self, Left};

/// A child started as the leader of a process group of its own.
///
/// Every signal goes to the whole group, so nothing the child started in its group
/// outlives it; there is deliberately no way to signal the leader alone. Signals are
/// sent only while the leader is unreaped, since after that its id may be reused. The
/// reaper watches the group until the leader is reaped, so that it is stopped even if
/// passk is killed outright; dropped unreaped, the group is killed.
#[derive(Debug)]
pub(crate) struct GroupLeader {
    child: Child,
    pgid: libc::pid_t,
    /// How the reaper knows the group, until the leader is reaped.
    watched: Option<Left>,
}

impl GroupLeader {
    pub(crate) fn spawn(command: &mut Command) -> io::Result<GroupLeader> {
        let child = command.process_group(0).kill_on_drop(true).spawn()?;
        let pgid = child
            .id()
            .and_then(|id| libc::pid_t::try_from(id).ok())
            .ok_or_else(|| io::Error::other("spawned child has no process id"))?;
        // Unreaped, the pid is still the child's.
        let watched = reaper::start_time(pgid).map(|started| Left::Group { leader: pgid, started });
        if let Some(left) = &watched {
            reaper::watch(left.clone());
        }
        Ok(GroupLeader { child, pgid, watched })
    }

    pub(crate) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.reaped();
        Ok(status)
    }

    /// Asks the group to stop (SIGTERM), without waiting.
    pub(crate) fn interrupt(&mut self) {
        self.signal_group(libc::SIGTERM);
    }

    fn signal_group(&mut self, signal: libc::c_int) {
        match self.child.try_wait() {
            // SAFETY: kill has no memory-safety preconditions; the leader is unreaped, so
            // the group id still names our group.
            Ok(None) => unsafe {
                libc::kill(-self.pgid, signal);
            },
            Ok(Some(_)) => self.reaped(),
            Err(_) => {}
        }
    }

    fn reaped(&mut self) {
        if let Some(left) = self.watched.take() {
            reaper::release(left);
        }
    }

    /// Asks the group to stop (SIGTERM), waits up to `grace`, then kills it (SIGKILL).
    pub(crate) async fn terminate(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        self.signal_group(libc::SIGTERM);
        if let Ok(status) = tokio::time::timeout(grace, self.wait()).await {
            return status;
        }
        self.signal_group(libc::SIGKILL);
        self.wait().await
    }
}

impl Drop for GroupLeader {
    fn drop(&mut self) {
        // Not only the leader, which tokio kills on drop: its whole group.
        self.signal_group(libc::SIGKILL);
    }
}

/// Makes this process non-dumpable, so that processes of the same user cannot trace it
/// or read its memory, environment or descriptors through /proc.
pub fn protect_this_process() -> io::Result<()> {
    // SAFETY: PR_SET_DUMPABLE takes plain integers.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
