//! Problems' own canonical solutions, run: `validate`, which checks a problem set before
//! it is used, `--calibrate`, which sets each problem's time limit from
//! how long its canonical solution takes here (a floor plus a factor of it, as evalplus
//! does), so that a slow problem is not failed for being slow on a busy machine; and the
//! floors against which time-outs stand (`floors`), which make that so by default.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use passk_runner::{Batch, CancellationToken, Candidate, Job, JobLimits, Pool, Program, Status, Tests, Verdict};
use tokio::sync::mpsc;

use passk_formats::problems::ProblemSet;
use passk_report::words::{agree, plural};

use crate::error::EvalError;
use crate::events::{warning, EventSink};
use crate::languages::Toolchains;

/// How many times each canonical solution runs when calibrating; the slowest counts.
const CALIBRATION_RUNS: usize = 2;
/// The least time a canonical solution gets while it is being measured.
const CALIBRATION_LIMIT: Duration = Duration::from_secs(30);

/// Runs every problem's canonical solution `runs` times, each within `timeout` (the
/// pool's own if None); returns, per problem (in set order), its verdicts, or None for
/// a problem without one.
pub async fn run(
    pool: &mut Pool,
    problems: &ProblemSet,
    toolchains: &Toolchains,
    runs: usize,
    timeout: Option<Duration>,
    interrupt: &CancellationToken,
) -> Result<Vec<Option<Vec<Verdict>>>, EvalError> {
    let programs = problems.problems.iter().map(|problem| {
        let solution = problem.canonical_solution.as_ref()?;
        Some(toolchains.program_of(problem, &Candidate::Completion(solution.clone())))
    });
    let batch = pool.batch();
    run_programs(pool, batch, programs.collect(), runs, timeout, interrupt).await
}

/// Runs each program `runs` times as `batch` on `pool`, as `run` does; returns the
/// verdicts in the same order, None where there is no program. Stops when `interrupt`
/// is cancelled.
pub async fn run_programs(
    pool: &mut Pool,
    batch: Batch,
    programs: Vec<Option<Program>>,
    runs: usize,
    timeout: Option<Duration>,
    interrupt: &CancellationToken,
) -> Result<Vec<Option<Vec<Verdict>>>, EvalError> {
    let (job_tx, job_rx) = mpsc::channel(programs.len() * runs + 1);
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    for (index, program) in programs.iter().enumerate() {
        let Some(program) = program else { continue };
        for _ in 0..runs {
            job_tx
                .send(Job { program: program.clone(), tag: index, limits: JobLimits::timeout(timeout) })
                .await
                .expect("room for every job");
        }
    }
    drop(job_tx);
    pool.run(batch, job_rx, verdict_tx, interrupt.clone()).await?;
    if interrupt.is_cancelled() {
        return Err(EvalError::Interrupted { phase: "running canonical solutions" });
    }
    let mut verdicts: Vec<Option<Vec<Verdict>>> = vec![None; programs.len()];
    while let Ok((index, verdict)) = verdict_rx.try_recv() {
        verdicts[index].get_or_insert_with(Vec::new).push(verdict);
    }
    Ok(verdicts)
}

/// Each problem's limit: `floor + factor × the slowest run of its canonical solution`.
/// A problem without a passing canonical solution keeps `floor`, with a warning.
pub async fn calibrate(
    pool: &mut Pool,
    problems: &ProblemSet,
    toolchains: &Toolchains,
    floor: Duration,
    factor: f64,
    interrupt: &CancellationToken,
    events: &EventSink,
) -> Result<Vec<Option<Duration>>, EvalError> {
    // Measured with time to spare, so that a slow problem is measured, not cut short.
    let generous = CALIBRATION_LIMIT.max(floor * 10);
    let runs = run(pool, problems, toolchains, CALIBRATION_RUNS, Some(generous), interrupt).await?;
    let mut uncalibrated = Vec::new();
    let limits = runs
        .iter()
        .zip(&problems.problems)
        .map(|(verdicts, problem)| match verdicts {
            Some(verdicts) if verdicts.iter().all(Verdict::passed) => {
                let slowest = verdicts.iter().map(|v| v.duration).fold(0.0, f64::max);
                Some(floor + Duration::from_secs_f64(factor * slowest))
            }
            _ => {
                uncalibrated.push(problem.task_id.clone());
                None
            }
        })
        .collect();
    if !uncalibrated.is_empty() {
        warning!(
            events,
            "{} {} the plain --timeout, having no passing canonical solution to calibrate from (run \
             `passk validate`): {}",
            plural(uncalibrated.len(), "problem"),
            agree(uncalibrated.len(), "keeps", "keep"),
            uncalibrated.join(", ")
        );
    }
    Ok(limits)
}

/// The floor of each problem at `positions`: the least limit against which a time-out of
/// its samples stands, `factor` x its canonical solution's time, run alone with time to
/// spare, as EvalPlus sets each input's limit. A problem whose tests are calls has none
/// here, since their limits come from the canonical solution's times already; nor does
/// one without a canonical solution that passes.
pub async fn floors(
    pool: &mut Pool,
    problems: &ProblemSet,
    toolchains: &Toolchains,
    positions: &BTreeSet<usize>,
    factor: f64,
    interrupt: &CancellationToken,
) -> Result<HashMap<usize, Duration>, EvalError> {
    let programs: Vec<Option<Program>> = positions
        .iter()
        .map(|&position| {
            let problem = &problems.problems[position];
            let solution = problem.canonical_solution.as_ref()?;
            (!matches!(problem.code.tests, Tests::Calls(_)))
                .then(|| toolchains.program_of(problem, &Candidate::Completion(solution.clone())))
        })
        .collect();
    if programs.iter().all(Option::is_none) {
        return Ok(HashMap::new());
    }
    let generous = CALIBRATION_LIMIT.max(pool.options().timeout * 10);
    let alone = Batch { slots: 1, ..pool.batch() };
    let runs = run_programs(pool, alone, programs, 1, Some(generous), interrupt).await?;
    Ok(positions
        .iter()
        .zip(runs)
        .filter_map(|(&position, verdicts)| {
            let verdict = verdicts?.into_iter().next().filter(Verdict::passed)?;
            Some((position, Duration::from_secs_f64(factor * verdict.duration)))
        })
        .collect())
}

/// What `validate` finds: the canonical solutions that fail, those close to the time
/// limit, and the problems without one, each by task id, in set order.
#[derive(Debug, Default)]
pub struct Validation {
    /// `(task_id, status, detail)`.
    pub failing: Vec<(String, Status, String)>,
    /// `(task_id, seconds)` of a canonical solution that took over `close` of the limit.
    pub slow: Vec<(String, f64)>,
    pub missing: Vec<String>,
}

/// Runs every canonical solution once, in `toolchains` (see `Toolchains::for_set`):
/// whether each passes, and comfortably.
pub async fn validate(
    pool: &mut Pool,
    problems: &ProblemSet,
    toolchains: &Toolchains,
    close: f64,
) -> Result<Validation, EvalError> {
    let timeout = pool.options().timeout.as_secs_f64();
    // Ctrl-C ends `validate` at once: it keeps nothing, and the reaper stops its workers.
    let runs = run(pool, problems, toolchains, 1, None, &CancellationToken::new()).await?;
    let mut found = Validation::default();
    for (verdicts, problem) in runs.iter().zip(&problems.problems) {
        let task_id = problem.task_id.clone();
        match verdicts.as_ref().and_then(|v| v.first()) {
            None => found.missing.push(task_id),
            Some(verdict) if !verdict.passed() => {
                let detail =
                    if verdict.status == Status::Timeout { "timed out".to_owned() } else { verdict.detail.clone() };
                found.failing.push((task_id, verdict.status, detail));
            }
            // --timeout bounds the whole run only where the tests are one program: each
            // standard-input test has a limit of its own, and each call one from the
            // canonical solution's time, while the verdict's time is of them all.
            Some(verdict) if matches!(problem.code.tests, Tests::Check(_)) && verdict.duration > close * timeout => {
                found.slow.push((task_id, verdict.duration));
            }
            Some(_) => {}
        }
    }
    Ok(found)
}
