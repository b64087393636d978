//! The steps that put a worker slot's driver into its sandbox, in order. They run in
//! the set-up helper, single-threaded, before it executes the interpreter.

use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::MsFlags;
use nix::sched::CloneFlags;
use nix::unistd::{Gid, Uid};
use thiserror::Error;

use super::policy::{HelperPolicy, DRIVER_INSIDE};
use super::syscall::Syscall;

#[derive(Debug, Error)]
#[error("{step}")]
pub struct SetupError {
    step: String,
    #[source]
    errno: Errno,
}

fn step(step: impl Into<String>) -> impl FnOnce(Errno) -> SetupError {
    let step = step.into();
    move |errno| SetupError { step, errno }
}

/// The namespaces a `full` sandbox lives in. An unprivileged user needs a user namespace
/// to create the others; root does not, and drops to an unprivileged user instead.
pub fn namespaces(is_root: bool) -> CloneFlags {
    let flags = CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWNET
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS;
    if is_root {
        flags
    } else {
        flags | CloneFlags::CLONE_NEWUSER
    }
}

/// Step one, before the fork that enters the new pid namespace.
pub fn enter_namespaces(uid: Uid, gid: Gid, sys: &mut impl Syscall) -> Result<(), SetupError> {
    let flags = namespaces(uid.is_root());
    sys.unshare(flags).map_err(step("cannot create namespaces (unshare of user, mount, network, pid, ipc, uts)"))?;
    if !uid.is_root() {
        // Map only our own ids; setgroups must be denied before an unprivileged gid_map.
        sys.write_file(Path::new("/proc/self/setgroups"), b"deny").map_err(step("cannot deny setgroups"))?;
        sys.write_file(Path::new("/proc/self/uid_map"), format!("{uid} {uid} 1").as_bytes())
            .map_err(step("cannot write uid_map"))?;
        sys.write_file(Path::new("/proc/self/gid_map"), format!("{gid} {gid} 1").as_bytes())
            .map_err(step("cannot write gid_map"))?;
    }
    Ok(())
}

fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Step two, in the first process of the new pid namespace: a new root holding only
/// read-only views of what the interpreter needs, device nodes, a private /tmp, a /proc
/// of this namespace, and the driver; then the old root is let go.
pub fn build_root(policy: &HelperPolicy, driver_source: &[u8], sys: &mut impl Syscall) -> Result<(), SetupError> {
    let root = &policy.root_dir;
    let private = MsFlags::MS_REC | MsFlags::MS_PRIVATE;
    sys.mount(None, Path::new("/"), None, private, None).map_err(step("cannot make mounts private"))?;
    let hardened = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    sys.mount(Some(Path::new("tmpfs")), root, Some("tmpfs"), hardened, Some("size=1m,mode=0755"))
        .map_err(step(format!("cannot mount the new root at {}", root.display())))?;

    // The private /tmp first, so that anything bound below /tmp (an interpreter
    // installed there) is not hidden by it.
    let tmp = inside(root, Path::new("/tmp"));
    sys.mkdir_all(&tmp).map_err(step("cannot create /tmp"))?;
    let size = format!("size={},mode=1777", policy.tmp_bytes);
    sys.mount(Some(Path::new("tmpfs")), &tmp, Some("tmpfs"), hardened, Some(&size))
        .map_err(step("cannot mount the private /tmp"))?;

    for source in &policy.read_only {
        if !sys.exists(source) {
            continue;
        }
        bind(sys, source, &inside(root, source), MsFlags::MS_RDONLY | hardened)?;
    }
    for device in &policy.devices {
        if sys.exists(device) {
            // Device nodes work only on a mount without nodev.
            bind(sys, device, &inside(root, device), MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC)?;
        }
    }

    let proc = inside(root, Path::new("/proc"));
    sys.mkdir_all(&proc).map_err(step("cannot create /proc"))?;
    sys.mount(Some(Path::new("proc")), &proc, Some("proc"), hardened | MsFlags::MS_NOEXEC, None)
        .map_err(step("cannot mount /proc for the new pid namespace"))?;

    let driver = inside(root, Path::new(DRIVER_INSIDE));
    if let Some(parent) = driver.parent() {
        sys.mkdir_all(parent).map_err(step("cannot create the driver's directory"))?;
    }
    sys.write_file(&driver, driver_source).map_err(step("cannot copy the driver"))?;

    let read_only = MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | hardened;
    sys.mount(None, root, None, read_only, None).map_err(step("cannot make the new root read-only"))?;
    sys.pivot_root(root).map_err(step("cannot switch to the new root"))
}

/// Binds `source` at `target` and remounts it with `flags` plus whatever flags the source
/// mount has that a user namespace may not drop.
fn bind(sys: &mut impl Syscall, source: &Path, target: &Path, flags: MsFlags) -> Result<(), SetupError> {
    let shown = source.display();
    if sys.is_dir(source) {
        sys.mkdir_all(target).map_err(step(format!("cannot create a mount point for {shown}")))?;
    } else {
        if let Some(parent) = target.parent() {
            sys.mkdir_all(parent).map_err(step(format!("cannot create a mount point for {shown}")))?;
        }
        sys.touch(target).map_err(step(format!("cannot create a mount point for {shown}")))?;
    }
    sys.mount(Some(source), target, None, MsFlags::MS_BIND, None).map_err(step(format!("cannot bind {shown}")))?;
    let locked = sys.locked_flags(source).map_err(step(format!("cannot read the mount flags of {shown}")))?;
    sys.mount(None, target, None, MsFlags::MS_BIND | MsFlags::MS_REMOUNT | flags | locked, None)
        .map_err(step(format!("cannot restrict the mount of {shown}")))
}

/// The last step: the unprivileged identity, and no way back to privilege through
/// set-user-id programs or file capabilities.
pub fn drop_privileges(policy: &HelperPolicy, sys: &mut impl Syscall) -> Result<(), SetupError> {
    if let Some((uid, gid)) = policy.run_as {
        sys.set_ids(Uid::from_raw(uid), Gid::from_raw(gid))
            .map_err(step(format!("cannot become user {uid} and group {gid}")))?;
    }
    sys.no_new_privs().map_err(step("cannot set no_new_privs"))
}

#[cfg(test)]
mod tests {
    use super::super::policy::Level;
    use super::super::syscall::{Call, RecordingSyscall};
    use super::*;

    fn policy() -> HelperPolicy {
        HelperPolicy {
            level: Level::Full,
            run_as: Some((3_000_000_001, 3_000_000_001)),
            root_dir: PathBuf::from("/work/slot-1/root"),
            read_only: vec![PathBuf::from("/usr"), PathBuf::from("/lib64"), PathBuf::from("/opt/python")],
            devices: vec![PathBuf::from("/dev/null")],
            tmp_bytes: 1 << 20,
            interpreter: PathBuf::from("/opt/python/bin/python3"),
            driver: PathBuf::from("/work/driver.py"),
            scratch: PathBuf::from("/work/slot-1"),
        }
    }

    fn host() -> RecordingSyscall {
        RecordingSyscall {
            dirs: vec![PathBuf::from("/usr"), PathBuf::from("/opt/python")],
            files: vec![PathBuf::from("/dev/null")],
            locked: vec![(PathBuf::from("/usr"), MsFlags::MS_NOATIME)],
            ..RecordingSyscall::default()
        }
    }

    #[test]
    fn an_unprivileged_user_gets_a_user_namespace_mapping_only_itself() {
        let mut sys = host();
        enter_namespaces(Uid::from_raw(1000), Gid::from_raw(100), &mut sys).unwrap();
        assert_eq!(
            sys.calls,
            [
                Call::Unshare(namespaces(false)),
                Call::Write("/proc/self/setgroups".into(), "deny".into()),
                Call::Write("/proc/self/uid_map".into(), "1000 1000 1".into()),
                Call::Write("/proc/self/gid_map".into(), "100 100 1".into()),
            ]
        );
        assert!(namespaces(false).contains(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET));
    }

    #[test]
    fn root_needs_no_user_namespace() {
        let mut sys = host();
        enter_namespaces(Uid::from_raw(0), Gid::from_raw(0), &mut sys).unwrap();
        assert_eq!(sys.calls, [Call::Unshare(namespaces(true))]);
        assert!(!namespaces(true).contains(CloneFlags::CLONE_NEWUSER));
    }

    #[test]
    fn a_refused_namespace_is_an_error_naming_the_step() {
        let mut sys = RecordingSyscall { refuse: vec!["unshare"], ..host() };
        let error = enter_namespaces(Uid::from_raw(1000), Gid::from_raw(100), &mut sys).unwrap_err();
        assert!(error.to_string().starts_with("cannot create namespaces"), "{error}");
        assert!(sys.calls.is_empty());
    }

    #[test]
    fn the_new_root_is_read_only_with_only_what_was_named_and_switched_to_last() {
        let mut sys = host();
        build_root(&policy(), b"driver", &mut sys).unwrap();
        let mounts: Vec<(Option<PathBuf>, PathBuf, MsFlags)> = sys
            .calls
            .iter()
            .filter_map(|call| match call {
                Call::Mount { source, target, flags, .. } => Some((source.clone(), target.clone(), *flags)),
                _ => None,
            })
            .collect();
        let root = PathBuf::from("/work/slot-1/root");
        // /lib64 does not exist on this made-up host, so it is skipped.
        assert!(!mounts.iter().any(|(_, target, _)| target.ends_with("lib64")));
        let usr_remount = mounts.iter().find(|(s, t, _)| s.is_none() && *t == root.join("usr")).unwrap();
        assert!(usr_remount.2.contains(MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV));
        assert!(usr_remount.2.contains(MsFlags::MS_NOATIME), "the source's locked flags are kept");
        let null_remount = mounts.iter().find(|(s, t, _)| s.is_none() && *t == root.join("dev/null")).unwrap();
        assert!(!null_remount.2.contains(MsFlags::MS_NODEV), "device nodes need a mount without nodev");
        assert!(mounts.iter().any(|(s, t, _)| s.as_deref() == Some(Path::new("proc")) && *t == root.join("proc")));
        assert!(sys.calls.contains(&Call::Write(root.join("passk/driver.py"), "driver".into())));
        let last_two = &sys.calls[sys.calls.len() - 2..];
        assert!(
            matches!(&last_two[0], Call::Mount { source: None, target, flags, .. }
                if *target == root && flags.contains(MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY)),
            "the root is made read-only once everything is in place: {last_two:?}"
        );
        assert_eq!(last_two[1], Call::PivotRoot(root));
    }

    /// Guards against the private /tmp hiding an interpreter installed below /tmp.
    #[test]
    fn the_private_tmp_is_mounted_before_the_binds() {
        let mut sys = host();
        let mut policy = policy();
        policy.read_only.push(PathBuf::from("/tmp/venv"));
        sys.dirs.push(PathBuf::from("/tmp/venv"));
        build_root(&policy, b"", &mut sys).unwrap();
        let position = |wanted: &str| {
            sys.calls
                .iter()
                .position(|call| matches!(call, Call::Mount { target, .. } if target.ends_with(wanted)))
                .unwrap()
        };
        assert!(position("tmp") < position("tmp/venv"));
        assert!(position("tmp") < position("usr"));
    }

    #[test]
    fn the_private_tmp_is_size_limited() {
        let mut sys = host();
        build_root(&policy(), b"", &mut sys).unwrap();
        let tmp = sys.calls.iter().find_map(|call| match call {
            Call::Mount { target, data, .. } if target.ends_with("tmp") => data.clone(),
            _ => None,
        });
        assert_eq!(tmp.as_deref(), Some("size=1048576,mode=1777"));
    }

    #[test]
    fn privileges_are_dropped_to_the_slot_user_then_locked() {
        let mut sys = host();
        drop_privileges(&policy(), &mut sys).unwrap();
        assert_eq!(sys.calls, [Call::SetIds(3_000_000_001, 3_000_000_001), Call::NoNewPrivs]);
        let mut sys = RecordingSyscall { refuse: vec!["set_ids"], ..host() };
        let error = drop_privileges(&policy(), &mut sys).unwrap_err();
        assert!(error.to_string().contains("cannot become user 3000000001"), "{error}");
        assert!(!sys.calls.contains(&Call::NoNewPrivs), "nothing runs after a failed drop");
    }
}
