//! Why a report could not be made.

use passk_formats::InputError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ReportError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot score")]
    Score(#[from] passk_scorer::SummaryError),
    #[error("cannot make the report: {message}")]
    Document { message: String },
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What kind of failure a [`ReportError`] is, for a front end to act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportErrorKind {
    /// A results file or a setting that is wrong: the user can fix it.
    BadInput,
    /// The report could not be made or written.
    Failed,
}

impl ReportError {
    pub fn kind(&self) -> ReportErrorKind {
        match self {
            ReportError::Input(_) => ReportErrorKind::BadInput,
            ReportError::Score(_) | ReportError::Document { .. } | ReportError::Write { .. } => ReportErrorKind::Failed,
        }
    }
}
