//! Everything passk reads or writes, and nothing it runs.
//!
//! Problem sets come in many published schemas (HumanEval, MBPP and its sanitized cut,
//! EvalPlus's HumanEval+ and MBPP+, CodeContests, APPS, LiveCodeBench); each is read
//! into one [`problems::ProblemSet`] here, so that the pipeline, the reports and any
//! front end see one shape whatever the file was. Samples are checked against the set
//! they answer ([`sample`]), results are written a whole line at a time ([`write`]), and
//! what goes wrong is an [`InputError`] that names the file, the line and the field.
//!
//! Keeping this crate free of execution is what lets a report, a linter of problem files
//! or a service's request parser use it without pulling in the sandbox.

pub mod error;
pub mod extract;
pub mod fields;
pub mod journal;
pub mod jsonl;
pub mod lock;
pub mod problems;
pub mod provenance;
pub mod results;
pub mod run;
pub mod sample;
pub mod shard;
pub mod write;

pub use error::InputError;
