//! Why a run stops short of its results, and what kind of stop each is.

use std::path::PathBuf;

use passk_formats::InputError;
use thiserror::Error;

use crate::journal::JournalError;
use crate::resume;

/// Why a run, or a step of one, stopped.
#[derive(Debug, Error)]
pub enum EvalError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot find a usable python interpreter")]
    Interpreter(#[source] passk_runner::InterpreterError),
    /// An `--allow-package` that cannot be allowed: a bad flag, not a bad interpreter.
    #[error(transparent)]
    AllowPackage(passk_runner::InterpreterError),
    #[error(transparent)]
    Toolchain(Box<passk_runner::ToolchainError>),
    #[error("cannot run candidates")]
    Pool(#[from] passk_runner::PoolError),
    #[error("cannot find passk's own executable, which sets up the sandbox")]
    OwnExecutable(#[source] std::io::Error),
    #[error(transparent)]
    Report(#[from] passk_report::ReportError),
    #[error(transparent)]
    Resume(#[from] resume::ResumeError),
    #[error(transparent)]
    Lock(#[from] passk_formats::lock::LockError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{}", describe_stop(.0))]
    Stopped(Stopped),
    /// Ctrl-C, SIGTERM or SIGHUP before any sample ran.
    #[error("interrupted while {phase}; run the same command again, without --restart, to resume")]
    Interrupted { phase: &'static str },
    #[error("{} cannot be judged: {}; {}", passk_report::words::plural(.problems.len(), "problem"), .problems.join(", "), .why.hint())]
    Unjudgeable { problems: Vec<String>, why: UnjudgeableBecause },
    /// A sample handed to a `Judge` for a problem the set does not have.
    #[error("sample {sample} is for problem {problem}, and the set has {problems}")]
    NoSuchProblem { sample: usize, problem: usize, problems: usize },
}

/// How a run that got under way ended, when it did not complete.
#[derive(Debug)]
pub enum Stopped {
    /// Ctrl-C or SIGTERM.
    Interrupted {
        done: usize,
        total: usize,
        partial: PathBuf,
        /// Whether EvalPlus's expected outputs were still being computed.
        computing_expected: bool,
    },
    /// Samples got no verdict through faults of the machine.
    Infrastructure { errors: u64, cause: String, done: usize, total: usize, partial: PathBuf },
}

/// What kind of stop an [`EvalError`] is, for a front end to act on: the CLI gives each
/// its exit code, a service its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalErrorKind {
    /// A flag or a file that is wrong, or a run another passk holds: the user can fix it.
    BadInput,
    /// The run could not be carried out: the interpreter or the workers would not start,
    /// or a file could not be written.
    RunFailed,
    /// Samples got no verdict through faults of the machine; the same run resumes.
    Infrastructure,
    /// Problems that cannot be judged as asked.
    InvalidProblems,
    /// Stopped by a signal; the same run resumes.
    Interrupted,
}

impl From<passk_runner::InterpreterError> for EvalError {
    fn from(error: passk_runner::InterpreterError) -> EvalError {
        use passk_runner::InterpreterError::{BenchmarkPackage, Package};
        match error {
            Package { .. } | BenchmarkPackage { .. } => EvalError::AllowPackage(error),
            _ => EvalError::Interpreter(error),
        }
    }
}

impl EvalError {
    pub fn kind(&self) -> EvalErrorKind {
        match self {
            EvalError::Input(_)
            | EvalError::NoSuchProblem { .. }
            | EvalError::Resume(resume::ResumeError::NoSettings { .. })
            | EvalError::Lock(_)
            | EvalError::AllowPackage(_)
            | EvalError::Journal(JournalError::Damaged { .. } | JournalError::Gathering(_)) => EvalErrorKind::BadInput,
            EvalError::Report(error) if error.kind() == passk_report::ReportErrorKind::BadInput => {
                EvalErrorKind::BadInput
            }
            EvalError::Stopped(Stopped::Interrupted { .. }) | EvalError::Interrupted { .. } => {
                EvalErrorKind::Interrupted
            }
            EvalError::Stopped(Stopped::Infrastructure { .. }) => EvalErrorKind::Infrastructure,
            EvalError::Unjudgeable { .. } => EvalErrorKind::InvalidProblems,
            EvalError::Write { .. }
            | EvalError::Interpreter(_)
            | EvalError::Toolchain(_)
            | EvalError::Pool(_)
            | EvalError::OwnExecutable(_)
            | EvalError::Report(_)
            | EvalError::Resume(_)
            | EvalError::Journal(_) => EvalErrorKind::RunFailed,
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

/// Why a problem set's problems may be unjudgeable, which says what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnjudgeableBecause {
    /// Test code that may pass the candidate what is not plain data, which in-process
    /// mode runs as it is.
    TestCode,
    /// Inputs whose expected outputs come from the canonical solution (HumanEval+,
    /// MBPP+), which gave none here.
    ExpectedOutputs,
    /// Tests in another language than the host's (HumanEval-X's, MultiPL-E's), which are
    /// always judged apart from the candidate: tests that run nothing or do not build, a
    /// type the wire does not carry.
    OtherLanguage,
    /// Not known here (results scored without their problems).
    Unknown,
}

impl UnjudgeableBecause {
    pub fn of(format: passk_formats::problems::Format) -> UnjudgeableBecause {
        match format {
            passk_formats::problems::Format::Evalplus => UnjudgeableBecause::ExpectedOutputs,
            passk_formats::problems::Format::HumanevalX | passk_formats::problems::Format::MultiplE => {
                UnjudgeableBecause::OtherLanguage
            }
            _ => UnjudgeableBecause::TestCode,
        }
    }

    pub fn hint(self) -> &'static str {
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
            UnjudgeableBecause::OtherLanguage => {
                "the `unjudgeable` lines of the results say why (tests that run nothing or do not build, a type \
                 passk cannot pass between processes); samples in other languages than Python are always judged \
                 apart from the candidate, and the rest of the samples were judged"
            }
            UnjudgeableBecause::Unknown => "the `unjudgeable` lines of the results say why",
        }
    }
}
