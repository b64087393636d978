//! Why a command stops, and the exit code each reason gets.

use thiserror::Error;

use crate::evaluate::{JournalError, Stopped};
use crate::{lock, resume};
use passk_formats::InputError;

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
    #[error("cannot find a usable python interpreter")]
    Interpreter(#[source] passk_runner::InterpreterError),
    /// An `--allow-package` that cannot be allowed: a bad flag, not a bad interpreter.
    #[error(transparent)]
    AllowPackage(passk_runner::InterpreterError),
    #[error("cannot run candidates")]
    Pool(#[from] passk_runner::PoolError),
    #[error("cannot find passk's own executable, which sets up the sandbox")]
    OwnExecutable(#[source] std::io::Error),
    #[error("cannot score")]
    Score(#[from] passk_scorer::SummaryError),
    #[error(transparent)]
    Report(#[from] passk_report::ReportError),
    #[error(transparent)]
    Resume(#[from] resume::ResumeError),
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{}", describe_stop(.0))]
    Stopped(Stopped),
    /// Ctrl-C, SIGTERM or SIGHUP before any sample ran.
    #[error("interrupted while {phase}; run the same command again, without --restart, to resume")]
    Interrupted { phase: &'static str },
    #[error("{errors} samples have no verdict (infrastructure errors), so pass@k is unknown")]
    IncompleteResults { errors: u64 },
    #[error("{failing} canonical solutions fail")]
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
}

impl From<passk_runner::InterpreterError> for CommandError {
    fn from(error: passk_runner::InterpreterError) -> CommandError {
        use passk_runner::InterpreterError::{BenchmarkPackage, Package};
        match error {
            Package { .. } | BenchmarkPackage { .. } => CommandError::AllowPackage(error),
            _ => CommandError::Interpreter(error),
        }
    }
}

fn describe_stop(stopped: &Stopped) -> String {
    match stopped {
        Stopped::Interrupted { done, total, partial, computing_expected } => format!(
            "interrupted{}: {done} of {total} samples have results in {}; run the same command again, without --restart, \
             to resume",
            if *computing_expected { " while computing expected outputs" } else { "" },
            partial.display()
        ),
        Stopped::Infrastructure { errors, cause, done, total, partial } => format!(
            "{errors} samples got no verdict through a fault of this machine ({cause}); pass@k is not reported; \
             {done} of {total} samples have results in {}; once the cause is fixed, run the same command again, \
             without --restart, to resume",
            partial.display()
        ),
    }
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Input(_)
            | CommandError::UnknownCommand { .. }
            | CommandError::Calc { .. }
            | CommandError::CompareInput { .. }
            | CommandError::Resume(resume::ResumeError::NoSettings { .. })
            | CommandError::Lock(_)
            | CommandError::AllowPackage(_)
            | CommandError::Journal(JournalError::Damaged { .. }) => EXIT_BAD_INPUT,
            CommandError::Report(error) if error.kind() == passk_report::ReportErrorKind::BadInput => EXIT_BAD_INPUT,
            CommandError::Stopped(Stopped::Interrupted { .. }) | CommandError::Interrupted { .. } => EXIT_INTERRUPTED,
            CommandError::Stopped(Stopped::Infrastructure { .. }) | CommandError::IncompleteResults { .. } => {
                EXIT_INFRASTRUCTURE
            }
            CommandError::InvalidProblems { .. }
            | CommandError::Unjudgeable { .. }
            | CommandError::NoCanonicalSolutions { .. } => EXIT_INVALID_PROBLEMS,
            _ => EXIT_RUN_FAILED,
        }
    }
}

/// Why a problem set's problems may be unjudgeable, which says what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnjudgeableBecause {
    /// Test code that may pass the candidate what is not plain data, which in-process
    /// mode runs as it is.
    TestCode,
    /// Inputs whose expected outputs come from the canonical solution (HumanEval+,
    /// MBPP+), which gave none here.
    ExpectedOutputs,
    /// Not known here (results scored without their problems).
    Unknown,
}

impl UnjudgeableBecause {
    pub fn of(format: passk_formats::problems::Format) -> UnjudgeableBecause {
        match format {
            passk_formats::problems::Format::Evalplus => UnjudgeableBecause::ExpectedOutputs,
            _ => UnjudgeableBecause::TestCode,
        }
    }

    fn hint(self) -> &'static str {
        match self {
            UnjudgeableBecause::TestCode => {
                "their tests pass the candidate what cannot cross to another process (see the `unjudgeable` lines \
                 of the results); without --no-fallback, a problem whose canonical solution shows this is judged \
                 in process; or judge every problem with --verdicts in-process"
            }
            UnjudgeableBecause::ExpectedOutputs => {
                "their canonical solutions gave no expected outputs here (see the `unjudgeable` lines of the \
                 results); failed expected outputs are not cached, so the same command tries them again and runs only \
                 those samples"
            }
            UnjudgeableBecause::Unknown => "the `unjudgeable` lines of the results say why",
        }
    }
}
