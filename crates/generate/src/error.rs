//! Why a generation stopped.

/// Why a generation stopped. Whatever it had written stays in the samples file, and the
/// same command asks for the rest.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{name}: {message}")]
    Template { name: String, message: String },
    #[error(
        "{problems}: {without} of its {of} problems ({first} first) carry neither a prompt nor the task in words, \
         so there is nothing to ask a model"
    )]
    NoPrompt { problems: String, without: usize, of: usize, first: String },
    #[error(
        "{path} was asked with other settings ({differences}); give another --output, or add --restart to ask again"
    )]
    OtherRequest { path: String, differences: String },
    #[error(transparent)]
    Busy(#[from] passk_formats::lock::LockError),
    #[error(
        "{url} answered more than {limit} MiB for {n} samples of at most {max_tokens} tokens; does it honour \
         max_tokens?"
    )]
    TooLarge { url: String, limit: usize, n: u32, max_tokens: u32 },
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
    #[error(
        "nothing answers at {url} ({attempts} attempts; the last: {last}); is the server up, and --endpoint its \
         address?"
    )]
    Unreachable { url: String, attempts: u32, last: String },
    #[error("{url}: gave up after {attempts} attempts; the last: {last}")]
    GaveUp { url: String, attempts: u32, last: String },
    #[error("the HTTP client cannot start: {message}")]
    Client { message: String },
    #[error("interrupted")]
    Interrupted,
}
