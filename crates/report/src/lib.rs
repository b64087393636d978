//! What a run's verdicts come to, in the forms people and programs read.
//!
//! A [`tally::Tally`] counts verdicts per problem and per status; [`scores`] turns the
//! counts into pass@k and pass^k with their uncertainty (the math itself is
//! `passk-scorer`'s); a [`summary::Report`] gathers the numbers with the settings and
//! facts of the run and renders them as the terminal table or the JSON summary; and
//! [`document`] renders the HTML and Markdown reports.
//!
//! Nothing here prints or runs code: a front end decides where a table goes and what to
//! say about a report that could not be made, so the same numbers can be served by a
//! service as well as printed by the CLI.

pub mod document;
pub mod error;
pub mod gather;
pub mod rows;
pub mod scores;
pub mod summary;
pub mod tally;
pub mod words;

pub use error::{ReportError, ReportErrorKind};
