//! Runs untrusted candidate programs and decides their verdicts.
//!
//! Model-written code is run as a real program, so the runner's first job is to make
//! sure that only the problem's tests decide its verdict. Each worker slot keeps one
//! interpreter warm (the driver package in `sandbox/passk_driver`), which forks a fresh
//! process for every candidate: the candidate gets a new process, a private scratch
//! directory and a process tree of its own that is killed whole once its verdict is in,
//! while the cost of starting an interpreter is paid once per slot rather than once per
//! sample.
//!
//! By default ([`VerdictMode::Judge`]) the tests never run in the candidate's process: a
//! judge process, kept for the life of the slot, runs them and reaches the candidate
//! only through plain data, so nothing the candidate does to its own interpreter can
//! touch them. In [`VerdictMode::InProcess`], the reference harness's semantics,
//! candidate and tests share one interpreter, and a sample passes only when its process
//! writes a record carrying a token drawn for that run alone. Either way, exit statuses
//! and output are never taken as evidence: candidates can produce any of them.
//!
//! The harness side here owns the drivers: it starts them in process groups of their
//! own, hands work to whichever slot is free, guards against a driver that stops
//! answering, and replaces a driver that dies.

mod benchmarks;
pub mod cgroup;
mod dispatch;
mod driver;
mod interpreter;
mod judge_link;
mod kept;
mod language;
mod limits;
mod mountinfo;
mod pattern;
mod placement;
mod pool;
mod process;
mod program;
pub mod reaper;
pub mod sandbox;
mod source_line;
mod toolchain;
mod verdict;

pub use dispatch::{Job, JobLimits};
pub use interpreter::{Interpreter, InterpreterError};
pub use language::{Artifact, Language};
pub use limits::Limits;
pub use pool::{Batch, DriverFacts, Pool, PoolError, PoolOptions};
pub use process::protect_this_process;
pub use program::{Candidate, ProblemCode, Program, Suite, Tests, VerdictMode};
pub use sandbox::{Isolation, Level, SandboxMode};
pub use tokio_util::sync::CancellationToken;
pub use toolchain::{RuntimeFound, Toolchain, ToolchainError};
pub use verdict::{Phase, ProgramRun, Status, TestCounts, Verdict};

/// An error and its causes, on one line: `cannot start worker 1: the driver exited ...`.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}
