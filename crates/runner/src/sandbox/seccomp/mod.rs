//! The system-call filter candidates run under: `sandbox/syscalls.toml`, compiled into
//! the binary, turned into a classic BPF program for this machine.
//!
//! The policy lives in a file rather than in code so that a reviewer reads one list of
//! what a candidate may do, and anything it does not name is denied. Wherever the
//! driver package is written, the program is compiled and written beside it; the driver makes
//! each candidate's copy by writing the candidate's pid where the program says `self`
//! (see [`OWN_PID`]) and installs it after the candidate has dropped its privileges.
//!
//! There are two programs. A candidate that is alone in a pid namespace of its own
//! (level `full`) can name no process but its sample's, so the calls the policy marks
//! `alone_in_pid_namespace = "allow"` (signals) are allowed there with any argument, as
//! honest concurrent code needs (a `multiprocessing.Pool` kills its own workers by pid);
//! everywhere else those calls keep their rules.

mod bpf;

use std::collections::BTreeMap;

use serde::Deserialize;
use thiserror::Error;

pub use bpf::{compile, OWN_PID};

const POLICY_FILE: &str = include_str!("../../../../../sandbox/syscalls.toml");

/// The file the compiled program is written to, in the driver package's directory.
pub const PROGRAM_FILE: &str = "candidate.bpf";

/// The file the program for a candidate alone in its own pid namespace is written to.
pub const ALONE_PROGRAM_FILE: &str = "candidate-alone.bpf";

/// What the filter does with a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Allow,
    /// Fails with EPERM, the default for any call the policy does not allow.
    Deny,
    /// Fails with this errno.
    Fail(u16),
    /// Allowed only if one of the conditions holds; EPERM otherwise.
    AllowIf(Vec<Condition>),
    /// EPERM if one of the conditions holds; allowed otherwise.
    DenyIf(Vec<Condition>),
}

/// Tests on arguments that must all pass: a command and one of its flags, say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition(pub Vec<Argument>);

/// A test on the low 32 bits of one argument: every argument the policy tests is an
/// `int` or a flag word that fits there, and the kernel reads no more of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub index: u8,
    pub test: Test,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    OneOf(Vec<Value>),
    AnyBit(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Number(u32),
    /// The calling process's own pid.
    OwnPid,
    /// Its process group, as `kill` names one: the negated pid.
    OwnGroup,
}

/// The policy, with its rules keyed by call name.
#[derive(Debug, Clone)]
pub struct Policy {
    pub calls: BTreeMap<String, Action>,
    /// Named only to say they are denied.
    pub denied: Vec<String>,
    /// Calls allowed with any argument to a candidate alone in its own pid namespace.
    pub alone: Vec<String>,
}

#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("sandbox/syscalls.toml is not valid TOML for the policy")]
    Parse(#[source] toml::de::Error),
    #[error("`{0}` is not a system call of any machine passk supports")]
    Unknown(String),
    #[error("`{0}` is named twice")]
    Twice(String),
    #[error("the rule for {0:?} needs exactly one of allow_if, deny_if and fail_with")]
    Rule(Vec<String>),
    #[error("the test on argument {0} needs exactly one of `is` and `has_any_bit`, of an argument from 0 to 5")]
    Test(u8),
    #[error("`{0}` is not a value a test can compare with: a number, \"self\" or \"-self\"")]
    Value(String),
    #[error("alone_in_pid_namespace of {0:?} can only be \"allow\"")]
    Alone(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    allow: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    when: Vec<WhenFile>,
    #[serde(default)]
    deny: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhenFile {
    calls: Vec<String>,
    allow_if: Option<ConditionsFile>,
    deny_if: Option<ConditionsFile>,
    fail_with: Option<u16>,
    /// `"allow"`: what the calls do for a candidate alone in its own pid namespace.
    alone_in_pid_namespace: Option<String>,
}

/// One condition, or a list of which any may hold.
#[derive(Deserialize)]
#[serde(untagged)]
enum ConditionsFile {
    One(TestFile),
    Any(Vec<TestFile>),
}

impl ConditionsFile {
    fn resolve(self) -> Result<Vec<Condition>, PolicyError> {
        let tests = match self {
            ConditionsFile::One(test) => vec![test],
            ConditionsFile::Any(tests) => tests,
        };
        tests.into_iter().map(|test| test.resolve().map(Condition)).collect()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    argument: u8,
    is: Option<Vec<toml::Value>>,
    has_any_bit: Option<u32>,
    /// A further test that must pass too.
    and: Option<Box<TestFile>>,
}

impl TestFile {
    /// This test and those it is joined to with `and`.
    fn resolve(self) -> Result<Vec<Argument>, PolicyError> {
        let test = match (self.is, self.has_any_bit) {
            (Some(values), None) => Test::OneOf(values.iter().map(value).collect::<Result<_, _>>()?),
            (None, Some(mask)) => Test::AnyBit(mask),
            _ => return Err(PolicyError::Test(self.argument)),
        };
        if self.argument > 5 {
            return Err(PolicyError::Test(self.argument));
        }
        let mut all = vec![Argument { index: self.argument, test }];
        if let Some(and) = self.and {
            all.extend(and.resolve()?);
        }
        Ok(all)
    }
}

fn value(value: &toml::Value) -> Result<Value, PolicyError> {
    match value {
        toml::Value::Integer(number) => {
            u32::try_from(*number).map(Value::Number).map_err(|_| PolicyError::Value(number.to_string()))
        }
        toml::Value::String(name) if name == "self" => Ok(Value::OwnPid),
        toml::Value::String(name) if name == "-self" => Ok(Value::OwnGroup),
        other => Err(PolicyError::Value(format!("{other:?}"))),
    }
}

impl Policy {
    /// The policy compiled into this binary.
    pub fn compiled_in() -> Policy {
        Policy::parse(POLICY_FILE).expect("sandbox/syscalls.toml is valid; a unit test checks it")
    }

    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let file: PolicyFile = toml::from_str(text).map_err(PolicyError::Parse)?;
        let mut calls = BTreeMap::new();
        let mut add = |name: String, action: Action| match calls.insert(name.clone(), action) {
            Some(_) => Err(PolicyError::Twice(name)),
            None => Ok(()),
        };
        for name in file.allow.into_values().flatten() {
            add(name, Action::Allow)?;
        }
        let mut alone = Vec::new();
        for rule in file.when {
            match rule.alone_in_pid_namespace.as_deref() {
                None => {}
                Some("allow") => alone.extend(rule.calls.iter().cloned()),
                Some(_) => return Err(PolicyError::Alone(rule.calls)),
            }
            let action = match (rule.allow_if, rule.deny_if, rule.fail_with) {
                (Some(test), None, None) => Action::AllowIf(test.resolve()?),
                (None, Some(test), None) => Action::DenyIf(test.resolve()?),
                (None, None, Some(errno)) => Action::Fail(errno),
                _ => return Err(PolicyError::Rule(rule.calls)),
            };
            for name in rule.calls {
                add(name, action.clone())?;
            }
        }
        let denied: Vec<String> = file.deny.into_values().flatten().collect();
        for name in &denied {
            if calls.contains_key(name) || denied.iter().filter(|other| *other == name).count() > 1 {
                return Err(PolicyError::Twice(name.clone()));
            }
        }
        for name in calls.keys().chain(&denied) {
            if Arch::ALL.iter().all(|arch| arch.number(name).is_none()) {
                return Err(PolicyError::Unknown(name.clone()));
            }
        }
        Ok(Policy { calls, denied, alone })
    }

    /// The policy for a candidate alone in a pid namespace of its own: the calls marked
    /// for it allowed with any argument.
    pub fn alone_in_pid_namespace(&self) -> Policy {
        let mut policy = self.clone();
        for name in &self.alone {
            policy.calls.insert(name.clone(), Action::Allow);
        }
        policy
    }
}

/// A machine's system-call ABI, as the filter sees it.
#[derive(Debug, Clone, Copy)]
pub struct Arch {
    /// `AUDIT_ARCH_*`, which the kernel puts in `seccomp_data.arch`.
    pub audit: u32,
    number: fn(&str) -> Option<u32>,
}

impl Arch {
    pub const X86_64: Arch = Arch {
        audit: 0xC000_003E,
        number: |name| name.parse::<syscalls::x86_64::Sysno>().ok().map(|call| call.id() as u32),
    };
    pub const AARCH64: Arch = Arch {
        audit: 0xC000_00B7,
        number: |name| name.parse::<syscalls::aarch64::Sysno>().ok().map(|call| call.id() as u32),
    };
    const ALL: [Arch; 2] = [Arch::X86_64, Arch::AARCH64];

    /// This machine's, where passk has a filter for it.
    pub fn native() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::AARCH64)
        } else {
            None
        }
    }

    pub fn number(&self, name: &str) -> Option<u32> {
        (self.number)(name)
    }
}

/// This machine's programs for the compiled-in policy, each as the bytes of its `struct
/// sock_filter` array with the file it is written to: for every candidate, and for one
/// alone in its own pid namespace. None on a machine passk has no filter for.
pub fn native_programs() -> Option<[(&'static str, Vec<u8>); 2]> {
    let arch = Arch::native()?;
    let policy = Policy::compiled_in();
    Some([
        (PROGRAM_FILE, compile(&policy, arch)),
        (ALONE_PROGRAM_FILE, compile(&policy.alone_in_pid_namespace(), arch)),
    ])
}
