//! What the sandbox allows: the limits and mounts of `sandbox/policy.toml`, the levels
//! of isolation, and the policy handed to the set-up helper.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::packages::Reveal;
use crate::cgroup::SlotGroups;
use crate::language::Language;
use crate::limits::Limits;

const POLICY_FILE: &str = include_str!("../../../../sandbox/policy.toml");

#[derive(Debug, Clone, Deserialize)]
pub struct Mounts {
    pub read_only: Vec<PathBuf>,
    /// Package directories to hide, as shell patterns (see `packages`).
    pub hidden: Vec<PathBuf>,
    pub devices: Vec<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct PolicyFile {
    limits: Limits,
    mounts: Mounts,
}

fn policy_file() -> PolicyFile {
    toml::from_str(POLICY_FILE).expect("sandbox/policy.toml is valid; a unit test parses it")
}

impl Default for Limits {
    fn default() -> Limits {
        policy_file().limits
    }
}

impl Mounts {
    pub fn from_policy() -> Mounts {
        policy_file().mounts
    }
}

/// How strongly candidates are isolated, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Namespaces: a read-only view of only what the interpreter needs, a private /tmp,
    /// no network, a private process tree; an unprivileged user throughout.
    Full,
    /// No namespaces; each worker slot runs as an unprivileged user of its own (when
    /// passk runs as root), with the system-call filter and limits.
    Uid,
    /// No namespaces and passk's own user, with the system-call filter and limits.
    Minimal,
    /// Nothing beyond a process tree of its own: for trusted code only.
    None,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Full => "full",
            Level::Uid => "uid",
            Level::Minimal => "minimal",
            Level::None => "none",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the user asked for with `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// The strongest level this host allows, with a warning if that is not `full`.
    Auto,
    /// `full`, or refuse to run.
    Strict,
    /// No isolation, for trusted code.
    None,
}

/// Everything the set-up helper needs, passed to it as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelperPolicy {
    pub level: Level,
    /// The user and group to become last, as the sandbox sees them: at level `uid` the
    /// slot's unprivileged ids; at level `full` when started as root, 0 inside the
    /// slot's user namespace, which is `mapped_ids` outside.
    pub run_as: Option<(u32, u32)>,
    /// At level `full` when started as root: the first of the two outside user and group
    /// ids the slot's user namespace maps, from 0 (the driver and judges) and 1
    /// (candidates, which so run as a user of their own).
    pub mapped_ids: Option<(u32, u32)>,
    /// An empty directory to build the new root in (level `full`).
    pub root_dir: PathBuf,
    /// Paths made visible read-only at the same place (level `full`).
    pub read_only: Vec<PathBuf>,
    /// Package directories hidden behind empty read-only mounts, where the sandbox
    /// shows them (level `full`).
    pub hidden: Vec<PathBuf>,
    /// Allowed packages' entries, bound read-only into the hidden directories (level
    /// `full`).
    pub revealed: Vec<Reveal>,
    /// Device nodes passed through (level `full`).
    pub devices: Vec<PathBuf>,
    /// The size of the private /tmp (level `full`).
    pub tmp_bytes: u64,
    /// The language whose driver the slot runs (a name of `sandbox/languages.toml`).
    pub language: String,
    /// The language's toolchain, which starts the driver.
    pub interpreter: PathBuf,
    /// The directory holding the driver package outside the sandbox (levels below `full`).
    pub driver: PathBuf,
    /// Where candidates' working directories go, outside the sandbox (levels below `full`).
    pub scratch: PathBuf,
    /// The slot's control groups, where the run has them.
    pub cgroup: Option<SlotGroups>,
}

/// Where the driver package's directory is inside a `full` sandbox.
pub const DRIVER_INSIDE: &str = "/passk";
/// Where candidates' working directories go inside a `full` sandbox.
pub const SCRATCH_INSIDE: &str = "/tmp";
/// Candidates' user inside the slot's user namespace, where one is mapped.
pub const CANDIDATE_ID_INSIDE: u32 = 1;

impl HelperPolicy {
    pub fn language(&self) -> &'static Language {
        Language::named(&self.language).expect("the policy names a language of this binary's table")
    }

    /// The command the helper finally executes; `cgroup` describes the descriptors of
    /// the slot's control groups that it inherits (see `cgroup::enter`).
    pub fn command(&self, cgroup: Option<&str>) -> Vec<String> {
        let interpreter = self.interpreter.display().to_string();
        let (driver, scratch) = match self.level {
            Level::Full => (DRIVER_INSIDE.to_owned(), SCRATCH_INSIDE.to_owned()),
            _ => (self.driver.display().to_string(), self.scratch.display().to_string()),
        };
        let mut command = vec![interpreter];
        command.extend(self.language().host().start.iter().cloned());
        command.extend([driver, scratch]);
        if self.mapped_ids.is_some() {
            command.extend(["--candidate-user".into(), CANDIDATE_ID_INSIDE.to_string()]);
        }
        if self.level == Level::Full {
            command.extend(["--tmp-bytes".into(), self.tmp_bytes.to_string()]);
        }
        if self.level == Level::None {
            command.push("--no-isolation".into());
        }
        if let Some(cgroup) = cgroup {
            command.extend(["--cgroup".into(), cgroup.to_owned()]);
        }
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_file_parses_with_sensible_limits() {
        let limits = Limits::default();
        assert!(limits.memory_mib >= 1024 && limits.processes >= 16 && limits.tmp_mib >= 16, "{limits:?}");
        let mounts = Mounts::from_policy();
        assert!(mounts.read_only.contains(&PathBuf::from("/usr")));
        assert!(mounts.devices.contains(&PathBuf::from("/dev/null")));
        assert!(mounts.hidden.contains(&PathBuf::from("/usr/lib/python3*/*-packages")));
        assert!(mounts.read_only.iter().chain(&mounts.hidden).chain(&mounts.devices).all(|p| p.is_absolute()));
    }
}
