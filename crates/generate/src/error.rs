//! Why a generation stopped.

/// Why a generation stopped. Whatever it had written stays in the samples file, and the
/// same command asks for the rest.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("the chat template cannot be read: {message}")]
    Template { message: String },
    #[error(
        "{problems}: {without} of its {of} problems carry no prompt ({format}), so there is nothing to ask a model; \
         generate for a set with prompts (HumanEval, HumanEval+, MBPP+, HumanEval-X, MultiPL-E)"
    )]
    NoPrompt { problems: String, format: String, without: usize, of: usize },
    #[error(
        "{path} was asked with other settings ({differences}); give another --output, or add --restart to ask again"
    )]
    OtherRequest { path: String, differences: String },
    #[error("{path}:{line}: {message}")]
    Samples { path: String, line: usize, message: String },
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The endpoint answers this request the same way however often it is asked.
    #[error("{url} answered HTTP {status}: {message}{}", hint.as_deref().map(|hint| format!("; {hint}")).unwrap_or_default())]
    Refused { url: String, status: u16, message: String, hint: Option<String> },
    #[error("{url}: gave up after {attempts} attempts; the last: {last}")]
    GaveUp { url: String, attempts: u32, last: String },
    #[error("the HTTP client cannot start: {message}")]
    Client { message: String },
    #[error("interrupted")]
    Interrupted,
}
