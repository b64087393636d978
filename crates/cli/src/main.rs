//! `passk`: runs model-written code against its problems' tests in isolated subprocesses
//! and turns the verdicts into pass@k.
//!
//! This crate is the command line: it reads problem sets and samples, checks them line by
//! line so that bad input is caught before anything runs, hands the programs to the
//! runner, writes the results in the samples' order, and prints the scores.

mod canonical;
mod dedup;
mod evaluate;
mod input;
mod jsonl;
mod lock;
mod output;
mod provenance;
mod report;
mod resume;
mod retry;
mod score;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use passk_runner::{Limits, SandboxMode, VerdictMode};
use thiserror::Error;

use crate::input::InputError;

/// The command finished; for `evaluate`, every sample has a verdict, whatever the pass rate.
const EXIT_SUCCESS: u8 = 0;
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
/// Stopped by Ctrl-C or SIGTERM; run again to resume.
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Parser)]
#[command(name = "passk", version, about = "Sandboxed, execution-based evaluation of code-generation models")]
struct Cli {
    /// More logging (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every sample against its problem's tests and report pass@k.
    Evaluate(EvaluateArgs),
    /// Compute pass@k from an existing results file, executing nothing.
    Score(ScoreArgs),
    /// Run every canonical solution of a problem set, and report those that fail or run
    /// close to the time limit.
    Validate(ValidateArgs),
    /// Internal: set up a worker's sandbox and execute its interpreter.
    #[command(name = "__sandbox-exec", hide = true)]
    SandboxExec { policy: String },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum VerdictsArg {
    Judge,
    InProcess,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SandboxArg {
    Auto,
    Strict,
    None,
}

#[derive(Debug, clap::Args)]
struct EvaluateArgs {
    /// Samples (.jsonl or .jsonl.gz): `task_id` and `completion` or `solution` per line.
    samples: PathBuf,
    /// A HumanEval-format problem file (.jsonl or .jsonl.gz), or a bundled set's name.
    #[arg(long)]
    problems: String,
    /// The k values of pass@k, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100", value_parser = parse_k)]
    k: Vec<u64>,
    #[command(flatten)]
    runner: RunnerArgs,
    /// Where to write per-sample results [default: <SAMPLES>_results.jsonl].
    #[arg(long)]
    results: Option<PathBuf>,
    /// Also write the summary as JSON to this path.
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Run every sample, even one identical to another (by default a program is run once
    /// and its verdict given to every identical sample).
    #[arg(long)]
    no_dedup: bool,
    /// Start over, discarding the results of an interrupted run of the same command
    /// (by default it is resumed).
    #[arg(long)]
    restart: bool,
    /// Run the samples that timed out again at the end, one at a time, and keep the new
    /// verdicts (the summary says how many changed).
    #[arg(long)]
    retry_timeouts: bool,
    /// Evaluate samples that cover only some of the problem set (by default that is
    /// refused); pass@k is then the mean over the problems covered.
    #[arg(long)]
    partial: bool,
    /// Give each problem its own time limit: --timeout plus --calibrate-factor times how
    /// long its canonical solution takes here (measured before the run).
    #[arg(long)]
    calibrate: bool,
    /// With --calibrate, how many times the canonical solution's runtime a problem gets
    /// on top of --timeout.
    #[arg(long, value_name = "FACTOR", default_value = "4", value_parser = parse_factor, requires = "calibrate")]
    calibrate_factor: f64,
}

#[derive(Debug, clap::Args)]
struct ValidateArgs {
    /// A HumanEval-format problem file (.jsonl or .jsonl.gz), or a bundled set's name.
    #[arg(long)]
    problems: String,
    #[command(flatten)]
    runner: RunnerArgs,
    /// A canonical solution taking more than this share of the limit is reported as
    /// close to it.
    #[arg(long, value_name = "SHARE", default_value = "0.5", value_parser = parse_factor)]
    close: f64,
}

/// How candidates are run: shared by every command that runs them.
#[derive(Debug, clap::Args)]
struct RunnerArgs {
    /// Candidates run at once [default: the number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
    /// Wall-clock seconds each sample may run.
    #[arg(long, default_value = "3", value_parser = parse_seconds)]
    timeout: Duration,
    /// How strongly to isolate candidates: `auto` uses the strongest isolation this host
    /// allows and warns if it is not full; `strict` refuses to run without full isolation;
    /// `none` runs candidates unisolated, for trusted code only.
    #[arg(long, value_enum, default_value = "auto")]
    sandbox: SandboxArg,
    /// Who decides verdicts: `judge` runs the problem's tests in a process of their own,
    /// which reaches the candidate only through plain data, so nothing the candidate
    /// does can touch the tests; `in-process` runs candidate and tests as one program in
    /// one interpreter, exactly as the reference harness does.
    #[arg(long, value_enum, default_value = "judge")]
    verdicts: VerdictsArg,
    /// Memory each sample may use, in MiB (0 for no limit): all of it together, its
    /// processes, files and shared memory, where control groups are available, and the
    /// address space of each of its processes.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().memory_mib)]
    memory_limit: u64,
    /// Processes and threads a sample may run at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().processes, value_parser = clap::value_parser!(u64).range(1..))]
    max_processes: u64,
    /// CPU seconds each process of a candidate may use.
    #[arg(long, value_name = "SECONDS", default_value_t = Limits::default().cpu_seconds, value_parser = clap::value_parser!(u64).range(1..))]
    cpu_limit: u64,
    /// Largest file a candidate may write, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().file_size_mib, value_parser = clap::value_parser!(u64).range(1..))]
    file_size_limit: u64,
    /// Descriptors a candidate may hold open.
    #[arg(long, value_name = "N", default_value_t = Limits::default().open_files, value_parser = clap::value_parser!(u64).range(16..))]
    open_files: u64,
    /// Size of each sample's own /tmp, and of its /dev/shm, in MiB (level full).
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().tmp_mib, value_parser = clap::value_parser!(u64).range(1..))]
    tmp_size: u64,
    /// The Python interpreter, resolved once to its real executable.
    #[arg(long, default_value = "python3")]
    python: OsString,
}

impl RunnerArgs {
    fn jobs(&self) -> usize {
        match self.jobs {
            Some(jobs) => usize::try_from(jobs).unwrap_or(usize::MAX),
            None => std::thread::available_parallelism().map_or(1, usize::from),
        }
    }

    fn sandbox(&self) -> SandboxMode {
        match self.sandbox {
            SandboxArg::Auto => SandboxMode::Auto,
            SandboxArg::Strict => SandboxMode::Strict,
            SandboxArg::None => SandboxMode::None,
        }
    }

    fn verdicts(&self) -> VerdictMode {
        match self.verdicts {
            VerdictsArg::Judge => VerdictMode::Judge,
            VerdictsArg::InProcess => VerdictMode::InProcess,
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            memory_mib: self.memory_limit,
            processes: self.max_processes,
            cpu_seconds: self.cpu_limit,
            file_size_mib: self.file_size_limit,
            open_files: self.open_files,
            tmp_mib: self.tmp_size,
        }
    }
}

#[derive(Debug, clap::Args)]
struct ScoreArgs {
    /// A results file: `task_id` and `passed` per line.
    results: PathBuf,
    /// The k values of pass@k, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,10,100", value_parser = parse_k)]
    k: Vec<u64>,
    /// Also write the summary as JSON to this path.
    #[arg(long)]
    summary: Option<PathBuf>,
}

fn parse_k(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("k must be at least 1".into()),
        Ok(k) => Ok(k),
        Err(_) => Err(format!("{text:?} is not a whole number")),
    }
}

fn parse_factor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(factor) if factor.is_finite() && factor > 0.0 => Ok(factor),
        Ok(_) => Err("must be a positive number".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 => Ok(Duration::from_secs_f64(seconds)),
        Ok(_) => Err("must be a positive number of seconds".into()),
        Err(_) => Err(format!("{text:?} is not a number of seconds")),
    }
}

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
    #[error("cannot find a usable python interpreter")]
    Interpreter(#[from] passk_runner::InterpreterError),
    #[error("cannot run candidates")]
    Pool(#[from] passk_runner::PoolError),
    #[error("cannot find passk's own executable, which sets up the sandbox")]
    OwnExecutable(#[source] std::io::Error),
    #[error("cannot score")]
    Score(#[from] passk_scorer::SummaryError),
    #[error(transparent)]
    Resume(#[from] resume::ResumeError),
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    #[error("{}", describe_stop(.0))]
    Stopped(evaluate::Stopped),
    #[error("{errors} samples have no verdict (infrastructure errors), so pass@k is unknown")]
    IncompleteResults { errors: u64 },
    #[error("{failing} canonical solutions fail")]
    InvalidProblems { failing: usize },
    #[error(
        "{} cannot be judged out of process: {}; their tests pass the candidate something that is not plain \
         data (see the `unjudgeable` lines of the results); judge them with --verdicts in-process",
        plural(.problems.len(), "problem"),
        .problems.join(", ")
    )]
    Unjudgeable { problems: Vec<String> },
}

/// "1 problem", "2 problems".
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn describe_stop(stopped: &evaluate::Stopped) -> String {
    match stopped {
        evaluate::Stopped::Interrupted { done, total, partial } => format!(
            "interrupted: {done} of {total} samples have results in {}; run the same command again to resume",
            partial.display()
        ),
        evaluate::Stopped::Infrastructure { errors, cause, done, total, partial } => format!(
            "{errors} samples got no verdict through a fault of this machine ({cause}); pass@k is not reported; \
             {done} of {total} samples have results in {}; once the cause is fixed, run the same command again \
             to resume",
            partial.display()
        ),
    }
}

impl CommandError {
    fn exit_code(&self) -> u8 {
        match self {
            CommandError::Input(_)
            | CommandError::Resume(resume::ResumeError::NoSettings { .. })
            | CommandError::Lock(lock::LockError::Busy { .. }) => EXIT_BAD_INPUT,
            CommandError::Stopped(evaluate::Stopped::Interrupted { .. }) => EXIT_INTERRUPTED,
            CommandError::Stopped(evaluate::Stopped::Infrastructure { .. })
            | CommandError::IncompleteResults { .. } => EXIT_INFRASTRUCTURE,
            CommandError::InvalidProblems { .. } | CommandError::Unjudgeable { .. } => EXIT_INVALID_PROBLEMS,
            _ => EXIT_RUN_FAILED,
        }
    }
}

pub fn print_report(report: &report::Report<'_>) -> Result<(), CommandError> {
    let stdout = std::io::stdout();
    report
        .print_table(&mut stdout.lock())
        .map_err(|source| CommandError::Write { path: "standard output".into(), source })
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn run(command: Command) -> Result<(), CommandError> {
    match command {
        Command::SandboxExec { policy } => passk_runner::sandbox::run_helper(&policy),
        Command::Score(args) => {
            score::score(score::ScoreOptions { results: args.results, ks: args.k, summary: args.summary })
        }
        Command::Evaluate(args) => {
            let results = args.results.unwrap_or_else(|| {
                let mut name = args.samples.as_os_str().to_owned();
                name.push("_results.jsonl");
                PathBuf::from(name)
            });
            let options = evaluate::EvaluateOptions {
                samples: args.samples,
                problems: args.problems,
                ks: args.k,
                jobs: args.runner.jobs(),
                timeout: args.runner.timeout,
                sandbox: args.runner.sandbox(),
                verdicts: args.runner.verdicts(),
                limits: args.runner.limits(),
                dedup: !args.no_dedup,
                python: args.runner.python,
                results,
                summary: args.summary,
                restart: args.restart,
                retry_timeouts: args.retry_timeouts,
                partial: args.partial,
                calibrate: args.calibrate.then_some(args.calibrate_factor),
            };
            runtime()?.block_on(evaluate::evaluate(options))
        }
        Command::Validate(args) => {
            let problems = input::ProblemSet::load(&args.problems)?;
            runtime()?.block_on(async {
                let options = pool_options(&args.runner).await?;
                canonical::validate(options, &problems, args.close).await
            })
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    if let Err(error) = passk_runner::protect_this_process() {
        tracing::warn!("cannot make the harness non-dumpable: {error}");
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| CommandError::Write { path: "the async runtime".into(), source })
}

async fn pool_options(runner: &RunnerArgs) -> Result<passk_runner::PoolOptions, CommandError> {
    Ok(passk_runner::PoolOptions {
        interpreter: passk_runner::Interpreter::resolve(&runner.python).await?,
        jobs: runner.jobs(),
        timeout: runner.timeout,
        limits: runner.limits(),
        sandbox: runner.sandbox(),
        helper: std::env::current_exe().map_err(CommandError::OwnExecutable)?,
        output_cap: evaluate::OUTPUT_CAP,
        verdicts: runner.verdicts(),
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The sandbox helper must stay single-threaded and quiet: it only sets up and execs.
    if let Command::SandboxExec { policy } = &cli.command {
        passk_runner::sandbox::run_helper(policy);
    }
    init_logging(cli.verbose);
    match run(cli.command) {
        Ok(()) => ExitCode::from(EXIT_SUCCESS),
        Err(error) => {
            eprintln!("error: {}", passk_runner::error_chain(&error));
            ExitCode::from(error.exit_code())
        }
    }
}
