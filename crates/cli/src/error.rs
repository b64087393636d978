//! Why a command stops, and the exit code each reason gets. The libraries say what kind
//! of failure each of their errors is; only here do kinds become exit codes.

use passk_eval::{EvalError, EvalErrorKind, UnjudgeableBecause};
use passk_formats::InputError;
use passk_generate::GenerateError;
use passk_report::{ReportError, ReportErrorKind};
use thiserror::Error;

/// The command finished; for `evaluate`, every sample has a verdict, whatever the pass rate.
pub const EXIT_SUCCESS: u8 = 0;
/// The run could not be completed: the interpreter or the workers could not be started,
/// or a file could not be written.
const EXIT_RUN_FAILED: u8 = 1;
/// Bad input: a flag, or a problems, samples or results file that is missing or malformed,
/// a resume with other settings, or a results file another run is writing. (clap also
/// uses 2 for command-line errors.)
const EXIT_BAD_INPUT: u8 = 2;
/// Some samples got no verdict through faults of the machine (a worker that crashed or
/// could not be restarted, a full disk); pass@k is not reported. Run again to resume.
const EXIT_INFRASTRUCTURE: u8 = 3;
/// `validate` found canonical solutions that fail, or problems cannot be judged as asked.
const EXIT_INVALID_PROBLEMS: u8 = 4;
/// Stopped by Ctrl-C, SIGTERM or SIGHUP; run again to resume.
const EXIT_INTERRUPTED: u8 = 130;

/// Why a command stopped.
#[derive(Debug, Error)]
pub enum CommandError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: {} no canonical solution, which `canonical` and `validate` need",
        if *problems == 1 { "its 1 problem has".to_owned() } else { format!("its {problems} problems have") }
    )]
    NoCanonicalSolutions { path: String, problems: usize },
    #[error("cannot score")]
    Score(#[from] passk_scorer::SummaryError),
    #[error("{} no verdict (infrastructure errors), so pass@k is unknown", if *errors == 1 { "1 sample has".to_owned() } else { format!("{errors} samples have") })]
    IncompleteResults { errors: u64 },
    #[error("{}", if *failing == 1 { "1 canonical solution fails".to_owned() } else { format!("{failing} canonical solutions fail") })]
    InvalidProblems { failing: usize },
    #[error("{} cannot be judged: {}; {}", passk_report::words::plural(.problems.len(), "problem"), .problems.join(", "), .why.hint())]
    Unjudgeable { problems: Vec<String>, why: UnjudgeableBecause },
    #[error("{message}")]
    Calc { message: String },
    #[error("{message}")]
    CompareInput { message: String },
    #[error("the product form and the exact closed form disagree, which is a bug in passk: {message}")]
    CalcMismatch { message: String },
    #[error("no command {name:?}; the commands are {known}")]
    UnknownCommand { name: String, known: String },
    #[error(transparent)]
    Serve(Box<passk_serve::ServeError>),
    #[error(transparent)]
    Merge(#[from] passk_eval::merge::MergeError),
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(
        "interrupted: {have} of {total} samples are in {}; run the same command again to ask for the rest",
        output.display()
    )]
    GenerateInterrupted { have: usize, total: usize, output: std::path::PathBuf },
    #[error(
        "--template is the instruction a chat model is given: add --mode chat (in completion mode each problem's \
         prompt is sent as it is)"
    )]
    TemplateWithoutChat,
    #[error("--output {path} is a file: passk run writes a directory (samples, results, summary and report)")]
    RunOutputNotADirectory { path: String },
    #[error("--output {path} is a directory: passk generate writes a samples file, such as {path}/samples.jsonl")]
    SamplesOutputIsADirectory { path: String },
    #[error("cannot read the bearer token from {path}")]
    TokenFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} holds no token: write the bearer token clients send in it")]
    EmptyToken { path: String },
    #[error(
        "the bearer token in {from} holds {character:?}, which no client can send in an HTTP header: a token is \
         visible ASCII only, without spaces"
    )]
    BadToken { from: String, character: char },
    #[error("cannot listen on {address}")]
    Listen {
        address: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<passk_runner::InterpreterError> for CommandError {
    fn from(error: passk_runner::InterpreterError) -> CommandError {
        CommandError::Eval(error.into())
    }
}

impl From<passk_serve::ServeError> for CommandError {
    fn from(error: passk_serve::ServeError) -> CommandError {
        CommandError::Serve(Box::new(error))
    }
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Eval(error) => match error.kind() {
                EvalErrorKind::BadInput => EXIT_BAD_INPUT,
                EvalErrorKind::RunFailed => EXIT_RUN_FAILED,
                EvalErrorKind::Infrastructure => EXIT_INFRASTRUCTURE,
                EvalErrorKind::InvalidProblems => EXIT_INVALID_PROBLEMS,
                EvalErrorKind::Interrupted => EXIT_INTERRUPTED,
            },
            CommandError::Report(error) => match error.kind() {
                ReportErrorKind::BadInput => EXIT_BAD_INPUT,
                ReportErrorKind::Failed => EXIT_RUN_FAILED,
            },
            CommandError::Serve(error) => match &**error {
                passk_serve::ServeError::Eval(error) => match error.kind() {
                    EvalErrorKind::BadInput => EXIT_BAD_INPUT,
                    EvalErrorKind::Interrupted => EXIT_INTERRUPTED,
                    _ => EXIT_RUN_FAILED,
                },
                passk_serve::ServeError::ProblemSet { .. } | passk_serve::ServeError::DuplicateSet { .. } => {
                    EXIT_BAD_INPUT
                }
                passk_serve::ServeError::Listen(_) | passk_serve::ServeError::Panicked => EXIT_RUN_FAILED,
            },
            CommandError::Listen { .. } => EXIT_RUN_FAILED,
            CommandError::Generate(error) => match error {
                GenerateError::Write { .. } | GenerateError::Client { .. } => EXIT_RUN_FAILED,
                GenerateError::GaveUp { .. } | GenerateError::Unreachable { .. } => EXIT_INFRASTRUCTURE,
                GenerateError::Interrupted => EXIT_INTERRUPTED,
                GenerateError::Template { .. }
                | GenerateError::NoPrompt { .. }
                | GenerateError::OtherRequest { .. }
                | GenerateError::Samples { .. }
                | GenerateError::Refused { .. }
                | GenerateError::Busy(_)
                | GenerateError::TooLarge { .. } => EXIT_BAD_INPUT,
            },
            CommandError::GenerateInterrupted { .. } => EXIT_INTERRUPTED,
            CommandError::Merge(passk_eval::merge::MergeError::Write { .. }) => EXIT_RUN_FAILED,
            CommandError::Merge(_) => EXIT_BAD_INPUT,
            CommandError::Input(_)
            | CommandError::TemplateWithoutChat
            | CommandError::RunOutputNotADirectory { .. }
            | CommandError::SamplesOutputIsADirectory { .. }
            | CommandError::TokenFile { .. }
            | CommandError::EmptyToken { .. }
            | CommandError::BadToken { .. }
            | CommandError::UnknownCommand { .. }
            | CommandError::Calc { .. }
            | CommandError::CompareInput { .. } => EXIT_BAD_INPUT,
            CommandError::IncompleteResults { .. } => EXIT_INFRASTRUCTURE,
            CommandError::InvalidProblems { .. }
            | CommandError::Unjudgeable { .. }
            | CommandError::NoCanonicalSolutions { .. } => EXIT_INVALID_PROBLEMS,
            CommandError::Write { .. } | CommandError::Score(_) | CommandError::CalcMismatch { .. } => EXIT_RUN_FAILED,
        }
    }
}
