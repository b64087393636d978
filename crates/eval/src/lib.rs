//! The evaluation pipeline: from a problem set and its samples to verdicts and scores.
//!
//! A run is a sequence of phases, each a type of its own (see `evaluate`): the input is
//! checked whole before anything runs, the workers come up while expected outputs are
//! read from the cache or computed, every sample is judged on the runner's pool with
//! each verdict written to a journal as it is decided (so an interrupted run resumes
//! where it stopped), time-outs are run again alone, and problems whose tests cannot be
//! judged out of process fall back as documented. The same command after a complete run
//! runs nothing and reports the same numbers.
//!
//! This crate never prints and never installs signal handlers: what the user should see
//! goes out as [`events::Event`]s to whatever front end watches the run, and a stop is
//! asked for through the cancellation token the front end passes in. Its errors say what
//! kind of failure each is ([`EvalError::kind`]); a front end decides what that means
//! (the CLI's exit codes, a service's statuses).

pub mod canonical;
pub mod dedup;
pub mod error;
pub mod evaluate;
pub mod events;
pub mod expected;
pub mod journal;
pub mod judge;
pub mod languages;
pub mod merge;
pub mod resume;
pub mod sample_program;
pub mod served;
pub mod timeouts;
pub mod workers;

pub use error::{EvalError, EvalErrorKind, UnjudgeableBecause};
