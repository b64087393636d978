//! Control groups: what a sample uses, counted by the kernel.
//!
//! Limits set on a process (rlimits) count that process alone, and a sample can
//! always make more: children, memfd, shared memory, a tmpfs of its own. A control
//! group counts every page charged while any of its processes runs, however it was
//! made, and the kernel's out-of-memory killer acts within the group alone. So each
//! worker slot gets a group its whole driver lives in, with the same CPU weight as every
//! other slot, and below it a group for samples, which every process forked for a
//! sample joins before it runs anything: its memory limit, with swap off, and its pids
//! limit hold for the sample as a whole, and its counters give each results line the
//! sample's peak memory and CPU time. The driver and the judge stay outside it, so an
//! out-of-memory kill takes a candidate, never them.
//!
//! Hosts differ: cgroup v2 on modern hosts and in containers, v1 controllers on
//! older ones (sometimes beside a v2 mount that holds none of them), a read-only
//! mount in a container run with default flags. The groups are made under the
//! harness's own, so a delegated subtree is enough when not root. Whatever is missing
//! is found by trying, and reported as the reason the run has no groups.

mod discover;

use std::ffi::CString;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};
use serde_json::json;
use thiserror::Error;

use crate::limits::Limits;
use crate::reaper::{self, Left};
use discover::{Hierarchies, Hierarchy};

/// Which interface the groups were made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    V1,
    V2,
}

/// One worker slot's groups, as its set-up helper and driver use them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotGroups {
    pub version: Version,
    /// `cgroup.procs` of the slot's own groups, which the helper moves into before it
    /// sets up anything else, so the driver, the judge and every candidate inherit them.
    pub enter: Vec<PathBuf>,
    /// `cgroup.procs` of the sample's groups, which every process forked for a sample
    /// joins first.
    pub sample: Vec<PathBuf>,
    /// The sample group's peak memory (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`).
    pub peak: PathBuf,
    /// The peak of its socket buffers, where they are counted apart from the rest of its
    /// memory (v1 `memory.kmem.tcp.max_usage_in_bytes`).
    pub socket_peak: Option<PathBuf>,
    /// Its out-of-memory kills (v1 `memory.oom_control`, v2 `memory.events`).
    pub events: PathBuf,
    /// Its CPU time, if accounted (v1 `cpuacct.usage`, v2 `cpu.stat`).
    pub cpu: Option<PathBuf>,
    /// Its directory in the pids hierarchy, whose `cgroup.procs` lists every process of
    /// the sample and `pids.current` counts them, so that the driver can kill them all at
    /// the sample's end (v2 through `cgroup.kill`, where the kernel has one).
    pub members: PathBuf,
}

/// What the kernel counts and limits per sample in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accounting {
    Groups {
        version: Version,
        memory_mib: u64,
        swap_off: bool,
        sockets: Sockets,
        processes: u64,
        cpu_time: bool,
        cpu_weight: bool,
    },
    /// No groups could be made; why.
    Unavailable(String),
}

/// How a sample's socket buffers count: memory the kernel holds for its sockets, which
/// loopback connections that nobody reads fill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sockets {
    /// With the rest of its memory, against the one limit (v2).
    WithMemory,
    /// Apart, against a limit as large as the memory limit, and in the peak beside the
    /// rest (v1, which charges internet sockets' buffers only once that limit is set;
    /// Unix sockets' it charges with the rest).
    Apart,
    /// Not at all; why.
    Uncounted(String),
}

impl Sockets {
    fn to_json(&self) -> serde_json::Value {
        match self {
            Sockets::WithMemory => json!("with the rest of its memory"),
            Sockets::Apart => json!("apart, against a limit as large"),
            Sockets::Uncounted(reason) => json!(format!("not counted: {reason}")),
        }
    }
}

impl Accounting {
    pub fn in_force(&self) -> bool {
        matches!(self, Accounting::Groups { .. })
    }

    /// The summary's record of it.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Accounting::Groups { version, memory_mib, swap_off, sockets, processes, cpu_time, cpu_weight } => json!({
                "version": match version { Version::V1 => 1, Version::V2 => 2 },
                "memory_mib": memory_mib,
                "swap_off": swap_off,
                "socket_buffers": sockets.to_json(),
                "processes": processes,
                "cpu_time": cpu_time,
                "equal_cpu_weight": cpu_weight,
            }),
            Accounting::Unavailable(reason) => json!({ "unavailable": reason }),
        }
    }
}

impl std::fmt::Display for Accounting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Accounting::Groups { version, memory_mib, swap_off, sockets, processes, cpu_time, cpu_weight } => {
                let version = match version {
                    Version::V1 => "v1",
                    Version::V2 => "v2",
                };
                write!(f, "cgroup {version}, a group per sample: ")?;
                f.write_str(match sockets {
                    Sockets::WithMemory => "all its memory counted, socket buffers too",
                    Sockets::Apart => "all its memory counted",
                    Sockets::Uncounted(_) => "its memory counted",
                })?;
                if *memory_mib > 0 {
                    write!(f, " ({memory_mib} MiB")?;
                    f.write_str(if *swap_off { ", no swap)" } else { ", swap not limited)" })?;
                }
                match sockets {
                    Sockets::WithMemory => {}
                    Sockets::Apart if *memory_mib > 0 => write!(f, ", its socket buffers apart ({memory_mib} MiB)")?,
                    Sockets::Apart => f.write_str(", its socket buffers apart")?,
                    Sockets::Uncounted(reason) => write!(f, " but not its socket buffers ({reason})")?,
                }
                write!(f, ", {processes} processes")?;
                if *cpu_time {
                    f.write_str(", CPU time")?;
                }
                if *cpu_weight {
                    f.write_str("; an equal CPU share per worker")?;
                }
                Ok(())
            }
            Accounting::Unavailable(reason) => write!(f, "none ({reason}); limits are per process"),
        }
    }
}

#[derive(Debug, Error)]
pub enum CgroupError {
    #[error("no cgroup hierarchy with the memory and pids controllers is mounted")]
    NoControllers,
    #[error("the {controllers} controllers are not available to {}", .group.display())]
    NotDelegated { controllers: String, group: PathBuf },
    #[error("cannot create {}", .path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {value:?} to {}", .path.display())]
    Write {
        path: PathBuf,
        value: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot move a process into {}", .path.display())]
    Join {
        path: PathBuf,
        #[source]
        source: Errno,
    },
    #[error("cannot open {}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: Errno,
    },
}

/// The groups made for one run, removed when dropped (once its drivers are gone).
#[derive(Debug)]
pub struct RunGroups {
    slots: Vec<SlotGroups>,
    accounting: Accounting,
    /// Every directory made, in the order made.
    made: Vec<PathBuf>,
    /// The run's own directories, one per hierarchy, which the reaper watches.
    runs: Vec<PathBuf>,
    /// The run's own directories, locked for as long as it lives (see `sweep_stale`).
    locks: Vec<Flock<std::fs::File>>,
}

/// What `build` made: with which interface, whether it weighed the workers equally (the
/// cpu controller is there to do it), and how socket buffers count.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Built {
    version: Version,
    cpu_weight: bool,
    sockets: Sockets,
}

/// Runs in one process (a retry starts another pool) get groups of their own.
static RUNS: AtomicUsize = AtomicUsize::new(0);

impl RunGroups {
    /// Makes a group per slot and per slot's samples under this process's own groups,
    /// with `limits`, and checks that a process can join them.
    pub fn create(slots: usize, limits: &Limits) -> Result<RunGroups, CgroupError> {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let hierarchies = discover::hierarchies(&read("/proc/self/cgroup"), &read("/proc/self/mountinfo"));
        let name = format!("passk-{}-{}", std::process::id(), RUNS.fetch_add(1, Ordering::Relaxed));
        let mut groups = RunGroups {
            slots: Vec::new(),
            accounting: Accounting::Unavailable(String::new()),
            made: Vec::new(),
            runs: Vec::new(),
            locks: Vec::new(),
        };
        let Built { version, cpu_weight, sockets } = groups.build(&hierarchies, &name, slots, limits)?;
        let first = groups.slots.first().cloned();
        if let Some(first) = first {
            for path in first.enter.iter().chain(&first.sample) {
                try_join(path)?;
            }
            groups.accounting = Accounting::Groups {
                version,
                memory_mib: limits.memory_mib,
                swap_off: swap_off(&first),
                sockets,
                processes: limits.processes,
                cpu_time: first.cpu.is_some(),
                cpu_weight,
            };
        }
        Ok(groups)
    }

    /// Each slot's groups, by slot.
    pub fn slots(&self) -> &[SlotGroups] {
        &self.slots
    }

    pub fn accounting(&self) -> &Accounting {
        &self.accounting
    }

    fn build(
        &mut self,
        hierarchies: &Hierarchies,
        name: &str,
        slots: usize,
        limits: &Limits,
    ) -> Result<Built, CgroupError> {
        if let Some(unified) = &hierarchies.unified {
            let available = std::fs::read_to_string(unified.own.join("cgroup.controllers")).unwrap_or_default();
            let available: Vec<&str> = available.split_whitespace().collect();
            if available.contains(&"memory") && available.contains(&"pids") {
                self.build_v2(unified, &available, name, slots, limits)?;
                let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
                return Ok(Built {
                    version: Version::V2,
                    cpu_weight: available.contains(&"cpu"),
                    sockets: v2_sockets(&cmdline),
                });
            }
        }
        let (Some(memory), Some(pids)) = (hierarchies.legacy_with("memory"), hierarchies.legacy_with("pids")) else {
            return Err(match &hierarchies.unified {
                Some(unified) => {
                    CgroupError::NotDelegated { controllers: "memory and pids".into(), group: unified.own.clone() }
                }
                None => CgroupError::NoControllers,
            });
        };
        let sockets = self.build_v1(hierarchies, memory, pids, name, slots, limits)?;
        Ok(Built { version: Version::V1, cpu_weight: hierarchies.legacy_with("cpu").is_some(), sockets })
    }

    fn build_v2(
        &mut self,
        unified: &Hierarchy,
        available: &[&str],
        name: &str,
        slots: usize,
        limits: &Limits,
    ) -> Result<(), CgroupError> {
        let enable = ["memory", "pids", "cpu"]
            .iter()
            .filter(|controller| available.contains(controller))
            .map(|controller| format!("+{controller}"))
            .collect::<Vec<_>>()
            .join(" ");
        let enabled = std::fs::read_to_string(unified.own.join("cgroup.subtree_control")).unwrap_or_default();
        if !["memory", "pids"].iter().all(|controller| enabled.split_whitespace().any(|c| c == *controller)) {
            // Refused while the group holds processes of its own (passk's included).
            write(&unified.own.join("cgroup.subtree_control"), &enable)?;
        }
        let run = self.make_run(&unified.own, name)?;
        write(&run.join("cgroup.subtree_control"), &enable)?;
        if available.contains(&"cpu") {
            // The run weighs as much as its workers would alone (see build_v1).
            write(&run.join("cpu.weight"), &(100 * slots).clamp(1, 10_000).to_string())?;
        }
        for slot in 0..slots {
            let slot_dir = self.make(&run.join(format!("slot-{slot}")))?;
            write(&slot_dir.join("cgroup.subtree_control"), &enable)?;
            let driver = self.make(&slot_dir.join("driver"))?;
            let sample = self.make(&slot_dir.join("sample"))?;
            if limits.memory_mib > 0 {
                write(&sample.join("memory.max"), &(limits.memory_mib << 20).to_string())?;
                write_if_present(&sample.join("memory.swap.max"), "0")?;
            }
            // One out-of-memory kill ends every process of the sample.
            write_if_present(&sample.join("memory.oom.group"), "1")?;
            write(&sample.join("pids.max"), &sample_pids_max(limits.processes))?;
            self.slots.push(SlotGroups {
                version: Version::V2,
                enter: vec![driver.join("cgroup.procs")],
                sample: vec![sample.join("cgroup.procs")],
                peak: sample.join("memory.peak"),
                socket_peak: None,
                events: sample.join("memory.events"),
                cpu: Some(sample.join("cpu.stat")),
                members: sample,
            });
        }
        Ok(())
    }

    /// Returns how socket buffers count, which depends on the kernel.
    fn build_v1(
        &mut self,
        hierarchies: &Hierarchies,
        memory: &Hierarchy,
        pids: &Hierarchy,
        name: &str,
        slots: usize,
        limits: &Limits,
    ) -> Result<Sockets, CgroupError> {
        let cpuacct = hierarchies.legacy_with("cpuacct");
        let cpu = hierarchies.legacy_with("cpu");
        // Distinct hierarchies: cpu and cpuacct are often mounted together.
        let mut slot_level: Vec<&Hierarchy> = Vec::new();
        for hierarchy in [Some(memory), Some(pids), cpuacct, cpu].into_iter().flatten() {
            if !slot_level.iter().any(|seen| seen.own == hierarchy.own) {
                slot_level.push(hierarchy);
            }
        }
        let mut sample_level = vec![memory, pids];
        if let Some(cpuacct) = cpuacct.filter(|cpuacct| cpuacct.own != memory.own && cpuacct.own != pids.own) {
            sample_level.push(cpuacct);
        }
        let runs: Vec<PathBuf> =
            slot_level.iter().map(|hierarchy| self.make_run(&hierarchy.own, name)).collect::<Result<_, _>>()?;
        for (hierarchy, run) in slot_level.iter().zip(&runs) {
            if hierarchy.controllers.iter().any(|c| c == "cpu") {
                // The whole run weighs as much as its workers would apart, so that
                // grouping them costs it no share of a busy machine.
                write(&run.join("cpu.shares"), &(1024 * slots.max(1)).to_string())?;
            }
        }
        let mut sockets = Sockets::Apart;
        for slot in 0..slots {
            let mut enter = Vec::new();
            let mut sample_dirs = Vec::new();
            for (hierarchy, run) in slot_level.iter().zip(&runs) {
                let slot_dir = self.make(&run.join(format!("slot-{slot}")))?;
                if hierarchy.controllers.iter().any(|c| c == "cpu") {
                    write(&slot_dir.join("cpu.shares"), "1024")?;
                }
                enter.push(slot_dir.join("cgroup.procs"));
                if sample_level.iter().any(|wanted| wanted.own == hierarchy.own) {
                    sample_dirs.push((hierarchy, self.make(&slot_dir.join("sample"))?));
                }
            }
            let dir_of = |wanted: &Hierarchy| {
                sample_dirs.iter().find(|(hierarchy, _)| hierarchy.own == wanted.own).map(|(_, dir)| dir.clone())
            };
            let memory_dir = dir_of(memory).expect("the memory hierarchy has a sample group");
            let pids_dir = dir_of(pids).expect("the pids hierarchy has a sample group");
            if limits.memory_mib > 0 {
                let bytes = (limits.memory_mib << 20).to_string();
                write(&memory_dir.join("memory.limit_in_bytes"), &bytes)?;
                // Memory and swap together, where swap is accounted: no swap.
                write_if_present(&memory_dir.join("memory.memsw.limit_in_bytes"), &bytes)?;
            }
            write_if_present(&memory_dir.join("memory.swappiness"), "0")?;
            let socket_peak = match limit_socket_buffers(&memory_dir, limits.memory_mib) {
                Ok(peak) => Some(peak),
                Err(reason) => {
                    sockets = Sockets::Uncounted(reason);
                    None
                }
            };
            write(&pids_dir.join("pids.max"), &sample_pids_max(limits.processes))?;
            self.slots.push(SlotGroups {
                version: Version::V1,
                enter,
                sample: sample_dirs.iter().map(|(_, dir)| dir.join("cgroup.procs")).collect(),
                peak: memory_dir.join("memory.max_usage_in_bytes"),
                socket_peak,
                events: memory_dir.join("memory.oom_control"),
                cpu: cpuacct.and_then(dir_of).map(|dir| dir.join("cpuacct.usage")),
                members: pids_dir,
            });
        }
        Ok(sockets)
    }

    /// The run's directory below `parent`, locked, after removing what earlier runs
    /// left there. The reaper is told of it before it exists, as of the pool's working
    /// directory: a SIGKILL between making it and telling would leave it behind.
    fn make_run(&mut self, parent: &Path, name: &str) -> Result<PathBuf, CgroupError> {
        sweep_stale(parent);
        let run = parent.join(name);
        reaper::watch(Left::Cgroup(run.clone()));
        if let Err(error) = self.make(&run) {
            // Never made, or someone else's: never the reaper's to remove.
            reaper::release(Left::Cgroup(run));
            return Err(error);
        }
        self.runs.push(run.clone());
        self.locks.push(lock(&run).map_err(|source| CgroupError::Create { path: run.clone(), source })?);
        Ok(run)
    }

    fn make(&mut self, path: &Path) -> Result<PathBuf, CgroupError> {
        std::fs::create_dir(path).map_err(|source| CgroupError::Create { path: path.to_owned(), source })?;
        self.made.push(path.to_owned());
        Ok(path.to_owned())
    }
}

impl Drop for RunGroups {
    fn drop(&mut self) {
        for dir in self.made.iter().rev() {
            if let Err(error) = std::fs::remove_dir(dir) {
                tracing::debug!("cannot remove {}: {error}", dir.display());
            }
        }
        // What could not be removed yet, the reaper removes once passk is gone.
        for run in self.runs.iter().filter(|run| !run.exists()) {
            reaper::release(Left::Cgroup(run.clone()));
        }
    }
}

/// Removes the groups of earlier runs that ended without removing their own (killed,
/// say), so that they do not pile up on the host. A run holds a lock on its directory
/// for as long as it lives, so one that can be locked is stale; a run's groups are empty
/// once it is gone, since its processes went with it.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("passk-") {
            continue;
        }
        if let Ok(_stale) = lock(&entry.path()) {
            remove_tree(&entry.path());
        }
    }
}

/// An exclusive lock on the directory `dir`, if no other run holds one.
fn lock(dir: &Path) -> std::io::Result<Flock<std::fs::File>> {
    let file = std::fs::File::open(dir)?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| errno.into())
}

/// Removes a group and the groups below it, deepest first.
fn remove_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                remove_tree(&entry.path());
            }
        }
    }
    if let Err(error) = std::fs::remove_dir(dir) {
        tracing::debug!("cannot remove {}: {error}", dir.display());
    }
}

/// In a v1 memory group `dir`: limits its socket buffers to `memory_mib` (none if 0), and
/// returns the file of their peak, or why they cannot be counted. v1 charges socket
/// buffers to a counter of their own, and only once its limit is set: without one, a
/// sample's unread loopback connections hold gigabytes that no limit sees. Some kernels
/// have no such file.
fn limit_socket_buffers(dir: &Path, memory_mib: u64) -> Result<PathBuf, String> {
    let limit = if memory_mib == 0 { "-1".to_owned() } else { (memory_mib << 20).to_string() };
    match write_existing(&dir.join("memory.kmem.tcp.limit_in_bytes"), &limit) {
        Ok(()) => Ok(dir.join("memory.kmem.tcp.max_usage_in_bytes")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Err("the kernel has no memory.kmem.tcp.limit_in_bytes".to_owned())
        }
        Err(error) => Err(format!("cannot set memory.kmem.tcp.limit_in_bytes: {error}")),
    }
}

/// How v2 counts socket buffers, given the kernel's command line: with the rest of the
/// memory, unless the kernel was told not to.
fn v2_sockets(cmdline: &str) -> Sockets {
    let nosocket = cmdline
        .split_whitespace()
        .filter_map(|option| option.strip_prefix("cgroup.memory="))
        .any(|values| values.split(',').any(|value| value == "nosocket"));
    if nosocket {
        Sockets::Uncounted("the kernel was booted with cgroup.memory=nosocket".to_owned())
    } else {
        Sockets::WithMemory
    }
}

/// Whether the sample group has no swap: a limit on it, or none on the machine.
fn swap_off(slot: &SlotGroups) -> bool {
    let dir = slot.peak.parent().unwrap_or(Path::new("/"));
    match slot.version {
        // Without swap accounting, swap is off only where the machine has none.
        Version::V1 => dir.join("memory.memsw.limit_in_bytes").exists() || no_swap(),
        Version::V2 => dir.join("memory.swap.max").exists() || no_swap(),
    }
}

fn no_swap() -> bool {
    std::fs::read_to_string("/proc/swaps").is_ok_and(|swaps| swaps.lines().count() <= 1)
}

fn write(path: &Path, value: &str) -> Result<(), CgroupError> {
    std::fs::write(path, value).map_err(|source| CgroupError::Write {
        path: path.to_owned(),
        value: value.to_owned(),
        source,
    })
}

/// Writes a file that must already be there, as a group's files are: a missing one is
/// `NotFound` rather than made.
fn write_existing(path: &Path, value: &str) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new().write(true).truncate(true).open(path)?.write_all(value.as_bytes())
}

fn write_if_present(path: &Path, value: &str) -> Result<(), CgroupError> {
    if path.exists() {
        write(path, value)?;
    }
    Ok(())
}

/// Moves a throwaway child into the group of `procs`, proving that the kernel allows
/// this process's user to.
fn try_join(procs: &Path) -> Result<(), CgroupError> {
    let join_error = |source| CgroupError::Join { path: procs.to_owned(), source };
    let path = CString::new(procs.as_os_str().as_encoded_bytes()).map_err(|_| join_error(Errno::EINVAL))?;
    // SAFETY: the child calls only async-signal-safe functions (open, write, _exit)
    // on data prepared before the fork.
    match unsafe { nix::unistd::fork() }.map_err(join_error)? {
        nix::unistd::ForkResult::Child => {
            // SAFETY: plain system calls on a valid C string and buffer.
            unsafe {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                let joined = fd >= 0 && libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
                libc::_exit(if joined { 0 } else { *libc::__errno_location() & 0xff })
            }
        }
        nix::unistd::ForkResult::Parent { child } => loop {
            match nix::sys::wait::waitpid(child, None) {
                Ok(nix::sys::wait::WaitStatus::Exited(_, 0)) => return Ok(()),
                Ok(nix::sys::wait::WaitStatus::Exited(_, errno)) => return Err(join_error(Errno::from_raw(errno))),
                Err(Errno::EINTR) => continue,
                Ok(_) => return Err(join_error(Errno::UnknownErrno)),
                Err(errno) => return Err(join_error(errno)),
            }
        },
    }
}

/// In the set-up helper, before anything else: moves it into the slot's groups, and
/// opens what every sample's processes join and what the driver reads after each
/// sample, on descriptors its interpreter inherits. Returns the driver's description
/// of them.
pub fn enter(groups: &SlotGroups) -> Result<String, CgroupError> {
    for procs in &groups.enter {
        let fd = open(procs, OFlag::O_WRONLY | OFlag::O_CLOEXEC)?;
        let written = nix::unistd::write(&fd, b"0").map_err(|source| CgroupError::Join { path: procs.clone(), source });
        drop(fd);
        written?;
    }
    let inherited = |path: &Path, flags: OFlag| -> Result<RawFd, CgroupError> {
        use std::os::fd::IntoRawFd;
        Ok(open(path, flags)?.into_raw_fd())
    };
    let sample = groups.sample.iter().map(|procs| inherited(procs, OFlag::O_WRONLY)).collect::<Result<Vec<_>, _>>()?;
    let cpu = groups.cpu.as_deref().map(|cpu| inherited(cpu, OFlag::O_RDONLY)).transpose()?;
    let kill = groups.members.join("cgroup.kill");
    let kill = if kill.exists() { Some(inherited(&kill, OFlag::O_WRONLY)?) } else { None };
    let description = json!({
        "version": match groups.version { Version::V1 => 1, Version::V2 => 2 },
        "join": sample,
        "peak": inherited(&groups.peak, OFlag::O_RDWR)?,
        "socket_peak": groups.socket_peak.as_deref().map(|peak| inherited(peak, OFlag::O_RDWR)).transpose()?,
        "events": inherited(&groups.events, OFlag::O_RDONLY)?,
        "cpu": cpu,
        "members": inherited(&groups.members, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?,
        "count": inherited(&groups.members.join("pids.current"), OFlag::O_RDONLY)?,
        "kill": kill,
    });
    Ok(description.to_string())
}

/// The sample group's pids limit: the sample's processes, and the slot's judge, which
/// lives in the group so that what it holds for a sample counts as the sample's.
fn sample_pids_max(processes: u64) -> String {
    (processes + 1).to_string()
}

fn open(path: &Path, flags: OFlag) -> Result<std::os::fd::OwnedFd, CgroupError> {
    nix::fcntl::open(path, flags, Mode::empty()).map_err(|source| CgroupError::Open { path: path.to_owned(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits { memory_mib: 512, processes: 32, ..Limits::default() }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    fn empty_groups() -> RunGroups {
        RunGroups {
            slots: Vec::new(),
            accounting: Accounting::Unavailable(String::new()),
            made: Vec::new(),
            runs: Vec::new(),
            locks: Vec::new(),
        }
    }

    // A directory stands for the file system: the layout and the values written are
    // what is checked; the kernel's own checks are the end-to-end suite's.
    #[test]
    fn v2_gives_each_slot_a_driver_group_and_a_limited_sample_group() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("cgroup.controllers"), "cpuset cpu io memory pids").unwrap();
        let unified = Hierarchy { controllers: Vec::new(), own: root.path().to_owned() };
        let hierarchies = Hierarchies { unified: Some(unified), legacy: Vec::new() };
        let mut groups = empty_groups();
        let built = groups.build(&hierarchies, "passk-1-0", 2, &limits()).unwrap();
        assert_eq!(built, Built { version: Version::V2, cpu_weight: true, sockets: Sockets::WithMemory });
        assert_eq!(read(&root.path().join("cgroup.subtree_control")), "+memory +pids +cpu");
        let slot = root.path().join("passk-1-0/slot-1");
        assert_eq!(read(&slot.join("cgroup.subtree_control")), "+memory +pids +cpu");
        assert_eq!(read(&slot.join("sample/memory.max")), (512u64 << 20).to_string());
        assert_eq!(read(&slot.join("sample/pids.max")), "33");
        assert_eq!(read(&root.path().join("passk-1-0/cpu.weight")), "200", "two slots weigh as two");
        assert_eq!(groups.slots.len(), 2);
        assert_eq!(groups.slots[1].enter, [slot.join("driver/cgroup.procs")]);
        assert_eq!(groups.slots[1].sample, [slot.join("sample/cgroup.procs")]);
        assert_eq!(groups.slots[1].peak, slot.join("sample/memory.peak"));
    }

    /// Guards the table's `cgroups` line: no equal CPU share is claimed where the cpu
    /// controller is not there to give it.
    #[test]
    fn v2_without_the_cpu_controller_claims_no_cpu_weight() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("cgroup.controllers"), "memory pids").unwrap();
        let unified = Hierarchy { controllers: Vec::new(), own: root.path().to_owned() };
        let hierarchies = Hierarchies { unified: Some(unified), legacy: Vec::new() };
        let built = empty_groups().build(&hierarchies, "passk-1-0", 1, &limits()).unwrap();
        assert_eq!(built, Built { version: Version::V2, cpu_weight: false, sockets: Sockets::WithMemory });
        assert_eq!(read(&root.path().join("cgroup.subtree_control")), "+memory +pids");
        assert!(!root.path().join("passk-1-0/cpu.weight").exists());
    }

    #[test]
    fn v2_without_the_memory_controller_falls_back_to_v1_or_says_why() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("cgroup.controllers"), "hugetlb").unwrap();
        let unified = Hierarchy { controllers: Vec::new(), own: root.path().to_owned() };
        let hierarchies = Hierarchies { unified: Some(unified), legacy: Vec::new() };
        let error = empty_groups().build(&hierarchies, "passk-1-0", 1, &limits()).unwrap_err();
        assert!(matches!(error, CgroupError::NotDelegated { .. }), "{error}");
        assert!(!root.path().join("passk-1-0").exists(), "nothing is made");
    }

    #[test]
    fn v1_joins_samples_to_memory_pids_and_cpuacct_and_weighs_slots_by_cpu() {
        let root = tempfile::tempdir().unwrap();
        let hierarchy = |name: &str, controllers: &[&str]| {
            let own = root.path().join(name);
            std::fs::create_dir(&own).unwrap();
            Hierarchy { controllers: controllers.iter().map(|c| (*c).to_owned()).collect(), own }
        };
        let hierarchies = Hierarchies {
            unified: None,
            legacy: vec![
                hierarchy("memory", &["memory"]),
                hierarchy("pids", &["pids"]),
                hierarchy("cpu", &["cpu", "cpuacct"]),
            ],
        };
        let mut groups = empty_groups();
        let built = groups.build(&hierarchies, "run", 1, &limits()).unwrap();
        let no_socket_limit = Sockets::Uncounted("the kernel has no memory.kmem.tcp.limit_in_bytes".into());
        assert_eq!(built, Built { version: Version::V1, cpu_weight: true, sockets: no_socket_limit });
        let slot = |name: &str| root.path().join(name).join("run/slot-0");
        assert_eq!(read(&slot("memory").join("sample/memory.limit_in_bytes")), (512u64 << 20).to_string());
        assert_eq!(read(&slot("pids").join("sample/pids.max")), "33");
        assert_eq!(read(&slot("cpu").join("cpu.shares")), "1024");
        assert_eq!(read(&root.path().join("cpu/run/cpu.shares")), "1024", "one slot weighs as one");
        let groups = &groups.slots[0];
        let procs = |name: &str, below: &str| slot(name).join(below).join("cgroup.procs");
        assert_eq!(groups.enter, [procs("memory", ""), procs("pids", ""), procs("cpu", "")]);
        assert_eq!(groups.sample, [procs("memory", "sample"), procs("pids", "sample"), procs("cpu", "sample")]);
        assert_eq!(groups.cpu, Some(slot("cpu").join("sample/cpuacct.usage")));
        assert_eq!(groups.socket_peak, None);
    }

    /// Guards the count of socket buffers on v1, which charges them only once their
    /// limit is written: the memory limit, or none at all to count them without one.
    #[test]
    fn v1_limits_socket_buffers_where_the_kernel_has_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let limit = dir.path().join("memory.kmem.tcp.limit_in_bytes");
        std::fs::write(&limit, "9223372036854771712").unwrap();
        let peak = limit_socket_buffers(dir.path(), 256).unwrap();
        assert_eq!(read(&limit), (256u64 << 20).to_string());
        assert_eq!(peak, dir.path().join("memory.kmem.tcp.max_usage_in_bytes"));
        limit_socket_buffers(dir.path(), 0).unwrap();
        assert_eq!(read(&limit), "-1");
        std::fs::remove_file(&limit).unwrap();
        let reason = limit_socket_buffers(dir.path(), 256).unwrap_err();
        assert_eq!(reason, "the kernel has no memory.kmem.tcp.limit_in_bytes");
        assert!(!limit.exists(), "nothing is made in its place");
    }

    #[test]
    fn v2_counts_socket_buffers_unless_the_kernel_was_told_not_to() {
        assert_eq!(v2_sockets("BOOT_IMAGE=/vmlinuz ro quiet"), Sockets::WithMemory);
        assert_eq!(v2_sockets("ro cgroup.memory=nokmem quiet"), Sockets::WithMemory);
        assert!(matches!(v2_sockets("ro cgroup.memory=nokmem,nosocket quiet"), Sockets::Uncounted(_)));
    }

    #[test]
    fn the_cgroups_line_says_how_socket_buffers_count() {
        let accounting = |version, sockets| Accounting::Groups {
            version,
            memory_mib: 256,
            swap_off: true,
            sockets,
            processes: 64,
            cpu_time: true,
            cpu_weight: false,
        };
        assert_eq!(
            accounting(Version::V2, Sockets::WithMemory).to_string(),
            "cgroup v2, a group per sample: all its memory counted, socket buffers too (256 MiB, no swap), 64 \
             processes, CPU time"
        );
        assert_eq!(
            accounting(Version::V1, Sockets::Apart).to_string(),
            "cgroup v1, a group per sample: all its memory counted (256 MiB, no swap), its socket buffers apart \
             (256 MiB), 64 processes, CPU time"
        );
        let uncounted = accounting(Version::V1, Sockets::Uncounted("why".into()));
        assert_eq!(
            uncounted.to_string(),
            "cgroup v1, a group per sample: its memory counted (256 MiB, no swap) but not its socket buffers (why), \
             64 processes, CPU time"
        );
        assert_eq!(uncounted.to_json()["socket_buffers"], "not counted: why");
    }
}
