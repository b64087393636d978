//! Samples that ran into their time limit are run again at the end, one at a time, with
//! the machine to themselves: every one with `--retry-timeouts`, and, whatever the flags,
//! those whose limit was below their problem's floor, under the floor (see
//! `canonical::floors`). A limit hit only because the machine was busy, or because the
//! problem's own solution needs most of it, is then not charged to the model; one hit
//! again stands.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use passk_runner::{Batch, CancellationToken, Job, JobLimits, Pool, PoolError, Program, Verdict};
use tokio::sync::mpsc;

use crate::dedup::Key;

/// A timed-out program, the limit it ran under (the pool's where None), and its
/// problem's position in the set.
#[derive(Debug)]
struct Kept {
    program: Program,
    timeout: Option<Duration>,
    problem: usize,
    /// The floor it runs again under, where that is above its limit.
    raised: Option<Duration>,
}

/// Samples that timed out, by program.
#[derive(Debug, Default)]
pub struct TimedOut {
    programs: HashMap<Key, Kept>,
    samples: HashMap<usize, Key>,
}

impl TimedOut {
    pub fn note(&mut self, index: usize, key: Key, program: &Program, timeout: Option<Duration>, problem: usize) {
        self.programs.entry(key).or_insert_with(|| Kept { program: program.clone(), timeout, problem, raised: None });
        self.samples.insert(index, key);
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// The positions of the problems with a sample that timed out.
    pub fn problems(&self) -> BTreeSet<usize> {
        self.programs.values().map(|kept| kept.problem).collect()
    }

    /// Keeps the programs to run again: with `all`, every one; otherwise those whose
    /// limit (`timeout` where they have none of their own) is below their problem's
    /// floor. Each whose limit is below the floor runs again under the floor. Returns
    /// the floors that raised a limit, by problem.
    pub fn keep(
        &mut self,
        floors: &HashMap<usize, Duration>,
        timeout: Duration,
        all: bool,
    ) -> BTreeMap<usize, Duration> {
        let mut raised = BTreeMap::new();
        for kept in self.programs.values_mut() {
            let floor = floors.get(&kept.problem).copied();
            kept.raised = floor.filter(|floor| *floor > kept.timeout.unwrap_or(timeout));
            if let Some(floor) = kept.raised {
                raised.insert(kept.problem, floor);
            }
        }
        if !all {
            self.programs.retain(|_, kept| kept.raised.is_some());
            self.samples.retain(|_, key| self.programs.contains_key(key));
        }
        raised
    }

    /// The floor sample `index` ran again under, where it raised the sample's limit.
    pub fn raised(&self, index: usize) -> Option<Duration> {
        self.programs.get(self.samples.get(&index)?)?.raised
    }
}

/// Runs every timed-out program again on one worker: the new verdict of each sample,
/// `infrastructure` for any the retry could not run, which the caller reports as such.
/// Once `interrupt` is cancelled, only the verdicts decided by then.
pub async fn run_again(pool: &mut Pool, timed_out: &TimedOut, interrupt: &CancellationToken) -> Vec<(usize, Verdict)> {
    let (mut verdicts, fault) = run(pool, timed_out, interrupt).await;
    // A program the retry could not run has no verdict now: its first one was a time-out
    // that this retry was to confirm or overturn. Marked so, it is run again on resume.
    if let Some(fault) = fault {
        let detail = format!("the retry could not run it: {}", passk_runner::error_chain(&fault));
        for key in timed_out.samples.values() {
            verdicts.entry(*key).or_insert_with(|| Verdict::infrastructure(detail.clone()));
        }
    }
    let mut by_sample: Vec<(usize, Verdict)> =
        timed_out.samples.iter().filter_map(|(index, key)| Some((*index, verdicts.get(key)?.clone()))).collect();
    by_sample.sort_by_key(|(index, _)| *index);
    by_sample
}

/// Runs the timed-out programs on `pool`: the verdicts it reached, and what stopped it
/// early, if anything did.
async fn run(
    pool: &mut Pool,
    timed_out: &TimedOut,
    interrupt: &CancellationToken,
) -> (HashMap<Key, Verdict>, Option<PoolError>) {
    let (job_tx, job_rx) = mpsc::channel(timed_out.programs.len().max(1));
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    for (key, kept) in &timed_out.programs {
        let job =
            Job { program: kept.program.clone(), tag: *key, limits: JobLimits::timeout(kept.raised.or(kept.timeout)) };
        job_tx.send(job).await.expect("the queue holds every job");
    }
    drop(job_tx);
    let alone = Batch { slots: 1, ..pool.batch() };
    let fault = pool.run(alone, job_rx, verdict_tx, interrupt.clone()).await.err();
    let mut verdicts = HashMap::new();
    while let Ok((key, verdict)) = verdict_rx.try_recv() {
        verdicts.insert(key, verdict);
    }
    (verdicts, fault)
}
