//! What each candidate may use: memory, processes, CPU time, file sizes, descriptors and
//! scratch space. The numbers are data (`sandbox/policy.toml` gives the defaults); the
//! sandbox and the control groups each enforce them in their own way.

use serde::{Deserialize, Serialize};

/// Per-candidate limits. Defaults come from `sandbox/policy.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Memory, in MiB; 0 for none: the sample group's limit where the run has control
    /// groups, and each process's address space.
    pub memory_mib: u64,
    /// Processes and threads at once, the sample's first process included.
    pub processes: u64,
    /// CPU seconds per process.
    pub cpu_seconds: u64,
    /// Largest file, in MiB.
    pub file_size_mib: u64,
    /// Open descriptors.
    pub open_files: u64,
    /// Each sample's own /tmp and /dev/shm at level `full`, in MiB.
    pub tmp_mib: u64,
    /// Wall-clock seconds a program's build may take.
    pub compile_seconds: u64,
}

impl Limits {
    pub fn compile_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.compile_seconds)
    }
}
