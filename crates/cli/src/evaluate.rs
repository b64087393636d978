//! `passk evaluate`: run every sample against its problem's tests and score the lot.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use passk_runner::cgroup::Accounting;
use passk_runner::{
    CancellationToken, DriverFacts, Interpreter, Isolation, Job, Level, Limits, Pool, PoolOptions, Program,
    SandboxMode, Status, Verdict, VerdictMode,
};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use crate::canonical;
use crate::dedup::{self, Dedup, Key, Offer, Sample};
use crate::input::{self, InputError, ProblemSet};
use crate::jsonl::JsonlReader;
use crate::lock::ResultsLock;
use crate::output::LineWriter;
use crate::provenance;
use crate::report::{Report, Subset, Tally};
use crate::resume::{self, Leftover};
use crate::retry::{self, TimedOut};
use crate::CommandError;

/// How many samples may be read ahead of the last one written. Results are written in
/// the samples' order, so everything after a slow sample waits in memory; this bound
/// keeps that memory flat, and is wide enough that the other workers go on through a
/// sample's whole time limit.
const READ_AHEAD: usize = 4096;

/// Bytes of each output stream kept per candidate, for the debug log; the rest is read
/// and discarded.
pub const OUTPUT_CAP: usize = 4 * 1024;

#[derive(Debug)]
pub struct EvaluateOptions {
    pub samples: PathBuf,
    pub problems: String,
    pub ks: Vec<u64>,
    pub jobs: usize,
    pub timeout: Duration,
    pub sandbox: SandboxMode,
    pub verdicts: VerdictMode,
    pub limits: Limits,
    /// Run each distinct program once and give its verdict to every identical sample.
    pub dedup: bool,
    pub python: OsString,
    pub results: PathBuf,
    pub summary: Option<PathBuf>,
    /// Start over even if an interrupted run left results to resume.
    pub restart: bool,
    /// Run samples that timed out again at the end, alone.
    pub retry_timeouts: bool,
    /// Evaluate samples that cover only some of the problem set's problems.
    pub partial: bool,
    /// Give each problem `timeout + factor × its canonical solution's runtime`.
    pub calibrate: Option<f64>,
}

/// How a run that got under way ended, when it did not complete.
#[derive(Debug)]
pub enum Stopped {
    /// Ctrl-C or SIGTERM.
    Interrupted { done: usize, total: usize, partial: PathBuf },
    /// Samples got no verdict through faults of the machine.
    Infrastructure { errors: u64, cause: String, done: usize, total: usize, partial: PathBuf },
}

/// A sample read and checked, with the program it stands for.
struct Pending {
    sample: Sample,
    key: Key,
    program: Program,
    /// Its problem's position in the problem set.
    problem: usize,
}

/// What travels with a job, so its verdict can be written in the samples' order.
struct Tag {
    sample: Sample,
    key: Key,
    /// Kept only to run it again, under the same limit, if it times out (with
    /// --retry-timeouts).
    program: Option<(Program, Option<Duration>)>,
}

pub async fn evaluate(options: EvaluateOptions) -> Result<(), CommandError> {
    let started_at = provenance::now();
    let started = Instant::now();
    if same_file(&options.samples, &options.results) {
        return Err(InputError::ResultsOverSamples { path: options.results.display().to_string() }.into());
    }
    let _lock = ResultsLock::acquire(&options.results)?;
    if let Some(summary) = &options.summary {
        crate::output::check_writable(summary).map_err(|source| InputError::Unwritable {
            option: "--summary",
            path: summary.display().to_string(),
            source,
        })?;
    }
    // Every line is checked before anything runs, so a bad line late in a large file
    // costs nothing and never leaves half a results file behind. Meanwhile the
    // interpreter is found; a bad input is still reported first.
    let checking = {
        let (problems, samples, partial) = (options.problems.clone(), options.samples.clone(), options.partial);
        tokio::task::spawn_blocking(move || {
            let problems = ProblemSet::load(&problems)?;
            let (total, covered) = count_valid_samples(&samples, &problems)?;
            if covered.len() < problems.problems.len() && !partial {
                return Err(missing_problems(&samples, &problems, &covered));
            }
            let samples_sha256 = provenance::sha256_file(&samples)
                .map_err(|source| InputError::Open { path: samples.display().to_string(), source })?;
            Ok::<_, InputError>((Arc::new(problems), total, samples_sha256, covered))
        })
    };
    let interpreter = Interpreter::resolve(&options.python).await;
    let (problems, total, samples_sha256, covered) = checking.await.expect("checking the input does not panic")?;
    let interpreter = interpreter?;
    tracing::info!(python = %interpreter.executable.display(), version = %interpreter.version, "interpreter resolved");

    let mut settings = settings(&options, &problems, &samples_sha256, &interpreter);
    if options.restart {
        resume::clear(&options.results).map_err(|source| write_error(&options.results, source))?;
    }
    let leftover = resume::leftover(&options.results)?;
    if let Some(leftover) = &leftover {
        // The sandbox level is compared once the workers are up.
        let mut recorded = leftover.settings.clone();
        recorded.remove("sandbox");
        refuse_if_different(&options.results, &recorded, &settings)?;
    }

    let helper = std::env::current_exe().map_err(CommandError::OwnExecutable)?;
    let pool_options = PoolOptions {
        interpreter: interpreter.clone(),
        jobs: options.jobs,
        timeout: options.timeout,
        limits: options.limits,
        sandbox: options.sandbox,
        helper,
        output_cap: OUTPUT_CAP,
        verdicts: options.verdicts,
    };
    let calibrated = match options.calibrate {
        Some(factor) => canonical::calibrate(pool_options.clone(), &problems, options.timeout, factor).await?,
        None => vec![None; problems.problems.len()],
    };
    let pool = Pool::start(pool_options.clone()).await?;
    let isolation = pool.isolation().clone();
    let facts = pool.facts();
    let accounting = pool.accounting().clone();
    let worker_cpus = pool.worker_cpus().to_vec();
    tracing::info!(jobs = options.jobs, sandbox = %isolation.level, ?facts, "workers ready");
    settings.insert("sandbox".into(), json!(isolation.level));
    let (results, done, tally) = match leftover {
        Some(Leftover { settings: recorded, done, end, tally }) => {
            refuse_if_different(&options.results, &recorded, &settings)?;
            if done > 0 {
                eprintln!("resuming: {done} of {total} samples already have results");
            }
            let results = LineWriter::resume(&options.results, end).map_err(|s| write_error(&options.results, s))?;
            (results, done, tally)
        }
        None => {
            resume::record(&options.results, &settings)?;
            let results = LineWriter::create(&options.results).map_err(|s| write_error(&options.results, s))?;
            (results, 0, Tally::default())
        }
    };
    warn_about_isolation(&isolation, facts.syscall_filter);

    let (job_tx, job_rx) = mpsc::channel(options.jobs * 4);
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    let (sample_tx, mut sample_rx) = mpsc::channel(options.jobs * 4);
    let cancel = CancellationToken::new();
    let running = tokio::spawn(pool.run(job_rx, verdict_tx, cancel.clone()));
    let feeding = {
        let problems = problems.clone();
        let path = options.samples.clone();
        tokio::task::spawn_blocking(move || feed(&path, &problems, done, total, &sample_tx))
    };

    let progress = progress_bar(total as u64, done as u64);
    let mut output = Output { results, tally, waiting: BTreeMap::new(), next: done, progress };
    let mut dedup = Dedup::new(options.dedup);
    let mut job_tx = Some(job_tx);
    let mut read = done;
    let mut interrupted = false;
    let mut write_failure = None;
    let mut stop_signals = StopSignals::new()?;
    let mut timed_out = TimedOut::default();
    // One task owns the dedup state: it takes samples as the reader produces them and
    // verdicts as the pool produces them, and writes results in the samples' order.
    let outcome = loop {
        tokio::select! {
            () = stop_signals.next() => {
                interrupted = true;
                break Ok(());
            }
            pending = sample_rx.recv(), if job_tx.is_some() && read - output.next < READ_AHEAD => match pending {
                Some(Pending { sample, key, program, problem }) => {
                    read += 1;
                    match dedup.offer(key, sample) {
                        Offer::Run(sample) => {
                            let jobs = job_tx.as_ref().expect("open while samples come");
                            let kept = options.retry_timeouts.then(|| (program.clone(), calibrated[problem]));
                            let timeout = calibrated[problem];
                            if jobs.send(Job { program, tag: Tag { sample, key, program: kept }, timeout }).await.is_err() {
                                // The pool stopped; its error is the one to report.
                                job_tx = None;
                            }
                        }
                        Offer::Known(sample, verdict) => {
                            if let Err(error) = output.put(sample, verdict) {
                                break Err(error);
                            }
                        }
                        Offer::Waiting => {}
                    }
                }
                // Every sample is in: closing the queue lets the pool finish.
                None => job_tx = None,
            },
            verdict = verdict_rx.recv() => match verdict {
                Some((Tag { sample, key, program }, verdict)) => {
                    let mut put = dedup.settle(key, &verdict).into_iter().map(|twin| (twin, verdict.clone())).collect::<Vec<_>>();
                    put.push((sample, verdict));
                    if let (Some((program, timeout)), true) = (program, put[0].1.status == Status::Timeout) {
                        for (sample, _) in &put {
                            timed_out.note(sample.index, key, &program, timeout);
                        }
                    }
                    if let Err(error) = put.into_iter().try_for_each(|(sample, verdict)| output.put(sample, verdict)) {
                        break Err(error);
                    }
                }
                None => break Ok(()),
            },
        }
    };
    if let Err(error) = outcome {
        write_failure = Some(error);
    }
    // Whatever ended the loop, no candidate outlives it.
    cancel.cancel();
    drop(job_tx);
    let pool_fault = running.await.expect("the pool does not panic").err();
    drop(sample_rx);
    let fed = feeding.await.expect("feeding samples does not panic");
    let Output { results, mut tally, progress, next, .. } = output;
    progress.finish_and_clear();
    let partial = results.partial().to_owned();

    let mut stopped = if interrupted {
        Some(Stopped::Interrupted { done: next, total, partial: partial.clone() })
    } else if let Some(error) = write_failure {
        Some(Stopped::Infrastructure {
            errors: (total - next) as u64,
            cause: passk_runner::error_chain(&error),
            done: next,
            total,
            partial: partial.clone(),
        })
    } else if let Some(error) = pool_fault {
        Some(Stopped::Infrastructure {
            errors: tally.infrastructure_errors() + (total - next) as u64,
            cause: passk_runner::error_chain(&error),
            done: next,
            total,
            partial: partial.clone(),
        })
    } else if tally.infrastructure_errors() > 0 {
        Some(Stopped::Infrastructure {
            errors: tally.infrastructure_errors(),
            cause: "see the `infrastructure` lines of the results".into(),
            done: next,
            total,
            partial: partial.clone(),
        })
    } else {
        fed?;
        if next != total {
            return Err(InputError::Changed { path: options.samples.display().to_string(), line: next }.into());
        }
        None
    };

    let results_path = results.path().to_owned();
    let mut retried = None;
    if stopped.is_none() && !timed_out.is_empty() {
        eprintln!("running the samples that timed out again, one at a time");
        let outcome = retry::retry(pool_options, timed_out, results.partial()).await?;
        tally = outcome.tally;
        retried = Some((outcome.samples, outcome.changed));
        let errors = tally.infrastructure_errors();
        if errors > 0 {
            stopped = Some(Stopped::Infrastructure {
                errors,
                cause: "see the `infrastructure` lines of the results".into(),
                done: total - errors as usize,
                total,
                partial: partial.clone(),
            });
        }
    }
    let complete = stopped.is_none();
    if complete {
        results.finish().map_err(|source| write_error(&results_path, source))?;
        resume::clear(&results_path).map_err(|source| write_error(&results_path, source))?;
    }
    let unjudgeable = tally.unjudgeable_problems();
    let scores = if complete && unjudgeable.is_empty() { tally.score(&options.ks)? } else { Vec::new() };
    let mut run = run_facts(&dedup);
    run.insert("started_at".into(), json!(started_at));
    run.insert("finished_at".into(), json!(provenance::now()));
    run.insert("seconds".into(), json!((started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0));
    run.insert("cpus".into(), json!(provenance::cpus()));
    run.insert("worker_cpus".into(), if worker_cpus.is_empty() { Value::Null } else { json!(worker_cpus) });
    run.insert("resumed_from".into(), json!(done));
    run.insert("syscall_filter".into(), json!(facts.syscall_filter));
    run.insert("pid_namespace_per_sample".into(), json!(facts.pid_namespace_per_sample));
    run.insert("ipc_namespace_per_sample".into(), json!(facts.ipc_namespace_per_sample));
    run.insert("fresh_tmp_per_sample".into(), json!(facts.fresh_tmp_per_sample));
    run.insert("cgroups".into(), accounting.to_json());
    run.insert("sandbox_refused".into(), refused(&isolation));
    let limits: Map<String, Value> = calibrated
        .iter()
        .zip(&problems.problems)
        .filter_map(|(limit, problem)| limit.map(|limit| (problem.task_id.clone(), json!(limit.as_secs_f64()))))
        .collect();
    if options.calibrate.is_some() {
        run.insert("calibrated_timeouts".into(), Value::Object(limits));
    }
    if let Some((samples, changed)) = retried {
        run.insert("retried_timeouts".into(), json!({ "samples": samples, "changed": changed }));
    }
    settings.insert("results".into(), json!(results_path.display().to_string()));
    settings.insert("k".into(), json!(options.ks));
    settings.insert("jobs".into(), json!(options.jobs));
    settings.insert("dedup".into(), json!(options.dedup));
    let subset = (covered.len() < problems.problems.len())
        .then(|| Subset { of: problems.problems.len(), missing: missing_task_ids(&problems, &covered) });
    let report = Report {
        subset,
        tally: &tally,
        scores: &scores,
        complete,
        settings,
        run,
        footer: vec![
            ("executed".into(), format!("{} ({} identical samples reused a verdict)", dedup.executions, dedup.reused)),
            ("sandbox".into(), isolation.level.to_string()),
            ("verdicts".into(), describe_verdicts(options.verdicts, isolation.level, facts)),
            ("ipc".into(), describe_ipc(isolation.level, facts)),
            ("network".into(), describe_network(isolation.level).into()),
            ("syscalls".into(), describe_syscalls(isolation.level, facts).into()),
            ("cgroups".into(), describe_cgroups(isolation.level, &accounting)),
            ("limits".into(), describe_limits(&options, isolation.level, facts, &accounting)),
        ],
    };
    for warning in report.warnings() {
        eprintln!("warning: {warning}");
    }
    crate::print_report(&report)?;
    if let Some(path) = &options.summary {
        report.write_json(path).map_err(|source| write_error(path, source))?;
    }
    match stopped {
        None if !unjudgeable.is_empty() => Err(CommandError::Unjudgeable { problems: unjudgeable }),
        None => {
            eprintln!("results: {} ({:.1} s)", results_path.display(), started.elapsed().as_secs_f64());
            Ok(())
        }
        Some(stopped) => Err(CommandError::Stopped(stopped)),
    }
}

fn write_error(path: &Path, source: std::io::Error) -> CommandError {
    CommandError::Write { path: path.display().to_string(), source }
}

/// Refuses to mix two runs' results in one file.
fn refuse_if_different(
    results: &Path,
    recorded: &Map<String, Value>,
    current: &Map<String, Value>,
) -> Result<(), CommandError> {
    let differences = resume::differences(recorded, current);
    if differences.is_empty() {
        return Ok(());
    }
    Err(InputError::ResumeMismatch {
        path: crate::output::partial_path(results).display().to_string(),
        differences: differences.join("; "),
    }
    .into())
}

/// Ctrl-C and SIGTERM, either of which stops the run cleanly.
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn new() -> Result<StopSignals, CommandError> {
        use tokio::signal::unix::{signal, SignalKind};
        let listen = |kind| signal(kind).map_err(|source| write_error(Path::new("signal handlers"), source));
        Ok(StopSignals { interrupt: listen(SignalKind::interrupt())?, terminate: listen(SignalKind::terminate())? })
    }

    async fn next(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

/// Whether two paths name one file (false when either does not exist yet).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// How many samples the file holds, each checked, and which problems they cover.
fn count_valid_samples(path: &Path, problems: &ProblemSet) -> Result<(usize, BTreeSet<usize>), InputError> {
    let reader = JsonlReader::open(path)?;
    let source = reader.source().to_owned();
    let mut count = 0;
    let mut covered = BTreeSet::new();
    for record in reader {
        covered.insert(input::sample(&source, problems, record?)?.problem);
        count += 1;
    }
    if count == 0 {
        return Err(InputError::Empty { path: source, what: "samples" });
    }
    Ok((count, covered))
}

/// The task ids of the set's problems that no sample covers.
fn missing_task_ids(problems: &ProblemSet, covered: &BTreeSet<usize>) -> Vec<String> {
    (0..problems.problems.len())
        .filter(|index| !covered.contains(index))
        .map(|index| problems.problems[index].task_id.clone())
        .collect()
}

/// The refusal of a samples file that leaves out problems of the set, naming them.
fn missing_problems(samples: &Path, problems: &ProblemSet, covered: &BTreeSet<usize>) -> InputError {
    const NAMED: usize = 10;
    let missing = missing_task_ids(problems, covered);
    let mut named = missing[..missing.len().min(NAMED)].join(", ");
    if missing.len() > NAMED {
        named.push_str(&format!(" and {} more", missing.len() - NAMED));
    }
    InputError::MissingProblems {
        path: samples.display().to_string(),
        missing: crate::plural(missing.len(), "problem"),
        total: problems.problems.len(),
        set: problems.name.clone(),
        named,
    }
}

/// Reads every sample again, in file order, and sends on each from `skip` with its
/// program.
fn feed(
    path: &Path,
    problems: &ProblemSet,
    skip: usize,
    total: usize,
    samples: &mpsc::Sender<Pending>,
) -> Result<(), InputError> {
    let reader = JsonlReader::open(path)?;
    let source = reader.source().to_owned();
    for (index, record) in reader.enumerate() {
        // A line that was valid a moment ago and is not now means the file changed.
        let sample = input::sample(&source, problems, record?)?;
        if index >= total {
            return Err(InputError::Changed { path: source, line: sample.line });
        }
        if index < skip {
            continue;
        }
        let problem = &problems.problems[sample.problem];
        let program = Program::new(&problem.code, &sample.candidate);
        let pending = Pending {
            sample: Sample { index, fields: sample.fields },
            key: dedup::key(&program),
            program,
            problem: sample.problem,
        };
        if samples.blocking_send(pending).is_err() {
            // The run stopped; its error is the one to report.
            return Ok(());
        }
    }
    Ok(())
}

/// Results waiting for their turn, and the file they go to in the samples' order.
struct Output {
    results: LineWriter,
    tally: Tally,
    waiting: BTreeMap<usize, (Map<String, Value>, Verdict)>,
    next: usize,
    progress: ProgressBar,
}

impl Output {
    fn put(&mut self, sample: Sample, verdict: Verdict) -> Result<(), CommandError> {
        self.waiting.insert(sample.index, (sample.fields, verdict));
        while let Some((mut fields, verdict)) = self.waiting.remove(&self.next) {
            let task_id = fields.get("task_id").and_then(Value::as_str).unwrap_or_default().to_owned();
            tracing::debug!(
                sample = self.next,
                task_id,
                status = %verdict.status,
                duration = verdict.duration,
                stdout_bytes = verdict.stdout_bytes,
                stderr_bytes = verdict.stderr_bytes,
                stdout = verdict.stdout,
                stderr = verdict.stderr,
                "{}",
                verdict.detail
            );
            crate::output::record_verdict(&mut fields, &verdict);
            self.results.write(&Value::Object(fields)).map_err(|source| write_error(self.results.partial(), source))?;
            // Counted only once on disk, so the tally never claims what a crash lost.
            self.tally.add(&task_id, verdict.passed(), Some(verdict.status.as_str()));
            self.progress.inc(1);
            self.next += 1;
        }
        Ok(())
    }
}

fn progress_bar(total: u64, done: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} samples  {per_sec}  ETA {eta}")
        .expect("the template is valid");
    bar.set_style(style);
    bar.set_position(done);
    bar.reset_eta();
    bar
}

/// What happened during the run, as opposed to what was asked for.
fn run_facts(dedup: &Dedup) -> Map<String, Value> {
    let mut run = Map::new();
    run.insert("executions".into(), json!(dedup.executions));
    run.insert("reused".into(), json!(dedup.reused));
    run.insert("harness_peak_rss_kib".into(), json!(peak_rss_kib()));
    run
}

/// The most memory this process's own address space has held at once, in KiB, or
/// None where /proc does not say. (getrusage's maximum would also count what the
/// process that started passk held when it forked, which survives the exec.)
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn refused(isolation: &Isolation) -> Value {
    let refused: Map<String, Value> =
        isolation.refused.iter().map(|(level, reason)| (level.to_string(), json!(reason))).collect();
    Value::Object(refused)
}

/// One warning naming what is missing and what would enable it; louder for `none`.
fn warn_about_isolation(isolation: &Isolation, syscall_filter: bool) {
    match isolation.level {
        Level::Full => {}
        Level::None => eprintln!(
            "warning: --sandbox none: candidates run unisolated, as passk's own user, with this machine's \
             files and network open to them; use it only for code you trust"
        ),
        level => {
            let reasons: Vec<String> =
                isolation.refused.iter().map(|(level, reason)| format!("{level}: {reason}")).collect();
            let reason = reasons.join("; ");
            let exposed = if level == Level::Uid {
                "candidates run as unprivileged users of their own but can read world-readable files and reach \
                 the network"
            } else {
                "candidates run as passk's own user, can read and write its files and reach the network, and a \
                 fork bomb is not contained"
            };
            eprintln!("warning: sandbox degraded to `{level}` ({reason}); {exposed}; {}", Isolation::advice());
        }
    }
    if !syscall_filter && isolation.level != Level::None {
        eprintln!(
            "warning: this kernel refused the seccomp filter of sandbox/syscalls.toml, which stops candidates \
             from signalling other processes, making namespaces and reaching the kernel's riskier calls"
        );
    }
}

/// Who decides the verdicts, and what keeps the candidate from the judge.
fn describe_verdicts(verdicts: VerdictMode, level: Level, facts: DriverFacts) -> String {
    match verdicts {
        VerdictMode::InProcess => "in-process (the tests share the candidate's interpreter)".to_owned(),
        VerdictMode::Judge if facts.pid_namespace_per_sample => {
            "judge, out of the candidate's process (a pid namespace per sample, the judge its init)".to_owned()
        }
        VerdictMode::Judge if level == Level::None => "judge, out of the candidate's process (unisolated)".to_owned(),
        VerdictMode::Judge => {
            "judge, out of the candidate's process (same user, kept apart by the system-call filter)".to_owned()
        }
    }
}

/// Where a sample's SysV objects and POSIX message queues live.
fn describe_ipc(level: Level, facts: DriverFacts) -> String {
    if facts.ipc_namespace_per_sample {
        "a namespace per sample".to_owned()
    } else if level == Level::Full {
        "a namespace per worker, shared by its samples".to_owned()
    } else {
        "shared with the machine".to_owned()
    }
}

fn describe_network(level: Level) -> &'static str {
    if level == Level::Full {
        "a namespace per worker with only its own loopback"
    } else {
        "shared with the machine"
    }
}

fn describe_syscalls(level: Level, facts: DriverFacts) -> &'static str {
    if facts.syscall_filter {
        "filtered: what sandbox/syscalls.toml does not allow fails with EPERM"
    } else if level == Level::None {
        "not filtered (--sandbox none)"
    } else {
        "not filtered: the kernel refused the seccomp filter"
    }
}

/// The control groups per sample, and who could undo them: below `uid`, candidates run
/// as passk's own user, who owns the groups passk made.
fn describe_cgroups(level: Level, accounting: &Accounting) -> String {
    if accounting.in_force() && matches!(level, Level::Minimal | Level::None) {
        format!("{accounting} (candidates run as passk's own user, who could change these limits)")
    } else {
        accounting.to_string()
    }
}

/// The limits in force, and only those: what a level or host does not enforce is named
/// as missing rather than listed.
fn describe_limits(options: &EvaluateOptions, level: Level, facts: DriverFacts, accounting: &Accounting) -> String {
    let limits = &options.limits;
    let time = match options.calibrate {
        Some(factor) => format!("{} s + {factor} x the canonical solution's time", options.timeout.as_secs_f64()),
        None => format!("{} s", options.timeout.as_secs_f64()),
    };
    let memory = match (limits.memory_mib, accounting.in_force()) {
        (0, _) => "no memory limit".to_owned(),
        (mib, true) => format!("{mib} MiB memory"),
        (mib, false) => format!("{mib} MiB address space per process"),
    };
    // The process rlimit counts a user's processes: the slot's own at `full` and `uid`.
    let processes = if accounting.in_force() || matches!(level, Level::Full | Level::Uid) {
        format!("{} processes", limits.processes)
    } else {
        "no process limit".to_owned()
    };
    let tmp = if facts.fresh_tmp_per_sample {
        format!("{} MiB /tmp and /dev/shm, new for each sample", limits.tmp_mib)
    } else if level == Level::Full {
        format!("{} MiB /tmp per worker", limits.tmp_mib)
    } else {
        "the host's /tmp".to_owned()
    };
    format!(
        "{time}, {memory}, {processes}, {} CPU s, {} MiB files, {} open files, {tmp}",
        limits.cpu_seconds, limits.file_size_mib, limits.open_files
    )
}

/// The settings that decide the verdicts: a resumed run must match them all.
fn settings(
    options: &EvaluateOptions,
    problems: &ProblemSet,
    samples_sha256: &str,
    interpreter: &Interpreter,
) -> Map<String, Value> {
    let mut settings = Map::new();
    settings.insert("passk_version".into(), json!(env!("CARGO_PKG_VERSION")));
    settings.insert("samples".into(), json!(options.samples.display().to_string()));
    settings.insert("samples_sha256".into(), json!(samples_sha256));
    settings.insert("problems".into(), json!(problems.name));
    settings.insert("problems_sha256".into(), json!(problems.sha256));
    settings.insert("verdicts".into(), json!(options.verdicts));
    settings.insert("timeout".into(), json!(options.timeout.as_secs_f64()));
    settings.insert("limits".into(), json!(options.limits));
    settings.insert("retry_timeouts".into(), json!(options.retry_timeouts));
    settings.insert("calibrate".into(), json!(options.calibrate));
    settings.insert("python".into(), json!(interpreter.executable.display().to_string()));
    settings.insert("python_version".into(), json!(interpreter.version));
    settings
}
