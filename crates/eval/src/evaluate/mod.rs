//! `passk evaluate`: run every sample against its problem's tests and score the lot.
//!
//! A run goes through four phases, each a type of its own: `Prepared` claims the results
//! file and checks every input before anything runs; `Started` brings up the workers and
//! the journal, resuming an interrupted run, and attaches the expected outputs cached;
//! `run` executes the samples, recording each verdict as it is decided, on the same
//! workers that compute the expected outputs not cached (`recording`); `Concluded` runs time-outs again if asked, writes the
//! results in the samples' order, and reports. The same command after a complete run
//! runs nothing and reports the same numbers, but for samples left unjudgeable for want
//! of expected outputs, which it runs again (`complete_run`).

pub(crate) mod complete_run;
pub(crate) mod describe;
mod fallback;
mod longest_first;
mod prepare;
mod recording;
mod run;
mod samples;

pub use self::complete_run::CompleteRun;
pub use self::describe::warn_about_isolation;
pub use self::samples::default_results;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use passk_runner::cgroup::Accounting;
use passk_runner::{CancellationToken, DriverFacts, Isolation, Pool};
use serde_json::{json, Map, Value};

use self::prepare::Prepared;
use self::run::{Counts, Ran};
use crate::canonical;
use crate::error::Stopped;
use crate::error::{EvalError, UnjudgeableBecause};
use crate::events::{info, warning, Event, EventSink};
use crate::expected::Recordings;
use crate::journal::{Journal, Recorded};
use crate::resume;
use crate::timeouts;
use crate::workers::WorkerOptions;
use passk_formats::problems::SetOptions;
use passk_formats::provenance;
use passk_formats::run::{to_map, RetriedTimeouts, RunFacts, SummarySettings, VerdictSettings};
use passk_formats::InputError;
use passk_report::document::{self, ReportPath};
use passk_report::gather::Gathered;
use passk_report::scores::{self, UncertaintyOptions};
use passk_report::summary::{Coverage, Report, Subset};
use passk_report::tally::Tally;

/// How long a failure to check the input waits for an interrupt that may have caused it
/// (the signal reaches passk's children, which die of it, a moment before its handler).
const INTERRUPT_GRACE: Duration = Duration::from_millis(200);

#[derive(Debug)]
pub struct EvaluateOptions {
    /// The samples, or `-` for standard input.
    pub samples: PathBuf,
    pub problems: String,
    pub ks: Vec<u64>,
    /// How the workers run candidates.
    pub workers: WorkerOptions,
    /// Run each distinct program once and give its verdict to every identical sample.
    pub dedup: bool,
    pub results: PathBuf,
    pub summary: Option<PathBuf>,
    pub report: Option<PathBuf>,
    /// Start over, whatever an earlier run of the same command left.
    pub restart: bool,
    /// Run samples that timed out again at the end, alone.
    pub retry_timeouts: bool,
    /// Judge in process the problems whose tests cannot be judged out of process.
    pub fallback: bool,
    /// Evaluate samples that cover only some of the problem set's problems.
    pub partial: bool,
    /// Run only this share of the samples' problems.
    pub shard: Option<passk_formats::shard::Shard>,
    /// Take the program out of raw model output.
    pub extract: bool,
    /// The language of samples that name none (`--language`); else their set's own.
    pub language: Option<&'static passk_runner::Language>,
    /// Give each problem `timeout + factor × its canonical solution's runtime`.
    pub calibrate: Option<f64>,
    pub uncertainty: UncertaintyOptions,
    /// How the problem set's tests run.
    pub set: SetOptions,
    /// Where HumanEval+'s and MBPP+'s expected outputs are cached, and what other
    /// languages' programs use is built once (`Toolchain::find`).
    pub cache_dir: PathBuf,
}

/// Runs every sample of `options` and reports to `events`; stops cleanly, keeping every
/// verdict decided, once `interrupt` is cancelled.
pub async fn evaluate(
    options: EvaluateOptions,
    events: EventSink,
    interrupt: CancellationToken,
) -> Result<(), EvalError> {
    let events = &events;
    let started_at = provenance::now();
    let clock = Instant::now();
    let prepared = match Prepared::new(&options, events).await {
        Ok(prepared) => prepared,
        // Regression: Ctrl-C reaches the toolchains' and the interpreter's version
        // probes too, and their deaths were told as a broken toolchain ("did not print
        // a version"), exit 1. The signal's own handler may run a moment after.
        Err(error) => {
            tokio::select! {
                () = interrupt.cancelled() => return Err(EvalError::Interrupted { phase: "checking the input" }),
                () = tokio::time::sleep(INTERRUPT_GRACE) => return Err(error),
            }
        }
    };
    if interrupt.is_cancelled() {
        return Err(EvalError::Interrupted { phase: "checking the input" });
    }
    let mut earlier = if options.restart {
        resume::clear(&options.results).map_err(|source| write_error(&options.results, source))?;
        set_aside(&options.results, events)?;
        None
    } else {
        resume::interrupted_settings(&options.results)?.map(Earlier::Interrupted)
    };
    if earlier.is_none() && !options.restart {
        if let Some(complete) = CompleteRun::find(&options.results, &prepared.settings, events) {
            if !complete.reopen(&options.results, events)? {
                return complete.report(&options, prepared.report.as_ref(), events);
            }
            earlier = Some(Earlier::Reopened(complete.verdict_settings));
        }
    }
    if earlier.is_none() && !options.restart {
        keep_earlier(&options.results, events)?;
    }
    if let Some(hint) = prepared.results_hint() {
        warning!(events, "{hint}");
    }
    if let Some(hint) = prepared.chat_hint() {
        warning!(events, "{hint}");
    }
    if let Some(hint) = prepared.language_hint() {
        warning!(events, "{hint}");
    }
    if let (Some(shard), 0) = (options.shard, prepared.total) {
        info!(events, "shard {shard} holds none of the problems the samples answer: its results are empty");
    }
    let started = Started::new(&options, prepared, earlier, &interrupt, events).await?;
    let Started { mut prepared, pool, machine, calibrated, journal, resumed, recordings } = started;
    let mut ran =
        run::run(&options, &prepared, pool, journal, resumed.as_ref(), &calibrated, recordings, &interrupt, events)
            .await;
    let problems = Arc::make_mut(&mut prepared.problems);
    for (index, code) in std::mem::take(&mut ran.attached) {
        problems.problems[index].code = code;
    }
    let counts = ran.counts;
    let concluded = Concluded::new(&options, &prepared, ran, &interrupt, events).await?;
    let resumed_from = resumed.as_ref().map_or(0, Recorded::decided);
    let mut run = run_facts(counts, &started_at, clock, resumed_from, &machine);
    if options.calibrate.is_some() {
        let limits: Map<String, Value> = calibrated
            .iter()
            .zip(&prepared.problems.problems)
            .filter_map(|(limit, problem)| limit.map(|limit| (problem.task_id.clone(), json!(limit.as_secs_f64()))))
            .collect();
        run.calibrated_timeouts = Some(limits);
    }
    let mut footer = describe::footer(
        &options,
        &prepared.problems,
        &machine.isolation,
        machine.facts,
        &machine.accounting,
        counts,
        resumed_from,
    );
    if let Some(toolchains) =
        describe::describe_toolchains(&prepared.toolchains, &options.workers.limits, machine.facts)
    {
        footer.push(("toolchains".into(), toolchains));
    }
    concluded.report(&options, &prepared, machine.settings, run, footer, clock, events)
}

/// Where `--restart` moves the results it replaces, with their run's record: out of the
/// way of anything that reads `<results>`, until the restart completes.
pub fn set_aside_path(results: &std::path::Path) -> PathBuf {
    passk_formats::write::sibling(results, ".before-restart")
}

/// Moves an earlier run's complete results aside as a restart begins, so that a restart
/// that does not complete leaves no results at `<results>` for a pipeline to mistake for
/// its own. Once it completes, they are removed (`drop_set_aside`).
fn set_aside(results: &std::path::Path, events: &EventSink) -> Result<(), EvalError> {
    if !results.exists() {
        return Ok(());
    }
    let aside = set_aside_path(results);
    std::fs::rename(results, &aside).map_err(|source| write_error(&aside, source))?;
    let record = complete_run::record_path(results);
    if record.exists() {
        let aside_record = complete_run::record_path(&aside);
        std::fs::rename(&record, &aside_record).map_err(|source| write_error(&aside_record, source))?;
    }
    info!(events, "restarting: the earlier results are moved to {} until this run completes", aside.display());
    Ok(())
}

/// Where a new run keeps the results it finds at `<results>` from another run: beside
/// them, until a later such run replaces them there.
pub fn kept_earlier_path(results: &std::path::Path) -> PathBuf {
    passk_formats::write::sibling(results, ".earlier")
}

/// Moves the results of another run (other settings, or changed since) out of the way of
/// this one, with their run's record, rather than let this run's results replace them:
/// nothing computed is lost, and a run that does not complete leaves no results at
/// `<results>` that are not its own.
fn keep_earlier(results: &std::path::Path, events: &EventSink) -> Result<(), EvalError> {
    if !results.exists() {
        return Ok(());
    }
    let kept = kept_earlier_path(results);
    std::fs::rename(results, &kept).map_err(|source| write_error(&kept, source))?;
    let record = complete_run::record_path(results);
    let kept_record = complete_run::record_path(&kept);
    if record.exists() {
        std::fs::rename(&record, &kept_record).map_err(|source| write_error(&kept_record, source))?;
    } else if let Err(error) = std::fs::remove_file(&kept_record) {
        if error.kind() != std::io::ErrorKind::NotFound {
            return Err(write_error(&kept_record, error));
        }
    }
    info!(
        events,
        "the results already at {} are not this run's: they are kept as {}",
        results.display(),
        kept.display()
    );
    Ok(())
}

/// Removes what `set_aside` moved, once the restart's own results are in place.
fn drop_set_aside(results: &std::path::Path) -> Result<(), EvalError> {
    let aside = set_aside_path(results);
    for path in [complete_run::record_path(&aside), aside] {
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(write_error(&path, error)),
            _ => {}
        }
    }
    Ok(())
}

fn write_error(path: &std::path::Path, source: std::io::Error) -> EvalError {
    EvalError::Write { path: path.display().to_string(), source }
}

/// Refuses to mix two runs' results in one file.
fn refuse_if_different(
    options: &EvaluateOptions,
    recorded: &Map<String, Value>,
    current: &VerdictSettings,
) -> Result<(), EvalError> {
    let differences = resume::differences_from(recorded, current);
    let path = Journal::path(&options.results).display().to_string();
    if !differences.files.is_empty() {
        let also = if differences.settings.is_empty() {
            String::new()
        } else {
            format!("; its settings differ too ({})", differences.settings.join("; "))
        };
        return Err(InputError::ResumeChanged { path, changed: differences.files.join("; "), also }.into());
    }
    if differences.is_empty() {
        return Ok(());
    }
    Err(InputError::ResumeMismatch { path, differences: differences.settings.join("; ") }.into())
}

/// What the workers found on this machine.
#[derive(Debug)]
struct Machine {
    isolation: Isolation,
    facts: DriverFacts,
    accounting: Accounting,
    worker_cpus: Vec<usize>,
    /// The Python packages candidates can import and read.
    packages: String,
    /// The settings that decide the verdicts, the sandbox level reached among them.
    settings: VerdictSettings,
}

/// The journal an earlier run of the same command left to go on with, and the settings
/// it recorded.
enum Earlier {
    /// An interrupted run's.
    Interrupted(Map<String, Value>),
    /// A complete run's results, with the samples left unjudgeable for want of expected
    /// outputs taken out to run again (`CompleteRun::reopen`, which says so).
    Reopened(Map<String, Value>),
}

impl Earlier {
    fn settings(&self) -> &Map<String, Value> {
        match self {
            Earlier::Interrupted(settings) | Earlier::Reopened(settings) => settings,
        }
    }
}

/// The workers up, and the journal open: a new one, or an earlier run's.
struct Started {
    prepared: Prepared,
    pool: Pool,
    machine: Machine,
    calibrated: Vec<Option<Duration>>,
    journal: Journal,
    /// What an interrupted run had decided.
    resumed: Option<Recorded>,
    /// The expected outputs to compute on the workers, ahead of the samples.
    recordings: Recordings,
}

impl Started {
    async fn new(
        options: &EvaluateOptions,
        mut prepared: Prepared,
        earlier: Option<Earlier>,
        interrupt: &CancellationToken,
        events: &EventSink,
    ) -> Result<Started, EvalError> {
        let resumed = match &earlier {
            Some(earlier) => {
                refuse_if_different(options, earlier.settings(), &prepared.settings)?;
                Journal::recorded(&options.results, prepared.total)?
            }
            None => None,
        };
        let mut pool_options = options.workers.pool_options(prepared.interpreter.clone())?;
        pool_options.shown = prepared.toolchains.shown();
        // The workers start, on a task of their own, while the problems' expected outputs
        // are read from the cache, which would otherwise wait for them.
        let starting = tokio::spawn(Pool::start(pool_options.clone()));
        // Calibrating times every problem's canonical solution on its tests.
        let only = options.calibrate.is_none().then_some(&prepared.covered);
        let toolchain = &pool_options.interpreter;
        let problems = Arc::make_mut(&mut prepared.problems);
        let mut recordings = Recordings::plan(problems, &options.set, &options.cache_dir, toolchain, only, events);
        let mut pool = starting.await.expect("starting the workers does not panic")?;
        let calibrated = match options.calibrate {
            // Which runs the tests, so they must all be known first: computed now, the run
            // has none left to compute.
            Some(factor) => {
                let calibrating = async {
                    let problems = Arc::make_mut(&mut prepared.problems);
                    recordings.compute(problems, &mut pool, interrupt, events).await?;
                    let problems = &prepared.problems;
                    canonical::calibrate(
                        &mut pool,
                        problems,
                        &prepared.toolchains,
                        options.workers.timeout,
                        factor,
                        interrupt,
                        events,
                    )
                    .await
                };
                match calibrating.await {
                    Ok(calibrated) => calibrated,
                    Err(error) => {
                        pool.stop().await;
                        return Err(error);
                    }
                }
            }
            None => vec![None; prepared.problems.problems.len()],
        };
        if interrupt.is_cancelled() {
            pool.stop().await;
            return Err(EvalError::Interrupted { phase: "starting the workers" });
        }
        let isolation = pool.isolation().clone();
        tracing::info!(jobs = options.workers.jobs, sandbox = %isolation.level, facts = ?pool.facts(), "workers ready");
        let settings = VerdictSettings { sandbox: Some(isolation.level), ..prepared.settings.clone() };
        let journal = match (&resumed, &earlier) {
            (Some(recorded), Some(earlier)) => {
                refuse_if_different(options, earlier.settings(), &settings)?;
                if recorded.decided() > 0 && matches!(earlier, Earlier::Interrupted(_)) {
                    info!(
                        events,
                        "resuming: {} of {} samples already have results",
                        recorded.decided(),
                        prepared.total
                    );
                }
                Journal::resume(&options.results, recorded)
            }
            _ => {
                resume::record(&options.results, &settings)?;
                Journal::create(&options.results)
            }
        }
        .map_err(|source| write_error(&Journal::path(&options.results), source))?;
        warn_about_isolation(&isolation, pool.facts().syscall_filter, events);
        describe::warn_about_other_judges(&isolation, &prepared.problems, &prepared.toolchains, events);
        let machine = Machine {
            facts: pool.facts(),
            accounting: pool.accounting().clone(),
            worker_cpus: pool.worker_cpus().to_vec(),
            packages: describe::describe_packages(isolation.level, &options.workers.allowed_packages),
            isolation,
            settings,
        };
        Ok(Started { prepared, pool, machine, calibrated, journal, resumed, recordings })
    }
}

/// The run over: time-outs run again if asked, and the results written if complete.
struct Concluded {
    tally: Tally,
    /// The results' lines, gathered as they were written: empty for a run that stopped.
    gathered: Gathered,
    stopped: Option<Stopped>,
    /// `(samples, changed)` of the time-outs run again (see `timeouts`).
    retried: Option<(usize, usize)>,
    /// The floors that raised the limit of a time-out run again, by task id.
    floors: BTreeMap<String, Duration>,
    /// The problems judged in process by the fallback (see `fallback`).
    in_process: Vec<String>,
}

impl Concluded {
    async fn new(
        options: &EvaluateOptions,
        prepared: &Prepared,
        ran: Ran,
        interrupt: &CancellationToken,
        events: &EventSink,
    ) -> Result<Concluded, EvalError> {
        let Ran { mut pool, mut journal, timed_out, ending, .. } = ran;
        let total = prepared.total;
        let partial = journal.file().to_owned();
        let mut recorded = journal.read(total)?;
        let mut tally = recorded.tally();
        let decided = recorded.decided();
        let stop = |errors: u64, cause: String, done: usize| Stopped::Infrastructure {
            errors,
            cause,
            done,
            total,
            partial: partial.clone(),
        };
        let interrupted = |done: usize, computing_expected: bool| Stopped::Interrupted {
            done,
            total,
            partial: partial.clone(),
            computing_expected,
        };
        let mut stopped = if ending.interrupted {
            Some(interrupted(decided, ending.computing_expected))
        } else if let Some(error) = ending.write_failure {
            Some(stop((total - decided) as u64, passk_runner::error_chain(&error), decided))
        } else if let Some(error) = ending.pool_fault {
            Some(stop((total - decided) as u64, passk_runner::error_chain(&error), decided))
        } else if tally.infrastructure_errors() > 0 {
            Some(stop(tally.infrastructure_errors(), "see the `infrastructure` lines of the results".into(), decided))
        } else {
            ending.fed?;
            if decided != total {
                return Err(InputError::Changed { path: prepared.samples.name().to_owned(), line: decided }.into());
            }
            None
        };

        let mut retried = None;
        let mut floors = BTreeMap::new();
        let mut timed_out = timed_out;
        if stopped.is_none() && !timed_out.is_empty() {
            let (problems, factor) = (&prepared.problems, options.set.time_limit_factor);
            match canonical::floors(&mut pool, problems, &prepared.toolchains, &timed_out.problems(), factor, interrupt)
                .await
            {
                Ok(measured) => {
                    let raised = timed_out.keep(&measured, options.workers.timeout, options.retry_timeouts);
                    floors =
                        raised.into_iter().map(|(at, floor)| (problems.problems[at].task_id.clone(), floor)).collect();
                }
                Err(EvalError::Interrupted { .. }) => stopped = Some(interrupted(decided, false)),
                Err(error) => return Err(error),
            }
        }
        if stopped.is_none() && !timed_out.is_empty() {
            if floors.is_empty() {
                info!(events, "running the samples that timed out again, one at a time");
            } else {
                let named: Vec<String> =
                    floors.iter().map(|(task_id, floor)| format!("{task_id}: {:.1} s", floor.as_secs_f64())).collect();
                info!(
                    events,
                    "running the samples that timed out again, one at a time: those of {} under {} x the canonical \
                     solution's time ({})",
                    passk_report::words::plural(floors.len(), "problem"),
                    options.set.time_limit_factor,
                    passk_report::words::first_few(&named, 5)
                );
            }
            let verdicts = timeouts::run_again(&mut pool, &timed_out, interrupt).await;
            let changed =
                verdicts.iter().filter(|(_, verdict)| verdict.status != passk_runner::Status::Timeout).count();
            for (index, verdict) in &verdicts {
                let floor = timed_out.raised(*index);
                journal.amend(&recorded, *index, verdict, |marks| {
                    marks.retried = Some(true);
                    marks.retried_limit = floor.map(|floor| floor.as_secs_f64());
                })?;
            }
            recorded = journal.read(total)?;
            tally = recorded.tally();
            retried = Some((timed_out.len(), changed));
            let errors = tally.infrastructure_errors();
            if interrupt.is_cancelled() {
                // The retries decided are kept; the rest run on resume.
                stopped = Some(interrupted(recorded.decided(), false));
            } else if errors > 0 {
                let cause = "see the `infrastructure` lines of the results".into();
                stopped = Some(stop(errors, cause, recorded.decided()));
            }
        }
        let unjudgeable = tally.unjudgeable_problems();
        // A problem judged in process before an interrupt may have samples left to judge.
        let fell_back_before = !recorded.judged_in_process().is_empty();
        if stopped.is_none() && (fell_back_before || !unjudgeable.is_empty()) {
            let ended = fallback::decide(
                &mut pool,
                prepared,
                &mut journal,
                &recorded,
                options.extract,
                &unjudgeable,
                options.fallback,
                interrupt,
                events,
            )
            .await?;
            recorded = journal.read(total)?;
            tally = recorded.tally();
            if ended == fallback::Fallback::Interrupted {
                stopped = Some(interrupted(recorded.decided(), false));
            } else if tally.infrastructure_errors() > 0 {
                let cause = "see the `infrastructure` lines of the results".into();
                stopped = Some(stop(tally.infrastructure_errors(), cause, recorded.decided()));
            }
        }
        // Every phase that runs programs is over.
        pool.stop().await;
        // The journal says which problems were judged in process, in whichever run.
        let judged_in_process = recorded.judged_in_process();
        let in_process: Vec<String> = prepared
            .problems
            .problems
            .iter()
            .filter(|problem| judged_in_process.contains(&problem.task_id))
            .map(|problem| problem.task_id.clone())
            .collect();
        let mut gathered = Gathered::new(options.uncertainty.cluster_by.as_deref());
        if stopped.is_none() {
            journal.finish(&recorded, &mut gathered)?;
            resume::clear(&options.results).map_err(|source| write_error(&options.results, source))?;
            drop_set_aside(&options.results)?;
        }
        Ok(Concluded { tally, gathered, stopped, retried, floors, in_process })
    }

    /// Prints the table, writes the summary, and records a complete run for the next.
    #[allow(clippy::too_many_arguments)]
    fn report(
        self,
        options: &EvaluateOptions,
        prepared: &Prepared,
        verdict_settings: VerdictSettings,
        mut run: RunFacts,
        footer: Vec<(String, String)>,
        clock: Instant,
        events: &EventSink,
    ) -> Result<(), EvalError> {
        let Concluded { tally, gathered, stopped, retried, floors, in_process } = self;
        let complete = stopped.is_none();
        let unjudgeable = tally.unjudgeable_problems();
        let groups = gathered.groups(&task_ids(&tally));
        let scores = scores_of(&tally, complete, groups.as_ref(), options)?;
        run.retried_timeouts = retried.map(|(samples, changed)| RetriedTimeouts { samples, changed });
        if !floors.is_empty() {
            let floors = floors.into_iter().map(|(task_id, floor)| (task_id, json!(floor.as_secs_f64())));
            run.timeout_floors = Some(floors.collect());
        }
        let mut footer = footer;
        footer.extend(describe::fallback(&in_process));
        run.judged_in_process = in_process;
        let settings = to_map(&SummarySettings {
            verdicts: verdict_settings.clone(),
            results: options.results.display().to_string(),
            k: options.ks.clone(),
            jobs: options.workers.jobs,
            dedup: options.dedup,
        });
        let run = to_map(&run);
        let problems = &prepared.problems;
        let subset = (prepared.covered.len() < problems.problems.len()).then(|| Subset {
            of: problems.problems.len(),
            missing: samples::missing_task_ids(problems, &prepared.covered),
        });
        let covers = Some(Coverage { samples: prepared.total, problems: prepared.covered.len() });
        let report = Report { subset, tally: &tally, scores: &scores, complete, settings, run, footer, covers };
        publish(&report, &gathered, options, prepared.report.as_ref(), events)?;
        if let Some(hint) = prepared.chat_hint() {
            warning!(events, "{hint}");
        }
        if let Some(hint) = prepared.language_hint() {
            warning!(events, "{hint}");
        }
        if complete {
            let results_sha256 =
                provenance::sha256_file(&options.results).map_err(|source| write_error(&options.results, source))?;
            let Report { settings, run, footer, subset, .. } = report;
            let verdict_settings = to_map(&verdict_settings);
            CompleteRun { verdict_settings, results_sha256, settings, run, footer, subset }.save(&options.results)?;
        }
        match stopped {
            None if !unjudgeable.is_empty() => Err(EvalError::Unjudgeable {
                problems: unjudgeable,
                why: UnjudgeableBecause::of(prepared.problems.format),
            }),
            None => {
                info!(events, "results: {} ({:.1} s)", options.results.display(), clock.elapsed().as_secs_f64());
                Ok(())
            }
            Some(stopped) => Err(EvalError::Stopped(stopped)),
        }
    }
}

/// Hands the summary to `events`, and writes the JSON summary and the report document
/// where they are asked for.
fn publish(
    report: &Report<'_>,
    gathered: &Gathered,
    options: &EvaluateOptions,
    document: Option<&ReportPath>,
    events: &EventSink,
) -> Result<(), EvalError> {
    events.event(Event::Summary(report));
    if let Some(path) = &options.summary {
        report.write_json(path).map_err(|source| write_error(path, source))?;
    }
    if let Some(target) = document {
        let written = document::write_if_complete(
            target,
            "passk evaluate",
            report,
            &options.results,
            gathered,
            &options.uncertainty,
        )?;
        match written {
            document::Written::Report => info!(events, "report: {}", target.path.display()),
            document::Written::NothingToReport => {
                warning!(events, "no report written to {}: there is no pass@k to report", target.path.display())
            }
        }
    }
    Ok(())
}

/// The run's scores. A shard of more shards than problems may hold none: it has nothing
/// to score, and its empty results still complete the run for `passk merge`.
fn scores_of(
    tally: &Tally,
    complete: bool,
    groups: Option<&scores::Groups>,
    options: &EvaluateOptions,
) -> Result<scores::Scores, EvalError> {
    if options.shard.is_some() && tally.counts().is_empty() {
        return Ok(scores::Scores::default());
    }
    Ok(scores::of_tally(tally, complete, groups, &options.ks, &options.uncertainty)?)
}

/// The task ids the tally counts, in its order.
fn task_ids(tally: &Tally) -> Vec<String> {
    tally.counts().iter().map(|(task_id, _)| task_id.clone()).collect()
}

/// What happened during the run, as opposed to what was asked for.
fn run_facts(
    Counts { executions, reused }: Counts,
    started_at: &str,
    clock: Instant,
    resumed_from: usize,
    machine: &Machine,
) -> RunFacts {
    let worker_cpus = &machine.worker_cpus;
    let facts = machine.facts;
    RunFacts {
        executions,
        reused,
        harness_peak_rss_kib: peak_rss_kib(),
        started_at: started_at.to_owned(),
        finished_at: provenance::now(),
        seconds: (clock.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        cpus: provenance::cpus(),
        worker_cpus: (!worker_cpus.is_empty()).then(|| worker_cpus.clone()),
        resumed_from,
        syscall_filter: facts.syscall_filter,
        pid_namespace_per_sample: facts.pid_namespace_per_sample,
        ipc_namespace_per_sample: facts.ipc_namespace_per_sample,
        network_namespace_per_sample: facts.network_namespace_per_sample,
        fresh_tmp_per_sample: facts.fresh_tmp_per_sample,
        fresh_shm_per_sample: facts.fresh_shm_per_sample,
        cgroups: machine.accounting.to_json(),
        sandbox_refused: describe::refused(&machine.isolation),
        packages: machine.packages.clone(),
        calibrated_timeouts: None,
        retried_timeouts: None,
        timeout_floors: None,
        judged_in_process: Vec::new(),
    }
}

/// The most memory this process's own address space has held at once, in KiB, or
/// None where /proc does not say. (getrusage's maximum would also count what the
/// process that started passk held when it forked, which survives the exec.)
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
