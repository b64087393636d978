//! The system calls the sandbox's set-up makes, behind a trait, so that the order and
//! arguments of the set-up can be checked without privileges by a recording stand-in.

use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::MsFlags;
use nix::sched::CloneFlags;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{ForkResult, Gid, Uid};

pub type SysResult<T> = Result<T, Errno>;

pub trait Syscall {
    fn unshare(&mut self, flags: CloneFlags) -> SysResult<()>;
    /// Creates namespaces with `flags`, a user namespace among them, whose id maps are
    /// written by a process forked before, which stays outside: how a privileged
    /// caller maps ids other than its own.
    fn unshare_mapped_from_outside(&mut self, flags: CloneFlags, uid_map: &str, gid_map: &str) -> SysResult<()>;
    fn write_file(&mut self, path: &Path, contents: &[u8]) -> SysResult<()>;
    fn mkdir_all(&mut self, path: &Path) -> SysResult<()>;
    /// Makes `link` a symbolic link to `target`.
    fn symlink(&mut self, target: &Path, link: &Path) -> SysResult<()>;
    /// Creates an empty file, to bind a file over.
    fn touch(&mut self, path: &Path) -> SysResult<()>;
    fn is_dir(&mut self, path: &Path) -> bool;
    fn exists(&mut self, path: &Path) -> bool;
    /// A path that keeps naming `path`'s file for the rest of this process's life,
    /// whatever ids it takes meanwhile: a descriptor's /proc/self/fd link. The
    /// descriptor closes when the process executes its program.
    fn pin(&mut self, path: &Path) -> SysResult<PathBuf>;
    /// The flags of the mount holding `path` that a bind of it must keep (nosuid, nodev,
    /// noexec, and so on): a user namespace may not clear them.
    fn locked_flags(&mut self, path: &Path) -> SysResult<MsFlags>;
    fn mount(
        &mut self,
        source: Option<&Path>,
        target: &Path,
        fstype: Option<&str>,
        flags: MsFlags,
        data: Option<&str>,
    ) -> SysResult<()>;
    /// Sets `flags` (read-only, nosuid, nodev, noexec) on every mount below `target`: a
    /// recursive bind brings along what is mounted below its source (a container's
    /// /etc/hosts), which a remount of the top alone leaves writable.
    fn restrict_below(&mut self, target: &Path, flags: MsFlags) -> SysResult<()>;
    /// Makes `new_root` the root and detaches the old one.
    fn pivot_root(&mut self, new_root: &Path) -> SysResult<()>;
    /// Sets real, effective and saved user and group ids, with no supplementary groups.
    fn set_ids(&mut self, uid: Uid, gid: Gid) -> SysResult<()>;
    fn no_new_privs(&mut self) -> SysResult<()>;
    /// Brings up the loopback of this network namespace.
    fn loopback_up(&mut self) -> SysResult<()>;
}

/// The real system calls.
#[derive(Debug, Default)]
pub struct LinuxSyscall;

/// `mount_setattr(2)`'s argument, which the libc crate does not define.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Sets `flags` on `target` and every mount below it at once (Linux 5.12 and later).
fn mount_setattr_recursive(target: &Path, flags: MsFlags) -> SysResult<()> {
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    let pairs =
        [(MsFlags::MS_RDONLY, 0x1), (MsFlags::MS_NOSUID, 0x2), (MsFlags::MS_NODEV, 0x4), (MsFlags::MS_NOEXEC, 0x8)];
    let attr_set = pairs.iter().filter(|(flag, _)| flags.contains(*flag)).fold(0, |set, (_, attr)| set | attr);
    let attr = MountAttr { attr_set, attr_clr: 0, propagation: 0, userns_fd: 0 };
    let path = std::ffi::CString::new(target.as_os_str().as_encoded_bytes()).map_err(|_| Errno::EINVAL)?;
    // SAFETY: a valid C string and a mount_attr of the size passed, both alive for the call.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            std::ptr::from_ref(&attr),
            size_of::<MountAttr>(),
        )
    };
    Errno::result(result).map(drop)
}

fn io_errno(error: std::io::Error) -> Errno {
    error.raw_os_error().map_or(Errno::EIO, Errno::from_raw)
}

impl Syscall for LinuxSyscall {
    fn unshare(&mut self, flags: CloneFlags) -> SysResult<()> {
        nix::sched::unshare(flags)
    }

    fn unshare_mapped_from_outside(&mut self, flags: CloneFlags, uid_map: &str, gid_map: &str) -> SysResult<()> {
        use std::io::{Read, Write};
        let (read, write) = nix::unistd::pipe()?;
        let parent = nix::unistd::getpid();
        // SAFETY: the helper is single-threaded, so the child may do anything.
        match unsafe { nix::unistd::fork() }? {
            ForkResult::Child => {
                drop(write);
                let mut go = [0u8; 1];
                let mapped = matches!(std::fs::File::from(read).read(&mut go), Ok(1))
                    && std::fs::write(format!("/proc/{parent}/uid_map"), uid_map).is_ok()
                    && std::fs::write(format!("/proc/{parent}/gid_map"), gid_map).is_ok();
                // SAFETY: _exit ends this forked child without running anything of the parent's.
                unsafe { libc::_exit(if mapped { 0 } else { 1 }) }
            }
            ForkResult::Parent { child } => {
                drop(read);
                let unshared = nix::sched::unshare(flags);
                let mut write = std::fs::File::from(write);
                if unshared.is_ok() {
                    write.write_all(b"1").map_err(io_errno)?;
                }
                drop(write);
                let mapped = matches!(waitpid(child, None), Ok(WaitStatus::Exited(_, 0)));
                unshared?;
                if mapped {
                    Ok(())
                } else {
                    Err(Errno::EPERM)
                }
            }
        }
    }

    fn write_file(&mut self, path: &Path, contents: &[u8]) -> SysResult<()> {
        std::fs::write(path, contents).map_err(io_errno)
    }

    fn mkdir_all(&mut self, path: &Path) -> SysResult<()> {
        std::fs::create_dir_all(path).map_err(io_errno)
    }

    fn symlink(&mut self, target: &Path, link: &Path) -> SysResult<()> {
        std::os::unix::fs::symlink(target, link).map_err(io_errno)
    }

    fn touch(&mut self, path: &Path) -> SysResult<()> {
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).map(drop).map_err(io_errno)
    }

    fn is_dir(&mut self, path: &Path) -> bool {
        path.is_dir()
    }

    fn exists(&mut self, path: &Path) -> bool {
        path.exists()
    }

    fn pin(&mut self, path: &Path) -> SysResult<PathBuf> {
        use nix::fcntl::OFlag;
        use std::os::fd::IntoRawFd;
        let fd = nix::fcntl::open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty())?;
        Ok(PathBuf::from(format!("/proc/self/fd/{}", fd.into_raw_fd())))
    }

    fn locked_flags(&mut self, path: &Path) -> SysResult<MsFlags> {
        use nix::sys::statvfs::FsFlags;
        let flags = nix::sys::statvfs::statvfs(path)?.flags();
        let pairs = [
            (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
            (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
        ];
        Ok(pairs.iter().filter(|(fs, _)| flags.contains(*fs)).fold(MsFlags::empty(), |acc, (_, ms)| acc | *ms))
    }

    fn mount(
        &mut self,
        source: Option<&Path>,
        target: &Path,
        fstype: Option<&str>,
        flags: MsFlags,
        data: Option<&str>,
    ) -> SysResult<()> {
        nix::mount::mount(source, target, fstype, flags, data)
    }

    fn restrict_below(&mut self, target: &Path, flags: MsFlags) -> SysResult<()> {
        match mount_setattr_recursive(target, flags) {
            Err(Errno::ENOSYS) => {}
            done => return done,
        }
        // Before Linux 5.12: each mount below, one by one, keeping what it must keep.
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").map_err(io_errno)?;
        for mount in crate::mountinfo::mounts(&mountinfo) {
            if mount.point != target && mount.point.starts_with(target) {
                let locked = self.locked_flags(&mount.point)?;
                self.mount(None, &mount.point, None, MsFlags::MS_BIND | MsFlags::MS_REMOUNT | flags | locked, None)?;
            }
        }
        Ok(())
    }

    fn pivot_root(&mut self, new_root: &Path) -> SysResult<()> {
        nix::unistd::chdir(new_root)?;
        nix::unistd::pivot_root(".", ".")?;
        nix::mount::umount2(".", nix::mount::MntFlags::MNT_DETACH)?;
        nix::unistd::chdir("/")
    }

    fn set_ids(&mut self, uid: Uid, gid: Gid) -> SysResult<()> {
        nix::unistd::setgroups(&[])?;
        nix::unistd::setresgid(gid, gid, gid)?;
        nix::unistd::setresuid(uid, uid, uid)
    }

    fn no_new_privs(&mut self) -> SysResult<()> {
        // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers.
        Errno::result(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }).map(drop)
    }

    fn loopback_up(&mut self) -> SysResult<()> {
        // SAFETY: a datagram socket, used only for the interface ioctls below.
        let socket = Errno::result(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: socket is a descriptor this function just opened and owns.
        let socket = unsafe { std::os::fd::OwnedFd::from_raw_fd(socket) };
        // SAFETY: ifreq is plain data, valid when zeroed.
        let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo") {
            *slot = *byte as libc::c_char;
        }
        // SAFETY: both ioctls read and write only `request`, which outlives them.
        unsafe {
            Errno::result(libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request))?;
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            Errno::result(libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request)).map(drop)
        }
    }
}

/// One call the set-up made, as a recording stand-in saw it.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Unshare(CloneFlags),
    UnshareMapped(CloneFlags, String, String),
    Write(PathBuf, String),
    Mkdir(PathBuf),
    Symlink(PathBuf, PathBuf),
    Touch(PathBuf),
    Mount { source: Option<PathBuf>, target: PathBuf, fstype: Option<String>, flags: MsFlags, data: Option<String> },
    PivotRoot(PathBuf),
    RestrictBelow(PathBuf, MsFlags),
    Pin(PathBuf),
    SetIds(u32, u32),
    NoNewPrivs,
    LoopbackUp,
}

/// Records every call and answers from a made-up file system; a call named in
/// `refuse` fails with EPERM, as a kernel or container that forbids it would.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct RecordingSyscall {
    pub calls: Vec<Call>,
    pub dirs: Vec<PathBuf>,
    pub files: Vec<PathBuf>,
    pub locked: Vec<(PathBuf, MsFlags)>,
    pub refuse: Vec<&'static str>,
}

#[cfg(test)]
impl RecordingSyscall {
    fn check(&self, name: &'static str) -> SysResult<()> {
        if self.refuse.contains(&name) {
            Err(Errno::EPERM)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
impl Syscall for RecordingSyscall {
    fn unshare(&mut self, flags: CloneFlags) -> SysResult<()> {
        self.check("unshare")?;
        self.calls.push(Call::Unshare(flags));
        Ok(())
    }

    fn unshare_mapped_from_outside(&mut self, flags: CloneFlags, uid_map: &str, gid_map: &str) -> SysResult<()> {
        self.check("unshare")?;
        self.calls.push(Call::UnshareMapped(flags, uid_map.to_owned(), gid_map.to_owned()));
        Ok(())
    }

    fn write_file(&mut self, path: &Path, contents: &[u8]) -> SysResult<()> {
        self.check("write")?;
        self.calls.push(Call::Write(path.to_owned(), String::from_utf8_lossy(contents).into_owned()));
        Ok(())
    }

    fn mkdir_all(&mut self, path: &Path) -> SysResult<()> {
        self.calls.push(Call::Mkdir(path.to_owned()));
        Ok(())
    }

    fn symlink(&mut self, target: &Path, link: &Path) -> SysResult<()> {
        self.calls.push(Call::Symlink(target.to_owned(), link.to_owned()));
        Ok(())
    }

    fn touch(&mut self, path: &Path) -> SysResult<()> {
        self.calls.push(Call::Touch(path.to_owned()));
        Ok(())
    }

    fn is_dir(&mut self, path: &Path) -> bool {
        self.dirs.iter().any(|d| d == path)
    }

    fn exists(&mut self, path: &Path) -> bool {
        self.dirs.iter().chain(&self.files).any(|d| d == path)
    }

    fn pin(&mut self, path: &Path) -> SysResult<PathBuf> {
        self.check("pin")?;
        self.calls.push(Call::Pin(path.to_owned()));
        let pinned = PathBuf::from(format!("/proc/self/fd/{}", self.calls.len()));
        // The stand-in's file system answers for the pinned path as for the path.
        if self.dirs.iter().any(|d| d == path) {
            self.dirs.push(pinned.clone());
        } else {
            self.files.push(pinned.clone());
        }
        if let Some(&(_, flags)) = self.locked.iter().find(|(p, _)| p == path) {
            self.locked.push((pinned.clone(), flags));
        }
        Ok(pinned)
    }

    fn locked_flags(&mut self, path: &Path) -> SysResult<MsFlags> {
        Ok(self.locked.iter().find(|(p, _)| p == path).map_or(MsFlags::empty(), |(_, flags)| *flags))
    }

    fn restrict_below(&mut self, target: &Path, flags: MsFlags) -> SysResult<()> {
        self.check("restrict_below")?;
        self.calls.push(Call::RestrictBelow(target.to_owned(), flags));
        Ok(())
    }

    fn mount(
        &mut self,
        source: Option<&Path>,
        target: &Path,
        fstype: Option<&str>,
        flags: MsFlags,
        data: Option<&str>,
    ) -> SysResult<()> {
        self.check("mount")?;
        self.calls.push(Call::Mount {
            source: source.map(Path::to_owned),
            target: target.to_owned(),
            fstype: fstype.map(str::to_owned),
            flags,
            data: data.map(str::to_owned),
        });
        Ok(())
    }

    fn pivot_root(&mut self, new_root: &Path) -> SysResult<()> {
        self.check("pivot_root")?;
        self.calls.push(Call::PivotRoot(new_root.to_owned()));
        Ok(())
    }

    fn set_ids(&mut self, uid: Uid, gid: Gid) -> SysResult<()> {
        self.check("set_ids")?;
        self.calls.push(Call::SetIds(uid.as_raw(), gid.as_raw()));
        Ok(())
    }

    fn no_new_privs(&mut self) -> SysResult<()> {
        self.calls.push(Call::NoNewPrivs);
        Ok(())
    }

    fn loopback_up(&mut self) -> SysResult<()> {
        self.check("loopback_up")?;
        self.calls.push(Call::LoopbackUp);
        Ok(())
    }
}
