//! `passk`: runs model-written code against its problems' tests in isolated subprocesses
//! and turns the verdicts into pass@k.
//!
//! This crate is the command line: it reads problem sets and samples, checks them line by
//! line so that bad input is caught before anything runs, hands the programs to the
//! runner, records each verdict as it is decided, and prints the scores.

mod args;
mod calc;
mod canonical;
mod compare;
mod error;
mod generate;
mod interrupt;
mod merge;
mod run;
mod say;
mod score;
mod terminal;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, Parser, Subcommand};

use crate::args::{CalcArgs, CanonicalArgs, CompareArgs, EvaluateArgs, MergeArgs, ScoreArgs, ServeArgs, ValidateArgs};
use crate::error::{CommandError, EXIT_SUCCESS};
use crate::say::say;
use crate::terminal::Terminal;
use passk_eval::events::EventSink;

#[derive(Debug, Parser)]
#[command(
    name = "passk",
    version,
    about = "Sandboxed, execution-based evaluation of code-generation models",
    disable_help_subcommand = true
)]
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
    /// Join the results of a run's shards (`evaluate --shard K/N`) into the results and
    /// summary a single run gives, executing nothing.
    Merge(MergeArgs),
    /// Compare two runs over the same problems, problem by problem: the difference in
    /// pass@k and pass^k with its paired standard error, interval and p-value.
    Compare(CompareArgs),
    /// pass@k and pass^k from counts: one problem's n and c, or many problems' and
    /// their mean, computed in product form and checked against the exact closed form.
    Calc(CalcArgs),
    /// Run every canonical solution of a problem set, and report those that fail or run
    /// close to the time limit.
    Validate(ValidateArgs),
    /// Write a problem set's canonical solutions as a samples file, one sample per problem:
    /// a run on it checks the whole pipeline and should score pass@1 1.0.
    Canonical(CanonicalArgs),
    /// Ask a model behind an OpenAI-compatible endpoint (vLLM, llama.cpp, SGLang, TGI,
    /// OpenAI) for samples of every problem, written as they arrive; the same command
    /// asks only for what is missing.
    Generate(generate::GenerateArgs),
    /// Ask a model for samples, run them and report pass@k, in one directory: `generate`
    /// then `evaluate`; the same command picks up where either stopped.
    Run(run::RunArgs),
    /// Serve verdicts over HTTP: SandboxFusion's POST /run_code for RL trainers, POST
    /// /evaluate for batches of samples, /healthz, /readyz and /metrics. SIGTERM drains.
    Serve(ServeArgs),
    /// Print the help of passk or of one of its commands.
    Help {
        /// The command to describe, e.g. `evaluate`.
        command: Vec<String>,
    },
    /// Internal: set up a worker's sandbox and execute its interpreter.
    #[command(name = "__sandbox-exec", hide = true)]
    SandboxExec { policy: String },
    /// Internal: clean up after the passk that started it, once it has exited.
    #[command(name = "__reaper", hide = true)]
    Reaper,
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
        Command::Reaper => passk_runner::reaper::run(),
        Command::Help { command } => help(&command),
        Command::Score(args) => {
            let uncertainty = args.scoring.uncertainty.options();
            let report = args.scoring.report.as_deref().map(passk_report::document::ReportPath::new).transpose()?;
            score::score(score::ScoreOptions {
                results: args.results,
                ks: args.scoring.k,
                summary: args.scoring.summary,
                report,
                uncertainty,
            })
        }
        Command::Merge(args) => merge::merge(args),
        Command::Generate(args) => generate::generate(args),
        Command::Run(args) => run::run(args),
        Command::Compare(args) => compare::compare(&compare::CompareOptions {
            report: args.report.as_deref().map(passk_report::document::ReportPath::new).transpose()?,
            a: args.a,
            b: args.b,
            ks: args.k,
            intersect: args.intersect,
            summary: args.summary,
            cluster_by: args.cluster_by,
        }),
        Command::Calc(args) => {
            let mut problems = args.problem;
            if let (Some(n), Some(c)) = (args.n, args.c) {
                problems.insert(0, calc::Problem { n, c });
            }
            if let Some(file) = &args.file {
                problems.extend(calc::read_problems(file)?);
            }
            calc::calc(&problems, &args.k, args.json)
        }
        Command::Canonical(args) => canonical::write_samples(&args.problems, args.format, args.output.as_deref()),
        Command::Evaluate(args) => {
            let options = args.into_options()?;
            runtime()?.block_on(async { evaluate_on_terminal(options, interrupt::listen()?).await })
        }
        Command::Serve(args) => {
            let settings = args.into_settings()?;
            runtime()?.block_on(async {
                let shutdown = interrupt::listen()?;
                let address = settings.listen;
                let listener = tokio::net::TcpListener::bind(address)
                    .await
                    .map_err(|source| CommandError::Listen { address: address.to_string(), source })?;
                let terminal: EventSink = Arc::new(Terminal::default());
                passk_serve::serve(settings, listener, terminal, shutdown).await?;
                Ok(())
            })
        }
        Command::Validate(args) => {
            let set = args.suite.set_options(args.runner.timeout)?;
            let mut problems = passk_formats::problems::ProblemSet::load(&args.problems, &set)?;
            // Regression: a set with no canonical solution (MultiPL-E's) started every
            // worker, then listed each of its task ids before saying so.
            if problems.problems.iter().all(|problem| problem.canonical_solution.is_none()) {
                return Err(CommandError::NoCanonicalSolutions {
                    path: problems.name.clone(),
                    problems: problems.problems.len(),
                });
            }
            let cache_dir = args.suite.cache_dir();
            let terminal: EventSink = Arc::new(Terminal::default());
            // Before the workers, whose sandbox shows the libraries the toolchains build.
            let toolchains = passk_eval::languages::Toolchains::for_set(
                &problems,
                cache_dir.clone(),
                &passk_eval::languages::tell_building(&terminal),
            )
            .map_err(passk_eval::EvalError::Toolchain)?;
            runtime()?.block_on(async {
                let workers = args.runner.workers();
                let mut pool_options = workers.pool_options(workers.interpreter().await?)?;
                pool_options.shown = toolchains.shown();
                let mut pool = passk_runner::Pool::start(pool_options).await.map_err(passk_eval::EvalError::from)?;
                let never = passk_runner::CancellationToken::new();
                passk_eval::expected::attach(&mut problems, &set, &mut pool, &cache_dir, &never, &terminal).await?;
                let validated = canonical::validate(&mut pool, &problems, &toolchains, args.close).await;
                pool.stop().await;
                validated
            })
        }
    }
}

/// `passk help [COMMAND]`: the help `passk COMMAND --help` prints.
fn help(path: &[String]) -> Result<(), CommandError> {
    let mut command = Cli::command();
    // Building gives each command the global options, as `COMMAND --help` shows them.
    command.build();
    for name in path {
        command = match command.find_subcommand(name).filter(|found| !found.is_hide_set()) {
            Some(found) => found.clone(),
            None => {
                let known: Vec<String> = Cli::command()
                    .get_subcommands()
                    .filter(|c| !c.is_hide_set())
                    .map(|c| c.get_name().to_owned())
                    .collect();
                return Err(CommandError::UnknownCommand { name: name.clone(), known: known.join(", ") });
            }
        };
    }
    let mut name = String::from("passk");
    for part in path {
        name.push(' ');
        name.push_str(part);
    }
    let help = command.bin_name(name).render_help().to_string();
    say::print(help.as_bytes())
}

/// Runs `options`, drawing the run on the terminal, until done or `interrupt`.
pub(crate) async fn evaluate_on_terminal(
    options: passk_eval::evaluate::EvaluateOptions,
    interrupt: passk_runner::CancellationToken,
) -> Result<(), CommandError> {
    let terminal = Arc::new(Terminal::default());
    passk_eval::evaluate::evaluate(options, terminal.clone(), interrupt).await?;
    terminal.failure().map_or(Ok(()), Err)
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    if let Err(error) = passk_runner::protect_this_process() {
        tracing::warn!("cannot make the harness non-dumpable: {error}");
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| CommandError::Write { path: "the async runtime".into(), source })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The sandbox helper and the reaper must stay single-threaded and quiet.
    match &cli.command {
        Command::SandboxExec { policy } => passk_runner::sandbox::run_helper(policy),
        Command::Reaper => passk_runner::reaper::run(),
        _ => {}
    }
    init_logging(cli.verbose);
    match run(cli.command) {
        Ok(()) => ExitCode::from(EXIT_SUCCESS),
        Err(error) => {
            say!("error: {}", passk_runner::error_chain(&error));
            ExitCode::from(error.exit_code())
        }
    }
}
