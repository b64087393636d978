//! The steps that put a worker slot's driver into its sandbox, in order. They run in
//! the set-up helper, single-threaded, before it executes the interpreter.

use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::MsFlags;
use nix::sched::CloneFlags;
use nix::unistd::{Gid, Uid};
use thiserror::Error;

use super::driver_package;
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

/// The namespaces a `full` sandbox lives in. The user namespace makes the driver root
/// inside it, which it needs to give every sample a pid namespace of its own, and
/// nothing outside it.
pub fn namespaces() -> CloneFlags {
    CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWNET
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS
}

/// Step one, before the fork that enters the new pid namespace. An unprivileged user
/// maps only itself, as 0. Root maps two unprivileged ids of the slot's (`mapped_ids`),
/// as 0 and 1, so that candidates run as a user of their own; a map of more than its
/// own id must be written from outside the namespace, by a process forked before it.
pub fn enter_namespaces(
    uid: Uid,
    gid: Gid,
    mapped_ids: Option<(u32, u32)>,
    sys: &mut impl Syscall,
) -> Result<(), SetupError> {
    let refused = "cannot create namespaces (unshare of user, mount, network, pid, ipc, uts)";
    if let Some((first_uid, first_gid)) = mapped_ids {
        let uid_map = format!("0 {first_uid} 2");
        let gid_map = format!("0 {first_gid} 2");
        return sys.unshare_mapped_from_outside(namespaces(), &uid_map, &gid_map).map_err(step(refused));
    }
    sys.unshare(namespaces()).map_err(step(refused))?;
    // Setgroups must be denied before an unprivileged gid_map.
    sys.write_file(Path::new("/proc/self/setgroups"), b"deny").map_err(step("cannot deny setgroups"))?;
    sys.write_file(Path::new("/proc/self/uid_map"), format!("0 {uid} 1").as_bytes())
        .map_err(step("cannot write uid_map"))?;
    sys.write_file(Path::new("/proc/self/gid_map"), format!("0 {gid} 1").as_bytes())
        .map_err(step("cannot write gid_map"))
}

fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// A path to bind into the new root: how the helper reaches it, the path itself, and
/// where the sandbox shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    reach: PathBuf,
    path: PathBuf,
    at: PathBuf,
    device: bool,
}

/// The rest of the set-up, in the first process of the new pid namespace: the paths to
/// bind are found (and pinned, if the helper's ids are about to change), the helper
/// takes the ids it runs as, builds the new root, and locks its privileges.
pub fn inside_namespaces(policy: &HelperPolicy, sys: &mut impl Syscall) -> Result<(), SetupError> {
    // Honest code may serve on 127.0.0.1; the namespace has no other interface, so
    // nothing else is reachable.
    sys.loopback_up().map_err(step("cannot bring up the loopback"))?;
    let binds = find_binds(policy, sys)?;
    let revealed = find_revealed(policy, sys)?;
    become_run_as(policy, sys)?;
    build_root(policy, &binds, &revealed, sys)?;
    lock_privileges(sys)
}

/// The paths to bind that exist. Root becomes the slot's unprivileged id before it
/// builds the root, since what it creates there must be owned by an id the namespace
/// maps; that id may not reach every path (an interpreter below /root), so each is
/// pinned first, by a descriptor that keeps reaching it.
fn find_binds(policy: &HelperPolicy, sys: &mut impl Syscall) -> Result<Vec<Bind>, SetupError> {
    let mut binds = Vec::new();
    for (paths, device) in [(&policy.read_only, false), (&policy.devices, true)] {
        for path in paths {
            if !sys.exists(path) {
                continue;
            }
            let reach = reach(policy, path, sys)?;
            binds.push(Bind { reach, path: path.clone(), at: path.clone(), device });
        }
    }
    Ok(binds)
}

/// The allowed packages' entries to bind back into the hidden package directories,
/// found and pinned as the other binds are.
fn find_revealed(policy: &HelperPolicy, sys: &mut impl Syscall) -> Result<Vec<Bind>, SetupError> {
    let mut revealed = Vec::new();
    for reveal in &policy.revealed {
        if sys.exists(&reveal.source) {
            let reach = reach(policy, &reveal.source, sys)?;
            revealed.push(Bind { reach, path: reveal.source.clone(), at: reveal.at.clone(), device: false });
        }
    }
    Ok(revealed)
}

/// How the helper reaches `path` once it has taken the ids it runs as.
fn reach(policy: &HelperPolicy, path: &Path, sys: &mut impl Syscall) -> Result<PathBuf, SetupError> {
    match policy.run_as {
        Some(_) => sys.pin(path).map_err(step(format!("cannot open {}", path.display()))),
        None => Ok(path.to_owned()),
    }
}

/// A new root holding only read-only views of what the interpreter needs, device nodes,
/// a private /tmp, a /proc of this namespace, and the driver package; then the old root
/// is let go.
fn build_root(
    policy: &HelperPolicy,
    binds: &[Bind],
    revealed: &[Bind],
    sys: &mut impl Syscall,
) -> Result<(), SetupError> {
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

    for bound in binds {
        // Device nodes work only on a mount without nodev.
        let flags = if bound.device { MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC } else { MsFlags::MS_RDONLY | hardened };
        bind(sys, bound, &inside(root, &bound.at), flags)?;
    }
    hide_packages(policy, revealed, sys)?;

    // Where the driver mounts each sample's own /dev/shm (POSIX shared memory and
    // semaphores, which multiprocessing needs).
    sys.mkdir_all(&inside(root, Path::new("/dev/shm"))).map_err(step("cannot create /dev/shm"))?;

    // The names programs read their standard streams by (`/dev/stdin`, Node's and
    // Bash's common idioms), through the process's own descriptors.
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        sys.symlink(Path::new(target), &inside(root, Path::new("/dev")).join(link))
            .map_err(step("cannot link the standard streams in /dev"))?;
    }

    let proc = inside(root, Path::new("/proc"));
    sys.mkdir_all(&proc).map_err(step("cannot create /proc"))?;
    sys.mount(Some(Path::new("proc")), &proc, Some("proc"), hardened | MsFlags::MS_NOEXEC, None)
        .map_err(step("cannot mount /proc for the new pid namespace"))?;

    let language = policy.language();
    let package = inside(root, Path::new(DRIVER_INSIDE)).join(&language.host().driver);
    sys.mkdir_all(&package).map_err(step("cannot create the driver's directory"))?;
    for (name, contents) in driver_package::files(language) {
        sys.write_file(&package.join(name), &contents).map_err(step("cannot copy the driver"))?;
    }

    let read_only = MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | hardened;
    sys.mount(None, root, None, read_only, None).map_err(step("cannot make the new root read-only"))?;
    sys.pivot_root(root).map_err(step("cannot switch to the new root"))
}

/// Hides the package directories the binds show behind empty tmpfs mounts, binds the
/// allowed packages back into them, and makes them read-only. A directory the helper
/// cannot reach (below one its ids may not enter) is out of the candidates' reach too.
fn hide_packages(policy: &HelperPolicy, revealed: &[Bind], sys: &mut impl Syscall) -> Result<(), SetupError> {
    let root = &policy.root_dir;
    let hardened = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    let mut hidden = Vec::new();
    for path in &policy.hidden {
        let target = inside(root, path);
        if !sys.is_dir(&target) {
            continue;
        }
        // Writable until the allowed packages' mount points are made in it.
        sys.mount(Some(Path::new("tmpfs")), &target, Some("tmpfs"), hardened, Some("size=1m,mode=0755"))
            .map_err(step(format!("cannot hide {}", path.display())))?;
        hidden.push((path, target));
    }
    for bound in revealed {
        bind(sys, bound, &inside(root, &bound.at), MsFlags::MS_RDONLY | hardened)?;
    }
    let read_only = MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | hardened;
    for (path, target) in hidden {
        sys.mount(None, &target, None, read_only, None)
            .map_err(step(format!("cannot make the mount hiding {} read-only", path.display())))?;
    }
    Ok(())
}

/// Binds `bound` at `target` and remounts it with `flags` plus whatever flags the source
/// mount has that a user namespace may not drop.
fn bind(sys: &mut impl Syscall, bound: &Bind, target: &Path, flags: MsFlags) -> Result<(), SetupError> {
    let (source, shown) = (bound.reach.as_path(), bound.path.display());
    if sys.is_dir(source) {
        sys.mkdir_all(target).map_err(step(format!("cannot create a mount point for {shown}")))?;
    } else {
        if let Some(parent) = target.parent() {
            sys.mkdir_all(parent).map_err(step(format!("cannot create a mount point for {shown}")))?;
        }
        // A file already there (one of the interpreter's own, in a directory that is not
        // hidden) is its own mount point: opening it to create it would need write access.
        if !sys.exists(target) {
            sys.touch(target).map_err(step(format!("cannot create a mount point for {shown}")))?;
        }
    }
    // Recursive: in a user namespace the kernel refuses to bind a tree without the
    // mounts below it (a container's /etc/hosts), which would uncover what they hide.
    let recursive = MsFlags::MS_BIND | MsFlags::MS_REC;
    sys.mount(Some(source), target, None, recursive, None).map_err(step(format!("cannot bind {shown}")))?;
    let locked = sys.locked_flags(source).map_err(step(format!("cannot read the mount flags of {shown}")))?;
    sys.mount(None, target, None, MsFlags::MS_BIND | MsFlags::MS_REMOUNT | flags | locked, None)
        .map_err(step(format!("cannot restrict the mount of {shown}")))?;
    sys.restrict_below(target, flags).map_err(step(format!("cannot restrict the mounts below {shown}")))
}

/// Below level `full`, the only set-up: the identity to run as, and no way back to
/// privilege.
pub fn drop_privileges(policy: &HelperPolicy, sys: &mut impl Syscall) -> Result<(), SetupError> {
    become_run_as(policy, sys)?;
    lock_privileges(sys)
}

fn become_run_as(policy: &HelperPolicy, sys: &mut impl Syscall) -> Result<(), SetupError> {
    match policy.run_as {
        Some((uid, gid)) => sys
            .set_ids(Uid::from_raw(uid), Gid::from_raw(gid))
            .map_err(step(format!("cannot become user {uid} and group {gid}"))),
        None => Ok(()),
    }
}

/// No way back to privilege through set-user-id programs or file capabilities.
fn lock_privileges(sys: &mut impl Syscall) -> Result<(), SetupError> {
    sys.no_new_privs().map_err(step("cannot set no_new_privs"))
}

#[cfg(test)]
mod tests {
    use super::super::packages::Reveal;
    use super::super::policy::Level;
    use super::super::syscall::{Call, RecordingSyscall};
    use super::*;
    use crate::language::Language;

    fn policy() -> HelperPolicy {
        HelperPolicy {
            level: Level::Full,
            run_as: Some((0, 0)),
            mapped_ids: Some((3_000_000_002, 3_000_000_002)),
            root_dir: PathBuf::from("/work/slot-1/root"),
            read_only: vec![PathBuf::from("/usr"), PathBuf::from("/lib64"), PathBuf::from("/opt/python")],
            hidden: Vec::new(),
            revealed: Vec::new(),
            devices: vec![PathBuf::from("/dev/null")],
            tmp_bytes: 1 << 20,
            language: "python".into(),
            interpreter: PathBuf::from("/opt/python/bin/python3"),
            driver: PathBuf::from("/work/interpreter"),
            scratch: PathBuf::from("/work/slot-1"),
            cgroup: None,
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
    fn an_unprivileged_user_maps_only_itself_as_root_of_the_namespace() {
        let mut sys = host();
        enter_namespaces(Uid::from_raw(1000), Gid::from_raw(100), None, &mut sys).unwrap();
        assert_eq!(
            sys.calls,
            [
                Call::Unshare(namespaces()),
                Call::Write("/proc/self/setgroups".into(), "deny".into()),
                Call::Write("/proc/self/uid_map".into(), "0 1000 1".into()),
                Call::Write("/proc/self/gid_map".into(), "0 100 1".into()),
            ]
        );
        assert!(namespaces().contains(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET | CloneFlags::CLONE_NEWPID));
    }

    #[test]
    fn root_maps_two_ids_of_the_slot_from_outside_so_candidates_get_a_user_of_their_own() {
        let mut sys = host();
        enter_namespaces(Uid::from_raw(0), Gid::from_raw(0), Some((3_000_000_002, 3_000_000_002)), &mut sys).unwrap();
        assert_eq!(
            sys.calls,
            [Call::UnshareMapped(namespaces(), "0 3000000002 2".into(), "0 3000000002 2".into())],
            "nothing of root's own ids is mapped"
        );
    }

    #[test]
    fn a_refused_namespace_is_an_error_naming_the_step() {
        let mut sys = RecordingSyscall { refuse: vec!["unshare"], ..host() };
        let error = enter_namespaces(Uid::from_raw(1000), Gid::from_raw(100), None, &mut sys).unwrap_err();
        assert!(error.to_string().starts_with("cannot create namespaces"), "{error}");
        assert!(sys.calls.is_empty());
        let error = enter_namespaces(Uid::from_raw(0), Gid::from_raw(0), Some((3, 3)), &mut sys).unwrap_err();
        assert!(error.to_string().starts_with("cannot create namespaces"), "{error}");
    }

    /// An unprivileged user's policy: the same root, its own ids throughout.
    fn unprivileged() -> HelperPolicy {
        HelperPolicy { run_as: None, mapped_ids: None, ..policy() }
    }

    fn mounts(sys: &RecordingSyscall) -> Vec<(Option<PathBuf>, PathBuf, MsFlags)> {
        sys.calls
            .iter()
            .filter_map(|call| match call {
                Call::Mount { source, target, flags, .. } => Some((source.clone(), target.clone(), *flags)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_new_root_is_read_only_with_only_what_was_named_and_switched_to_last() {
        let mut sys = host();
        inside_namespaces(&unprivileged(), &mut sys).unwrap();
        let mounts = mounts(&sys);
        let root = PathBuf::from("/work/slot-1/root");
        // /lib64 does not exist on this made-up host, so it is skipped.
        assert!(!mounts.iter().any(|(_, target, _)| target.ends_with("lib64")));
        let usr_remount = mounts.iter().find(|(s, t, _)| s.is_none() && *t == root.join("usr")).unwrap();
        assert!(usr_remount.2.contains(MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV));
        assert!(usr_remount.2.contains(MsFlags::MS_NOATIME), "the source's locked flags are kept");
        // Guards the binds in a container, whose /etc holds mounts of its own
        // (/etc/hosts): bound with them, as a user namespace requires, and made
        // read-only below too.
        let usr_bind = mounts.iter().find(|(s, t, _)| s.is_some() && *t == root.join("usr")).unwrap();
        assert_eq!(usr_bind.2, MsFlags::MS_BIND | MsFlags::MS_REC);
        let read_only = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        assert!(sys.calls.contains(&Call::RestrictBelow(root.join("usr"), read_only)), "{:?}", sys.calls);
        let null_remount = mounts.iter().find(|(s, t, _)| s.is_none() && *t == root.join("dev/null")).unwrap();
        assert!(!null_remount.2.contains(MsFlags::MS_NODEV), "device nodes need a mount without nodev");
        assert!(mounts.iter().any(|(s, t, _)| s.as_deref() == Some(Path::new("proc")) && *t == root.join("proc")));
        for (name, contents) in driver_package::files(Language::python()) {
            let path = root.join("passk/passk_driver").join(name);
            let contents = String::from_utf8_lossy(&contents).into_owned();
            assert!(sys.calls.contains(&Call::Write(path, contents)), "{name} is in the new root");
        }
        let last_three = &sys.calls[sys.calls.len() - 3..];
        assert!(
            matches!(&last_three[0], Call::Mount { source: None, target, flags, .. }
                if *target == root && flags.contains(MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY)),
            "the root is made read-only once everything is in place: {last_three:?}"
        );
        assert_eq!(last_three[1..], [Call::PivotRoot(root), Call::NoNewPrivs]);
        assert!(!sys.calls.iter().any(|call| matches!(call, Call::Pin(_) | Call::SetIds(..))));
    }

    /// A merged-usr host's policy: /lib shows /usr/lib, and so the system's packages
    /// twice; numpy is allowed; /usr/local's packages do not exist.
    fn hiding() -> (HelperPolicy, RecordingSyscall) {
        let packages = ["/usr/lib/python3/dist-packages", "/lib/python3/dist-packages"];
        let policy = HelperPolicy {
            read_only: vec![PathBuf::from("/usr"), PathBuf::from("/lib")],
            hidden: packages
                .iter()
                .map(PathBuf::from)
                .chain([PathBuf::from("/usr/local/lib/python3/dist-packages")])
                .collect(),
            revealed: packages
                .iter()
                .map(|dir| Reveal {
                    source: "/usr/lib/python3/dist-packages/numpy".into(),
                    at: Path::new(dir).join("numpy"),
                })
                .collect(),
            ..unprivileged()
        };
        let mut sys = host();
        sys.dirs.extend(["/lib", "/usr/lib/python3/dist-packages/numpy"].map(PathBuf::from));
        sys.dirs.extend(packages.iter().map(|dir| inside(&policy.root_dir, Path::new(dir))));
        (policy, sys)
    }

    /// Guards issue 22: the interpreter's packages (a benchmark's reference harness among
    /// them) are hidden wherever the binds show them, each behind an empty tmpfs
    /// mounted once every bind is in place, and made read-only once the allowed
    /// packages are bound back, read-only, into it.
    #[test]
    fn package_directories_are_hidden_after_the_binds_and_allowed_ones_bound_back_read_only() {
        let (policy, mut sys) = hiding();
        inside_namespaces(&policy, &mut sys).unwrap();
        let root = policy.root_dir.clone();
        let mounts = mounts(&sys);
        let position = |wanted: &(Option<PathBuf>, PathBuf, MsFlags)| mounts.iter().position(|m| m == wanted).unwrap();
        let hardened = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        let lib_bind = position(&(Some("/lib".into()), root.join("lib"), MsFlags::MS_BIND | MsFlags::MS_REC));
        for dir in ["usr/lib/python3/dist-packages", "lib/python3/dist-packages"] {
            let hidden = position(&(Some("tmpfs".into()), root.join(dir), hardened));
            let numpy = root.join(dir).join("numpy");
            let numpy_bind = position(&(
                Some("/usr/lib/python3/dist-packages/numpy".into()),
                numpy.clone(),
                MsFlags::MS_BIND | MsFlags::MS_REC,
            ));
            let numpy_read_only = mounts
                .iter()
                .position(|(s, t, flags)| {
                    s.is_none() && *t == numpy && flags.contains(MsFlags::MS_RDONLY | MsFlags::MS_BIND)
                })
                .unwrap();
            let read_only = position(&(None, root.join(dir), MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | hardened));
            assert!(
                lib_bind < hidden && hidden < numpy_bind && numpy_bind < numpy_read_only && numpy_read_only < read_only,
                "{dir}: {mounts:?}"
            );
            assert!(sys.calls.contains(&Call::Mkdir(numpy)), "the mount point is made in the hiding tmpfs");
        }
        assert!(
            !mounts.iter().any(|(_, target, _)| target.starts_with(root.join("usr/local"))),
            "nothing to hide there"
        );
    }

    #[test]
    fn root_pins_the_allowed_packages_before_it_becomes_the_slots_id() {
        let (policy, mut sys) = hiding();
        let policy = HelperPolicy { run_as: Some((0, 0)), mapped_ids: Some((3_000_000_002, 3_000_000_002)), ..policy };
        inside_namespaces(&policy, &mut sys).unwrap();
        let set_ids = sys.calls.iter().position(|call| *call == Call::SetIds(0, 0)).unwrap();
        let numpy = Call::Pin("/usr/lib/python3/dist-packages/numpy".into());
        assert_eq!(sys.calls[..set_ids].iter().filter(|call| **call == numpy).count(), 2, "{:?}", sys.calls);
    }

    #[test]
    fn a_loopback_that_cannot_come_up_fails_the_set_up_by_name() {
        let mut sys = RecordingSyscall { refuse: vec!["loopback_up"], ..host() };
        let error = inside_namespaces(&policy(), &mut sys).unwrap_err();
        assert_eq!(error.to_string(), "cannot bring up the loopback");
        assert!(sys.calls.is_empty(), "nothing else is attempted: {:?}", sys.calls);
    }

    /// Guards against root creating the new root's files as an id the namespace does
    /// not map (EOVERFLOW), and against binds the slot's id cannot reach.
    #[test]
    fn root_pins_what_it_binds_then_becomes_the_slots_id_then_builds() {
        let mut sys = host();
        inside_namespaces(&policy(), &mut sys).unwrap();
        let set_ids = sys.calls.iter().position(|call| *call == Call::SetIds(0, 0)).unwrap();
        assert_eq!(sys.calls[0], Call::LoopbackUp, "the loopback comes up while every privilege is held");
        let pins: Vec<&Call> = sys.calls[1..set_ids].iter().collect();
        assert_eq!(
            pins,
            [&Call::Pin("/usr".into()), &Call::Pin("/opt/python".into()), &Call::Pin("/dev/null".into())],
            "everything is pinned before the ids change, and nothing else happens before"
        );
        let binds: Vec<PathBuf> = mounts(&sys)
            .into_iter()
            .filter(|(_, _, flags)| *flags == MsFlags::MS_BIND | MsFlags::MS_REC)
            .map(|(source, _, _)| source.unwrap())
            .collect();
        assert_eq!(binds.len(), 3);
        assert!(binds.iter().all(|source| source.starts_with("/proc/self/fd")), "{binds:?}");
        let usr_remount =
            mounts(&sys).into_iter().find(|(s, t, _)| s.is_none() && t == Path::new("/work/slot-1/root/usr")).unwrap();
        assert!(usr_remount.2.contains(MsFlags::MS_NOATIME), "locked flags are read through the pin");
        assert_eq!(sys.calls.last(), Some(&Call::NoNewPrivs));
    }

    /// Guards against the private /tmp hiding an interpreter installed below /tmp.
    #[test]
    fn the_private_tmp_is_mounted_before_the_binds() {
        let mut sys = host();
        let mut policy = unprivileged();
        policy.read_only.push(PathBuf::from("/tmp/venv"));
        sys.dirs.push(PathBuf::from("/tmp/venv"));
        inside_namespaces(&policy, &mut sys).unwrap();
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
        inside_namespaces(&unprivileged(), &mut sys).unwrap();
        let tmp = sys.calls.iter().find_map(|call| match call {
            Call::Mount { target, data, .. } if target.ends_with("tmp") => data.clone(),
            _ => None,
        });
        assert_eq!(tmp.as_deref(), Some("size=1048576,mode=1777"));
    }

    #[test]
    fn root_becomes_root_of_the_namespace_then_locks_privilege() {
        let mut sys = host();
        drop_privileges(&policy(), &mut sys).unwrap();
        assert_eq!(sys.calls, [Call::SetIds(0, 0), Call::NoNewPrivs]);
    }

    #[test]
    fn at_level_uid_privileges_are_dropped_to_the_slot_user_then_locked() {
        let policy = HelperPolicy {
            level: Level::Uid,
            run_as: Some((3_000_000_002, 3_000_000_002)),
            mapped_ids: None,
            ..policy()
        };
        let mut sys = host();
        drop_privileges(&policy, &mut sys).unwrap();
        assert_eq!(sys.calls, [Call::SetIds(3_000_000_002, 3_000_000_002), Call::NoNewPrivs]);
        let mut sys = RecordingSyscall { refuse: vec!["set_ids"], ..host() };
        let error = drop_privileges(&policy, &mut sys).unwrap_err();
        assert!(error.to_string().contains("cannot become user 3000000002"), "{error}");
        assert!(!sys.calls.contains(&Call::NoNewPrivs), "nothing runs after a failed drop");
    }
}
