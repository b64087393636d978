//! The fallback for problems that cannot be judged out of process: tests that pass the
//! candidate what cannot cross to another process (a function of the tests' own, say).
//!
//! Whether a problem falls back depends on the problem alone, never on a sample: its
//! canonical solution is run in judge mode, and a problem whose canonical solution is
//! itself `unjudgeable` has every one of its samples judged in process instead, as the
//! reference harness runs them (each results line says `"verdicts": "in-process"`). A
//! sample that is unjudgeable where the canonical solution is not made its tests so by
//! its own answers, and fails. A problem without a canonical solution cannot be told
//! either way, and its unjudgeable samples stay so. `--no-fallback` keeps every
//! unjudgeable verdict, and pass@k withheld, for users (reinforcement learning) who
//! want no sample's verdict decided in the candidate's own process.

use std::collections::BTreeSet;

use passk_runner::{CancellationToken, Candidate, PoolOptions, Program, Status, Tests, Verdict, VerdictMode};

use crate::canonical;
use crate::error::CommandError;
use crate::say::say;

use super::journal::Recorded;
use super::prepare::Prepared;
use super::samples;

/// What the fallback decided.
#[derive(Debug, Default)]
pub struct Decided {
    /// The new verdicts of the samples judged in process.
    pub verdicts: Vec<(usize, Verdict)>,
    /// The unjudgeable samples of problems whose canonical solution is judgeable.
    pub own_doing: Vec<usize>,
    /// The task ids of the problems judged in process, in set order.
    pub in_process: Vec<String>,
}

/// Decides the samples of the problems in `unjudgeable` (task ids) anew, as the module
/// says. `options` are the run's pool options, in judge mode.
pub async fn decide(
    options: &PoolOptions,
    prepared: &Prepared,
    recorded: &Recorded,
    extract: bool,
    unjudgeable: &[String],
    interrupt: &CancellationToken,
) -> Result<Decided, CommandError> {
    let problems = &prepared.problems;
    let positions: Vec<usize> = unjudgeable.iter().filter_map(|task_id| problems.position(task_id)).collect();
    // Only tests that are code can run in process; and only a canonical solution tells.
    let canonical_programs: Vec<Option<Program>> = positions
        .iter()
        .map(|&position| {
            let problem = &problems.problems[position];
            let solution = problem.canonical_solution.as_ref()?;
            matches!(problem.code.tests, Tests::Check(_))
                .then(|| Program::new(&problem.code, &Candidate::Completion(solution.clone())))
        })
        .collect();
    if canonical_programs.iter().all(Option::is_none) {
        return Ok(Decided::default());
    }
    say!("running the canonical solutions of the problems with unjudgeable samples, to tell which fall back");
    let canonical = canonical::run_programs(options.clone(), canonical_programs, 1, None, interrupt).await?;
    let mut falls_back = BTreeSet::new();
    let mut judgeable = BTreeSet::new();
    for (&position, verdicts) in positions.iter().zip(&canonical) {
        match verdicts.as_ref().and_then(|v| v.first()) {
            Some(verdict) if verdict.status == Status::Unjudgeable => falls_back.insert(position),
            Some(verdict) if verdict.status != Status::Infrastructure => judgeable.insert(position),
            _ => false,
        };
    }
    let mut decided = Decided {
        in_process: falls_back.iter().map(|&p| problems.problems[p].task_id.clone()).collect(),
        ..Decided::default()
    };
    let task_ids = |set: &BTreeSet<usize>| -> BTreeSet<String> {
        set.iter().map(|&p| problems.problems[p].task_id.clone()).collect()
    };
    for index in recorded.samples_of(&task_ids(&judgeable)) {
        if recorded.status_of(index) == Some(Status::Unjudgeable.as_str()) {
            decided.own_doing.push(index);
        }
    }
    if falls_back.is_empty() {
        return Ok(decided);
    }
    let indices = recorded.samples_of(&task_ids(&falls_back));
    say!(
        "judging {} samples of {} in process: their tests pass what cannot cross to another process",
        indices.len(),
        crate::report::plural(falls_back.len(), "problem")
    );
    let programs = samples::programs(&prepared.samples, problems, prepared.total, &indices, extract)?;
    let mut in_process = options.clone();
    in_process.verdicts = VerdictMode::InProcess;
    let (order, programs): (Vec<usize>, Vec<Option<Program>>) =
        programs.into_iter().map(|(index, program)| (index, Some(program))).unzip();
    let verdicts = canonical::run_programs(in_process, programs, 1, None, interrupt).await?;
    for (index, verdict) in order.into_iter().zip(verdicts) {
        if let Some(verdict) = verdict.and_then(|v| v.into_iter().next()) {
            decided.verdicts.push((index, verdict));
        }
    }
    Ok(decided)
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
