//! The fallback for problems that cannot be judged out of process: tests that pass the
//! candidate what cannot cross to another process (a function of the tests' own, say).
//!
//! Whether a problem falls back depends on the problem alone, never on a sample: its
//! canonical solution is run in judge mode, and a problem whose canonical solution is
//! itself `unjudgeable` has every one of its samples judged in process instead, as the
//! reference harness runs them (each results line says `"verdicts": "in-process"`). A
//! sample that is unjudgeable where the canonical solution is not made its tests so by
//! its own answers, and fails. A problem without a canonical solution cannot be told
//! either way, and its unjudgeable samples stay so. `--no-fallback`, for users
//! (reinforcement learning) who want no sample's verdict decided in the candidate's own
//! process, judges nothing in process: a problem that would fall back keeps its
//! unjudgeable verdicts, and pass@k withheld. The canonical solutions are run all the
//! same, since a sample unjudgeable by its own doing must fail there too: else a wrong
//! candidate could withhold a whole run's pass@k and leave itself out of its problem's
//! count.
//!
//! The decision is the journal's, once made: each sample judged in process is recorded
//! the moment its verdict comes, marked `"verdicts": "in-process"`, and a problem with
//! any sample so marked falls back on resume without its canonical solution being run
//! again (on a busy machine it could time out, and tell otherwise). So an interrupted
//! run, resumed, judges the rest of that problem's samples in process, never in two
//! modes; and the problems named as judged in process are those the journal marks.

use std::collections::BTreeSet;

use passk_runner::{
    Batch, CancellationToken, Candidate, Job, JobLimits, Pool, Program, Status, Tests, Verdict, VerdictMode,
};
use tokio::sync::mpsc;

use crate::canonical;
use crate::error::EvalError;
use crate::events::{info, EventSink};

use super::prepare::Prepared;
use super::samples;
use crate::journal::{Journal, Recorded};

/// How the fallback ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Fallback {
    Done,
    /// Ctrl-C or SIGTERM while samples were judged in process: those decided are in
    /// the journal, and the resume judges the rest.
    Interrupted,
}

/// Decides anew, as the module says, the samples of the problems in `unjudgeable` (task
/// ids) and of the problems the journal already has judged in process, recording every
/// verdict in `journal`, on the run's `pool`; judges samples in process only when
/// `fall_back`.
#[allow(clippy::too_many_arguments)]
pub async fn decide(
    pool: &mut Pool,
    prepared: &Prepared,
    journal: &mut Journal,
    recorded: &Recorded,
    extract: bool,
    unjudgeable: &[String],
    fall_back: bool,
    interrupt: &CancellationToken,
    events: &EventSink,
) -> Result<Fallback, EvalError> {
    let problems = &prepared.problems;
    let decided_before = recorded.judged_in_process();
    let positions: Vec<usize> = unjudgeable
        .iter()
        .filter(|task_id| !decided_before.contains(*task_id))
        .filter_map(|task_id| problems.position(task_id))
        .collect();
    // Only tests that are code can run in process; and only a canonical solution tells.
    let canonical_programs: Vec<Option<Program>> = positions
        .iter()
        .map(|&position| {
            let problem = &problems.problems[position];
            let solution = problem.canonical_solution.as_ref()?;
            (matches!(problem.code.tests, Tests::Check(_)) && problem.language().is_none())
                .then(|| Program::new(&problem.code, &Candidate::Completion(solution.clone())))
        })
        .collect();
    let mut falls_back = decided_before;
    if canonical_programs.iter().any(Option::is_some) {
        let why = if fall_back { "to tell which fall back" } else { "to tell which samples made themselves so" };
        info!(events, "running the canonical solutions of the problems with unjudgeable samples, {why}");
        let batch = pool.batch();
        let canonical = canonical::run_programs(pool, batch, canonical_programs, 1, None, interrupt).await?;
        let mut judgeable = BTreeSet::new();
        for (&position, verdicts) in positions.iter().zip(&canonical) {
            let task_id = problems.problems[position].task_id.clone();
            match verdicts.as_ref().and_then(|v| v.first()) {
                Some(verdict) if verdict.status == Status::Unjudgeable => falls_back.insert(task_id),
                Some(verdict) if verdict.status != Status::Infrastructure => judgeable.insert(task_id),
                _ => false,
            };
        }
        for index in recorded.samples_of(&judgeable) {
            if recorded.status_of(index) == Some(Status::Unjudgeable.as_str()) {
                let verdict = own_doing(&journal.detail(recorded, index)?);
                journal.amend(recorded, index, &verdict, |marks| marks.verdicts = Some("judge".into()))?;
            }
        }
    }
    if !fall_back {
        return Ok(Fallback::Done);
    }
    // Every sample of a problem that falls back is judged in process, whatever it got
    // in judge mode, but for those the journal already has so judged.
    let indices: Vec<usize> =
        recorded.samples_of(&falls_back).into_iter().filter(|&index| !recorded.is_in_process(index)).collect();
    if indices.is_empty() {
        return Ok(Fallback::Done);
    }
    info!(
        events,
        "judging {} samples of {} in process: their tests pass what cannot cross to another process",
        indices.len(),
        passk_report::words::plural(falls_back.len(), "problem")
    );
    let programs =
        samples::programs(&prepared.samples, problems, prepared.total, &indices, extract, &prepared.toolchains)?;
    judge_in_process(pool, programs, journal, recorded, interrupt).await?;
    Ok(if interrupt.is_cancelled() { Fallback::Interrupted } else { Fallback::Done })
}

/// Runs `programs` (sample index, program) and records each verdict in the journal as
/// it comes, so that an interrupt loses none that was decided.
async fn judge_in_process(
    pool: &mut Pool,
    programs: Vec<(usize, Program)>,
    journal: &mut Journal,
    recorded: &Recorded,
    interrupt: &CancellationToken,
) -> Result<(), EvalError> {
    let (job_tx, job_rx) = mpsc::channel(programs.len() + 1);
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    for (index, program) in programs {
        job_tx.send(Job { program, tag: index, limits: JobLimits::default() }).await.expect("room for every job");
    }
    drop(job_tx);
    let mut written = Ok(());
    let record = async {
        while let Some((index, verdict)) = verdict_rx.recv().await {
            if written.is_ok() {
                written = journal.amend(recorded, index, &verdict, |marks| marks.verdicts = Some("in-process".into()));
            }
        }
    };
    let in_process = Batch { verdicts: VerdictMode::InProcess, ..pool.batch() };
    let (ran, ()) = tokio::join!(pool.run(in_process, job_rx, verdict_tx, interrupt.clone()), record);
    ran?;
    written?;
    Ok(())
}

/// The verdict of a sample whose own answers made its tests unjudgeable, from the
/// detail of its unjudgeable verdict.
pub fn own_doing(detail: &str) -> Verdict {
    let mut verdict = Verdict::infrastructure(String::new());
    verdict.status = Status::Failed;
    verdict.detail = format!(
        "{detail} (the canonical solution's tests cross to another process, so this sample's own answers made them \
         unjudgeable)"
    );
    verdict.result = "failed: cannot be judged out of process".to_owned();
    verdict
}
