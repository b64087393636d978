//! Child processes that can only be signalled as a whole group.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{Child, Command};

/// A child started as the leader of a process group of its own.
///
/// Every signal goes to the whole group, so nothing the child started in its group
/// outlives it; there is deliberately no way to signal the leader alone. Signals are
/// sent only while the leader is unreaped, since after that its id may be reused.
#[derive(Debug)]
pub(crate) struct GroupLeader {
    child: Child,
    pgid: libc::pid_t,
}

impl GroupLeader {
    pub(crate) fn spawn(command: &mut Command) -> io::Result<GroupLeader> {
        let child = command.process_group(0).kill_on_drop(true).spawn()?;
        let pgid = child
            .id()
            .and_then(|id| libc::pid_t::try_from(id).ok())
            .ok_or_else(|| io::Error::other("spawned child has no process id"))?;
        Ok(GroupLeader { child, pgid })
    }

    pub(crate) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    fn signal_group(&mut self, signal: libc::c_int) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: kill has no memory-safety preconditions; the leader is unreaped, so
            // the group id still names our group.
            unsafe { libc::kill(-self.pgid, signal) };
        }
    }

    /// Asks the group to stop (SIGTERM), waits up to `grace`, then kills it (SIGKILL).
    pub(crate) async fn terminate(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        self.signal_group(libc::SIGTERM);
        if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
            return status;
        }
        self.signal_group(libc::SIGKILL);
        self.child.wait().await
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
