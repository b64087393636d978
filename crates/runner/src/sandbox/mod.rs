//! The sandbox each worker slot's driver runs in.
//!
//! Candidates are untrusted: they may be buggy, hostile, or trained to game their
//! reward. At level `full` each slot's driver, and so every candidate it forks, sees
//! read-only views of only what the interpreter needs, a private size-limited /tmp, no
//! network but its own (a new network namespace holds only a loopback of its own), and a
//! pid namespace whose init is the driver, so no candidate can see or signal a process
//! outside it and none outlives it. All of this is built from kernel primitives by a
//! helper (`passk __sandbox-exec`) that the harness starts for each slot: a fresh,
//! single-threaded process that isolates itself and then executes the interpreter, so no
//! set-up runs after a fork in the harness's multi-threaded runtime.
//!
//! Hosts differ in what they allow: containers usually refuse namespaces, and root
//! needs no user namespace but must shed its privileges. So the level is found by
//! trying the real operations once, strongest first, and whatever is missing is
//! reported with what would enable it.

pub mod driver_package;
mod packages;
mod policy;
pub mod seccomp;
mod setup;
mod syscall;

use std::ffi::CString;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{ForkResult, Gid, Uid};
use thiserror::Error;

use crate::cgroup::SlotGroups;
use crate::language::Language;

use crate::limits::Limits;
pub use driver_package::write as write_driver;
pub use packages::PackageView;
pub use policy::{HelperPolicy, Level, Mounts, SandboxMode};
use syscall::LinuxSyscall;

/// The helper's exit status when the sandbox could not be set up; it says why on stderr.
pub const EXIT_SETUP_FAILED: i32 = 125;
/// The helper's exit status when the interpreter could not be executed.
pub const EXIT_EXEC_FAILED: i32 = 126;

/// When passk runs as root, worker slot N runs as this user and group plus 2N (the
/// driver and judges) and plus 2N + 1 (candidates, at level `full`): ids no account
/// uses, so that candidates own nothing and cannot signal anything outside.
pub const SLOT_ID_BASE: u32 = 3_000_000_000;

#[derive(Debug, Error)]
enum HelperError {
    #[error("unreadable sandbox policy")]
    Policy(#[source] serde_json::Error),
    #[error(transparent)]
    Setup(#[from] setup::SetupError),
    #[error("cannot join the slot's control groups")]
    Cgroup(#[source] crate::cgroup::CgroupError),
    #[error("cannot fork into the new pid namespace")]
    Fork(#[source] Errno),
    #[error("cannot execute {program}")]
    Exec {
        program: String,
        #[source]
        source: Errno,
    },
}

/// The `passk __sandbox-exec` helper: sets up the sandbox described by `policy_json`
/// and executes the interpreter in it. Must be called before any other thread exists.
pub fn run_helper(policy_json: &str) -> ! {
    let Err(error) = helper(policy_json);
    eprintln!("passk sandbox: {}", crate::error_chain(&error));
    let code = match error {
        HelperError::Exec { .. } => EXIT_EXEC_FAILED,
        _ => EXIT_SETUP_FAILED,
    };
    std::process::exit(code)
}

fn helper(policy_json: &str) -> Result<std::convert::Infallible, HelperError> {
    let policy: HelperPolicy = serde_json::from_str(policy_json).map_err(HelperError::Policy)?;
    let mut sys = LinuxSyscall;
    // First, so that everything the slot runs is counted.
    let cgroup = policy.cgroup.as_ref().map(crate::cgroup::enter).transpose().map_err(HelperError::Cgroup)?;
    let command = policy.command(cgroup.as_deref());
    match policy.level {
        Level::Full => {
            setup::enter_namespaces(Uid::current(), Gid::current(), policy.mapped_ids, &mut sys)?;
            // SAFETY: the helper is single-threaded, so the child may do anything.
            match unsafe { nix::unistd::fork() }.map_err(HelperError::Fork)? {
                ForkResult::Parent { child } => wait_for(child),
                ForkResult::Child => {
                    // The first process of the new pid namespace: should the helper die,
                    // it goes too, and with it everything in the namespace.
                    // SAFETY: PR_SET_PDEATHSIG takes plain integers.
                    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
                    setup::inside_namespaces(&policy, &mut sys)?;
                    exec(&command)
                }
            }
        }
        Level::Uid | Level::Minimal => {
            setup::drop_privileges(&policy, &mut sys)?;
            exec(&command)
        }
        Level::None => exec(&command),
    }
}

/// The helper outside the pid namespace waits for the namespace's first process and
/// exits as it did. It lets go of the harness's pipes, the judge's line and the source
/// line, so that only the driver holds them and their closing is seen on both sides.
fn wait_for(child: nix::unistd::Pid) -> ! {
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto the standard descriptors of this single-threaded process.
        unsafe {
            libc::dup2(null.as_raw_fd(), 0);
            libc::dup2(null.as_raw_fd(), 1);
        }
    }
    // SAFETY: nothing in this process uses the descriptors.
    unsafe {
        libc::close(crate::judge_link::JUDGE_LINK_FD);
        libc::close(crate::source_line::SOURCE_LINE_FD);
    }
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => std::process::exit(128 + signal as i32),
            Err(Errno::EINTR) | Ok(_) => continue,
            Err(_) => std::process::exit(EXIT_SETUP_FAILED),
        }
    }
}

fn exec(command: &[String]) -> Result<std::convert::Infallible, HelperError> {
    let program = command.first().cloned().unwrap_or_default();
    let args: Vec<CString> = command
        .iter()
        .map(|arg| CString::new(arg.as_bytes()).map_err(|_| Errno::EINVAL))
        .collect::<Result<_, _>>()
        .map_err(|source| HelperError::Exec { program: program.clone(), source })?;
    let Some(path) = args.first() else {
        return Err(HelperError::Exec { program, source: Errno::EINVAL });
    };
    nix::unistd::execv(path, &args).map_err(|source| HelperError::Exec { program, source })
}

/// The isolation in force for a run, and why anything stronger was not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    pub level: Level,
    /// Each stronger level that was tried, with what the host answered.
    pub refused: Vec<(Level, String)>,
}

impl Isolation {
    /// What would enable full isolation on this host.
    pub fn advice() -> &'static str {
        if Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists() {
            "inside a container, full isolation needs `docker run --security-opt seccomp=unconfined \
             --security-opt apparmor=unconfined --security-opt systempaths=unconfined` (or the \
             equivalent for your runtime)"
        } else {
            "full isolation needs user namespaces: run passk as root, or allow unprivileged user \
             namespaces (sysctl user.max_user_namespaces=15000; on Ubuntu also \
             kernel.apparmor_restrict_unprivileged_userns=0)"
        }
    }
}

/// The capabilities root needs to hand candidates to another user (give them their
/// directories, and become that user) that this process lacks, by name.
pub fn missing_user_capabilities() -> Vec<&'static str> {
    const NEEDED: [(u32, &str); 3] = [(0, "CAP_CHOWN"), (6, "CAP_SETGID"), (7, "CAP_SETUID")];
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok());
    // Where /proc does not say, nothing is known to be missing.
    let Some(effective) = effective else { return Vec::new() };
    NEEDED.iter().filter(|(bit, _)| effective & (1 << bit) == 0).map(|(_, name)| *name).collect()
}

#[derive(Debug, Error)]
pub enum SandboxError {
    #[error("full isolation is unavailable ({reason}); {}", Isolation::advice())]
    StrictUnavailable { reason: String },
    #[error(
        "passk runs as root, and no other user could run the interpreter ({reason}); passk never runs \
         candidates as root: make the interpreter executable by every user (one installed outside /root, \
         passed with --python), or allow namespaces ({})",
        Isolation::advice()
    )]
    RootWithoutAnotherUser { reason: String },
    #[error(
        "passk runs as root without the capabilities to run candidates as another user ({missing}: a container \
         started with `--cap-drop ALL` has none); passk never runs candidates as root: run it as an unprivileged \
         user (`docker run --user \"$(id -u):$(id -g)\"`, or the image's own user), or keep Docker's default \
         capabilities"
    )]
    RootWithoutCapabilities { missing: String },
    #[error(
        "python {python} carries {found}, whose answers candidates could read at sandbox level {level}, where the \
         interpreter's packages cannot be hidden: give --python an environment without it (--allow-package cannot \
         make a benchmark's package safe), or allow full isolation, where candidates see the standard library \
         only: {}",
        Isolation::advice()
    )]
    BenchmarkVisible { level: Level, python: String, found: String },
}

/// What the harness knows when it builds each slot's sandbox.
#[derive(Debug, Clone)]
pub struct SandboxContext {
    /// The program that runs `__sandbox-exec` (the passk executable).
    pub helper: PathBuf,
    pub language: &'static Language,
    pub interpreter: PathBuf,
    /// What is bound read-only into a `full` sandbox: the policy's directories, and the
    /// interpreter's and the toolchains' libraries' that they do not cover.
    pub read_only: Vec<PathBuf>,
    /// Which Python packages a `full` sandbox shows.
    pub packages: PackageView,
    pub driver: PathBuf,
    pub workdir: PathBuf,
    pub limits: Limits,
    /// The environment every helper and driver gets.
    pub environment: Vec<(String, String)>,
    /// Each slot's control groups; empty where the run has none.
    pub cgroups: Vec<SlotGroups>,
    /// Each slot's CPU; empty where the kernel places the slots (see `placement`).
    pub cpus: Vec<usize>,
}

/// The policy's read-only directories, and those of `paths` (the interpreter's, the
/// toolchains' libraries) they do not cover.
pub fn read_only_paths<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> Vec<PathBuf> {
    let mut read_only = Mounts::from_policy().read_only;
    for path in paths {
        if !read_only.iter().any(|covered| path.starts_with(covered)) {
            read_only.push(path.clone());
        }
    }
    read_only
}

/// The directories of the system's Python packages that the policy hides, as they are
/// on this host.
pub fn hidden_system_packages() -> Vec<PathBuf> {
    Mounts::from_policy().hidden.iter().flat_map(|pattern| crate::pattern::expand(pattern)).collect()
}

impl SandboxContext {
    /// The policy for one worker slot at `level`.
    pub fn policy(&self, level: Level, slot: usize) -> HelperPolicy {
        let slot_id = u32::try_from(slot).ok().and_then(|slot| slot.checked_mul(2)?.checked_add(SLOT_ID_BASE));
        let slot_id = slot_id.unwrap_or(u32::MAX - 1);
        let (run_as, mapped_ids) = match level {
            Level::Full if Uid::effective().is_root() => (Some((0, 0)), Some((slot_id, slot_id))),
            Level::Uid => (Some((slot_id, slot_id)), None),
            _ => (None, None),
        };
        HelperPolicy {
            level,
            run_as,
            mapped_ids,
            root_dir: self.slot_dir(slot).join("root"),
            read_only: self.read_only.clone(),
            hidden: self.packages.hidden.clone(),
            revealed: self.packages.revealed.clone(),
            devices: Mounts::from_policy().devices,
            tmp_bytes: self.limits.tmp_mib << 20,
            language: self.language.name.clone(),
            interpreter: self.interpreter.clone(),
            driver: self.driver.clone(),
            scratch: self.slot_dir(slot).join("scratch"),
            cgroup: self.cgroups.get(slot).cloned(),
        }
    }

    pub fn slot_dir(&self, slot: usize) -> PathBuf {
        self.workdir.join(format!("slot-{slot}"))
    }

    /// Creates slot `slot`'s directories, owned by whoever its candidates run as.
    pub fn prepare_slot(&self, policy: &HelperPolicy, slot: usize) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&policy.root_dir)?;
        std::fs::create_dir_all(&policy.scratch)?;
        // A level tried before may have given the directory to its own user.
        let (uid, gid) = match (policy.level, policy.run_as) {
            (Level::Uid, Some(ids)) => ids,
            _ => (Uid::effective().as_raw(), Gid::effective().as_raw()),
        };
        std::os::unix::fs::chown(&policy.scratch, Some(uid), Some(gid))?;
        std::fs::set_permissions(&policy.scratch, std::fs::Permissions::from_mode(0o700))?;
        if policy.run_as.is_some() {
            // The slot's user must reach its directories: the scratch directory and the
            // driver at level uid, the new root's mount point at level full.
            for dir in [&self.workdir, &self.slot_dir(slot)] {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))?;
            }
        }
        Ok(())
    }

    /// A command that runs the helper with `policy`.
    pub fn command(&self, policy: &HelperPolicy) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.helper);
        command
            .arg("__sandbox-exec")
            .arg(serde_json::to_string(policy).expect("a policy always serializes"))
            .current_dir(&self.workdir)
            .env_clear()
            .envs(self.environment.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command
    }

    /// The levels `mode` allows, strongest first. Each is tried for real, by starting
    /// the workers in it, and the first that comes up is used.
    pub fn levels(mode: SandboxMode) -> &'static [Level] {
        match mode {
            SandboxMode::None => &[Level::None],
            SandboxMode::Strict => &[Level::Full],
            // Below `uid`, root would run candidates as root.
            SandboxMode::Auto if Uid::effective().is_root() => &[Level::Full, Level::Uid],
            SandboxMode::Auto => &[Level::Full, Level::Minimal],
        }
    }
}
