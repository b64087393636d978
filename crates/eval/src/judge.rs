//! Judging samples held in memory: no samples file, no results file, no lock, no journal.
//!
//! `evaluate` is built for a run over files that must survive a crash; a service that
//! judges samples as they come (a reward for each of a trainer's rollouts) needs none of
//! that. A [`Judge`] keeps one pool up across calls, so the workers' start is paid once;
//! each call judges a batch of samples and sends every verdict the moment it is decided.
//! The verdicts are the same as `evaluate`'s: the same problem set, the same expected
//! outputs (read from the cache or computed on the judge's own workers at start), the
//! same programs on the same sandbox.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use passk_formats::problems::{ProblemSet, SetOptions};
use passk_runner::{CancellationToken, Candidate, Job, JobLimits, Pool, PoolOptions, Program, Verdict};
use tokio::sync::mpsc;

use crate::error::EvalError;
use crate::events::EventSink;
use crate::expected;

/// One sample to judge: the position of its problem in the set, and its code.
#[derive(Debug, Clone)]
pub struct Submission {
    pub problem: usize,
    pub candidate: Candidate,
    /// Its own wall-clock limit, instead of the pool's.
    pub timeout: Option<Duration>,
}

/// Workers kept up for one problem set, judging batch after batch.
#[derive(Debug)]
pub struct Judge {
    pool: Pool,
    problems: Arc<ProblemSet>,
}

impl Judge {
    /// Starts the workers for `problems`, and gives every EvalPlus problem its expected
    /// outputs, from the cache folder `cache_dir` or computed on the workers now.
    pub async fn start(
        mut problems: ProblemSet,
        set: &SetOptions,
        pool: PoolOptions,
        cache_dir: &Path,
        interrupt: &CancellationToken,
        events: &EventSink,
    ) -> Result<Judge, EvalError> {
        let mut pool = Pool::start(pool).await?;
        if let Err(error) = expected::attach(&mut problems, set, &mut pool, cache_dir, interrupt, events).await {
            pool.stop().await;
            return Err(error);
        }
        Ok(Judge { pool, problems: Arc::new(problems) })
    }

    pub fn problems(&self) -> &ProblemSet {
        &self.problems
    }

    /// Judges `samples`, sending each verdict to `verdicts` with the sample's position in
    /// `samples` as soon as it is decided. Returns once every sample has its verdict, or,
    /// once `interrupt` is cancelled, with the verdicts decided by then sent.
    pub async fn judge(
        &mut self,
        samples: Vec<Submission>,
        verdicts: mpsc::UnboundedSender<(usize, Verdict)>,
        interrupt: &CancellationToken,
    ) -> Result<(), EvalError> {
        let mut jobs = Vec::with_capacity(samples.len());
        for (index, sample) in samples.into_iter().enumerate() {
            let problem = self.problems.problems.get(sample.problem).ok_or(EvalError::NoSuchProblem {
                sample: index,
                problem: sample.problem,
                problems: self.problems.problems.len(),
            })?;
            let program = Program::new(&problem.code, &sample.candidate);
            jobs.push(Job { program, tag: index, limits: JobLimits::timeout(sample.timeout) });
        }
        let (job_tx, job_rx) = mpsc::channel(jobs.len().max(1));
        for job in jobs {
            job_tx.send(job).await.expect("the queue holds every job");
        }
        drop(job_tx);
        let batch = self.pool.batch();
        self.pool.run(batch, job_rx, verdicts, interrupt.clone()).await?;
        Ok(())
    }

    /// Stops the workers and removes what they made.
    pub async fn stop(self) {
        self.pool.stop().await;
    }
}
