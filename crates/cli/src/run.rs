//! `passk run`: from a model endpoint to a score in one command. It asks for the samples
//! (`generate`), then runs them and reports (`evaluate`), all in one directory, and the
//! same command picks up where either stopped.
//!
//! The phases run one after the other, not overlapped: a run's verdicts are recorded
//! against the SHA-256 of a complete samples file, which is what lets an interrupted
//! evaluation resume, and a finished one be reported again without running anything.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use passk_formats::problems::ProblemSet;

use crate::args::{Judged, JudgingArgs};
use crate::error::CommandError;
use crate::generate::{ask_for_samples, GenerationArgs, ModeArg};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub generation: GenerationArgs,
    /// A problem file in any format passk reads, or a bundled set's name.
    #[arg(long)]
    pub problems: String,
    /// The run's directory, made where missing: samples.jsonl (with the request's
    /// settings in samples.jsonl.request.json), results.jsonl, summary.json and
    /// report.html.
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub judging: JudgingArgs,
    /// Write the report here instead: FILE.html or FILE.md.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Problems whose results lines share this field's value are one group, not
    /// independent: the standard error is clustered by group, and the bootstrap
    /// resamples groups.
    #[arg(long, value_name = "FIELD")]
    pub cluster_by: Option<String>,
    /// Also give a percentile bootstrap 95% interval from this many resamples of the
    /// problems (or groups).
    #[arg(long, value_name = "RESAMPLES", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub bootstrap: Option<u64>,
    /// The bootstrap's seed (`--seed` is the model's sampling seed here).
    #[arg(long, value_name = "SEED", default_value = "0", requires = "bootstrap")]
    pub bootstrap_seed: u64,
    /// Run the samples again from the start, keeping them (by default an interrupted
    /// evaluation is resumed, and a complete one reported again without running).
    #[arg(long)]
    pub restart: bool,
    /// Ask the model for every sample again, and run them all: what DIR holds is
    /// replaced once the new samples arrive.
    #[arg(long)]
    pub ask_again: bool,
}

/// Where a run keeps its files.
struct Layout {
    samples: PathBuf,
    results: PathBuf,
    summary: PathBuf,
    report: PathBuf,
}

impl Layout {
    fn new(dir: &Path, report: Option<PathBuf>) -> Layout {
        Layout {
            samples: dir.join("samples.jsonl"),
            results: dir.join("results.jsonl"),
            summary: dir.join("summary.json"),
            report: report.unwrap_or_else(|| dir.join("report.html")),
        }
    }
}

pub fn run(args: RunArgs) -> Result<(), CommandError> {
    if args.output.exists() && !args.output.is_dir() {
        return Err(CommandError::RunOutputNotADirectory { path: args.output.display().to_string() });
    }
    std::fs::create_dir_all(&args.output)
        .map_err(|source| CommandError::Write { path: args.output.display().to_string(), source })?;
    let layout = Layout::new(&args.output, args.report);
    let set = args.judging.suite.set_options(args.judging.runner.timeout)?;
    let problems = Arc::new(ProblemSet::load(&args.problems, &set)?);
    // A chat model's answer is prose around code: what runs is taken out of it.
    let chat = matches!(args.generation.mode, ModeArg::Chat);
    let generation =
        args.generation.into_options(problems, args.judging.language, layout.samples.clone(), args.ask_again)?;
    let mut judging: JudgingArgs = args.judging;
    judging.extract |= chat;
    let uncertainty = passk_report::scores::UncertaintyOptions {
        cluster_by: args.cluster_by,
        bootstrap: args.bootstrap.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        seed: args.bootstrap_seed,
    };
    let (problems, restart) = (args.problems, args.restart || args.ask_again);
    crate::runtime()?.block_on(async {
        let interrupt = crate::interrupt::listen()?;
        let generated = ask_for_samples(generation, interrupt.clone()).await?;
        let options = judging.into_options(Judged {
            samples: layout.samples,
            problems,
            results: layout.results,
            summary: Some(layout.summary),
            report: Some(layout.report),
            // Verdicts of an earlier samples file, whole or interrupted, are not this one's.
            restart: restart || generated.written > 0,
            partial: false,
            shard: None,
            uncertainty,
        })?;
        crate::evaluate_on_terminal(options, interrupt).await
    })
}
