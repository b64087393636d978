//! The harness's line for handing each candidate its own code, which the driver passes
//! on without reading.
//!
//! Every candidate is forked from its slot's driver, so whatever the driver ever held,
//! freed or not, a candidate may find in its own memory. Were the driver to read each
//! sample's code, a candidate could take another sample's: one that passed, for the same
//! problem, a few samples before it. So the code of each sample goes into a memory file
//! of its own, and the file's descriptor, not its bytes, goes to the driver on this line
//! (a datagram socket, `SCM_RIGHTS`), named by the sample's number. The driver hands the
//! descriptor to the sample's processes, and only they read it, after the fork.

use std::io::{IoSlice, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixDatagram;

use nix::sys::memfd::{memfd_create, MFdFlags};
use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, UnixAddr};

/// Where the driver finds its end of the line; `worker.py` reads the same number.
pub(crate) const SOURCE_LINE_FD: i32 = 4;

#[derive(Debug)]
pub(crate) struct SourceLine {
    socket: UnixDatagram,
}

impl SourceLine {
    /// A new line, and the end to hand the driver.
    pub(crate) fn open() -> std::io::Result<(SourceLine, OwnedFd)> {
        let (ours, theirs) = UnixDatagram::pair()?;
        // A full socket means a driver that stopped taking its requests: an error, not
        // a wait that would hold up every other worker.
        ours.set_nonblocking(true)?;
        Ok((SourceLine { socket: ours }, OwnedFd::from(theirs)))
    }

    /// Hands the driver sample `seq`'s code, as a memory file only the sample reads. The
    /// driver takes one message per request, so the socket never holds more than one.
    pub(crate) fn send(&self, seq: u64, code: &str) -> std::io::Result<()> {
        let file = memfd_create(c"passk-candidate", MFdFlags::MFD_CLOEXEC)?;
        std::fs::File::from(file.try_clone()?).write_all(code.as_bytes())?;
        let number = seq.to_be_bytes();
        let fds = [file.as_raw_fd()];
        sendmsg::<UnixAddr>(
            self.socket.as_raw_fd(),
            &[IoSlice::new(&number)],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        )?;
        Ok(())
    }
}
