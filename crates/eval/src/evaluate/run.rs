//! The run itself: samples go to the workers as they are read, and each verdict goes to
//! the journal the moment it comes back. One task owns the state: it takes samples from
//! the reader, verdicts from the pool and expected outputs attached (`recording`) in one
//! `select!`, with the interrupt. It never waits on anything but that `select!`, so a
//! verdict never waits in the channel for a sample to find room in the workers' queue.
//! Whatever ends the loop, the pool is then stopped and every verdict it still sends,
//! each decided before it stopped, recorded.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use passk_runner::{CancellationToken, Job, JobLimits, Pool, PoolError, ProblemCode, Program, Status, Verdict};
use tokio::sync::mpsc;

use super::longest_first::LongestFirst;
use super::prepare::Prepared;
use super::recording::Recording;
use super::samples::{self, Feed, Pending, SamplesFile};
use super::EvaluateOptions;
use crate::dedup::{Dedup, Key, Offer, Sample};
use crate::error::EvalError;
use crate::events::{EventSink, Phase, Progress};
use crate::expected::Recordings;
use crate::journal::{Journal, Recorded};
use crate::timeouts::TimedOut;
use passk_formats::problems::ProblemSet;
use passk_formats::InputError;

/// How many samples may be read ahead of the verdicts decided. Samples waiting for an
/// identical one's verdict wait in memory; this bound keeps that memory flat, and is
/// wide enough that the other workers go on through a slow sample's whole time limit.
const READ_AHEAD: usize = 4096;

/// What a job runs: a sample, or a problem's canonical solution whose outputs its
/// samples wait for (`recording`).
#[derive(Debug)]
enum Work {
    Sample(Tag),
    Record(usize),
}

/// What travels with a sample's job.
#[derive(Debug)]
struct Tag {
    sample: Sample,
    key: Key,
    /// Kept to run it again if it times out (see `timeouts`): the program, its limit and
    /// its problem's position.
    program: (Program, Option<Duration>, usize),
}

/// How the run loop ended. Any of these may have happened together.
#[derive(Debug)]
pub struct Ending {
    pub interrupted: bool,
    /// Whether expected outputs were still being computed when the run stopped.
    pub computing_expected: bool,
    pub write_failure: Option<EvalError>,
    pub pool_fault: Option<PoolError>,
    pub fed: Result<(), InputError>,
}

/// The run loop's outcome.
#[derive(Debug)]
pub struct Ran {
    /// The run's pool, for the phases after this one.
    pub pool: Pool,
    pub journal: Journal,
    pub timed_out: TimedOut,
    pub counts: Counts,
    pub ending: Ending,
    /// The code of each problem whose expected outputs were attached during the run, by
    /// position: the problem set is to be judged with it from now on.
    pub attached: HashMap<usize, Arc<ProblemCode>>,
}

/// What this run did, as the summary's `run.executions` and `run.reused` say it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Programs that finished on a worker: each gave a verdict.
    pub executions: u64,
    /// Samples decided by an identical sample's verdict.
    pub reused: u64,
}

/// The loop's state: what has been decided, and where it goes.
struct Decisions {
    journal: Journal,
    dedup: Dedup,
    timed_out: TimedOut,
    progress: Progress,
    counts: Counts,
    /// Samples decided in this run, read in this run.
    decided: usize,
    read: usize,
}

impl Decisions {
    /// Records a program's verdict for its sample and every identical sample that
    /// waited for it.
    fn decide(&mut self, tag: Tag, verdict: Verdict) -> Result<(), EvalError> {
        let Tag { sample, key, program } = tag;
        self.counts.executions += 1;
        let mut decided = self.dedup.settle(key, &verdict);
        self.counts.reused += decided.len() as u64;
        decided.push(sample);
        if verdict.status == Status::Timeout {
            let (program, timeout, problem) = program;
            for sample in &decided {
                self.timed_out.note(sample.index, key, &program, timeout, problem);
            }
        }
        decided.into_iter().try_for_each(|sample| self.record(sample, &verdict))
    }

    fn record(&mut self, sample: Sample, verdict: &Verdict) -> Result<(), EvalError> {
        tracing::debug!(
            sample = sample.index,
            task_id = sample.fields.get("task_id").and_then(serde_json::Value::as_str).unwrap_or_default(),
            status = %verdict.status,
            duration = verdict.duration,
            stdout_bytes = verdict.stdout_bytes,
            stderr_bytes = verdict.stderr_bytes,
            stdout = verdict.stdout,
            stderr = verdict.stderr,
            // A field, not the message: fields are written escaped, so that a detail the
            // candidate wrote cannot start lines of its own on passk's standard error.
            detail = verdict.detail.as_str(),
            "verdict"
        );
        self.journal
            .record(sample.index, sample.fields, verdict)
            .map_err(|source| EvalError::Write { path: self.journal.file().display().to_string(), source })?;
        self.decided += 1;
        self.progress.done();
        Ok(())
    }
}

/// Runs every sample `resumed` does not decide, on `pool`, recording verdicts in
/// `journal`, until done or `interrupt` is cancelled; and first, on the same workers,
/// the canonical solutions of `recordings`.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    options: &EvaluateOptions,
    prepared: &Prepared,
    pool: Pool,
    journal: Journal,
    resumed: Option<&Recorded>,
    calibrated: &[Option<Duration>],
    recordings: Recordings,
    interrupt: &CancellationToken,
    events: &EventSink,
) -> Ran {
    let already = resumed.map_or(0, Recorded::decided);
    let feed = Feed {
        decided: resumed.map_or_else(BTreeSet::new, |r| (0..prepared.total).filter(|&i| r.is_decided(i)).collect()),
        // Any of them may be run again (see `timeouts`).
        retry: resumed.map_or_else(BTreeSet::new, |resumed| resumed.unretried_timeouts().into_iter().collect()),
        total: prepared.total,
        extract: options.extract,
        toolchains: prepared.toolchains.clone(),
    };
    // One job waiting per worker, so that a worker that frees up finds one; the rest wait
    // in `queued`, where the longest expected go first.
    let (job_tx, job_rx) = mpsc::channel(options.workers.jobs);
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    let (pending_tx, mut pending_rx) = mpsc::channel(options.workers.jobs * 4);
    let cancel = CancellationToken::new();
    let running = {
        let (mut pool, cancel) = (pool, cancel.clone());
        tokio::spawn(async move {
            let batch = pool.batch();
            let ran = pool.run(batch, job_rx, verdict_tx, cancel).await;
            (pool, ran)
        })
    };
    let feeding = {
        let (problems, samples): (Arc<ProblemSet>, Arc<SamplesFile>) =
            (prepared.problems.clone(), prepared.samples.clone());
        tokio::task::spawn_blocking(move || samples::feed(&samples, &problems, &feed, &pending_tx))
    };

    let mut state = Decisions {
        journal,
        dedup: Dedup::new(options.dedup),
        timed_out: TimedOut::default(),
        progress: Progress::new(events, Phase::Judging, prepared.total as u64, already as u64),
        counts: Counts::default(),
        decided: 0,
        read: 0,
    };
    let (mut recording, recording_jobs) = Recording::new(recordings, events);
    let mut job_tx = Some(job_tx);
    // The jobs that wait for room in the workers' queue.
    let mut queued = Queue::default();
    for (problem, program) in recording_jobs {
        queued.recordings.push_back(Job { program, tag: Work::Record(problem), limits: JobLimits::default() });
    }
    let mut all_read = false;
    // Jobs handed to the pool whose verdicts have not come.
    let mut handed_out = 0;
    let mut interrupted = false;
    let mut write_failure = None;
    while write_failure.is_none() {
        tokio::select! {
            biased;
            () = interrupt.cancelled() => {
                interrupted = true;
                break;
            }
            verdict = verdict_rx.recv() => match verdict.inspect(|_| handed_out -= 1) {
                Some((Work::Sample(tag), verdict)) => {
                    if let Err(error) = state.decide(tag, verdict) {
                        write_failure = Some(error);
                    }
                }
                Some((Work::Record(problem), verdict)) => recording.recorded(&prepared.problems, problem, verdict),
                None => break,
            },
            attached = recording.next_attached() => match attached {
                Ok(attached) => {
                    for pending in recording.attached(attached) {
                        if let Err(error) = queue(&mut state, &mut queued, pending, calibrated) {
                            write_failure = Some(error);
                        }
                    }
                }
                Err(error) => write_failure = Some(error),
            },
            // (A branch's future is made even when its condition is false.)
            permit = async { job_tx.clone()?.reserve_owned().await.ok() },
                if !queued.is_empty() && recording.may_hand_out(handed_out, options.workers.jobs) => match permit {
                Some(permit) => {
                    handed_out += 1;
                    permit.send(queued.pop().expect("a job waits"));
                }
                // The pool stopped; its error is the one to report.
                None => (job_tx, queued) = (None, Queue::default()),
            },
            pending = pending_rx.recv(),
                if !all_read && job_tx.is_some() && state.read + recording.held() - state.decided < READ_AHEAD => {
                match pending {
                    Some(pending) => {
                        let Some(pending) = recording.admit(pending) else { continue };
                        if let Err(error) = queue(&mut state, &mut queued, pending, calibrated) {
                            write_failure = Some(error);
                        }
                    }
                    None => all_read = true,
                }
            }
        }
        if all_read && queued.is_empty() && !recording.is_busy() {
            // Every sample is in and handed out: closing the queue lets the pool finish.
            job_tx = None;
        }
    }
    // Whatever ended the loop, no candidate outlives it, and no program starts after it.
    cancel.cancel();
    drop((job_tx, queued));
    let computing_expected = recording.is_computing();
    // The pool sends on every verdict its drivers had decided before they stopped, and
    // closes the channel once it has stopped.
    while let Some((work, verdict)) = verdict_rx.recv().await {
        match work {
            Work::Sample(tag) => {
                if let Err(error) = state.decide(tag, verdict) {
                    write_failure.get_or_insert(error);
                }
            }
            Work::Record(problem) => recording.recorded(&prepared.problems, problem, verdict),
        }
    }
    let attached = recording.finish().await;
    let (pool, ran) = running.await.expect("the pool does not panic");
    let pool_fault = ran.err();
    drop(pending_rx);
    let fed = feeding.await.expect("feeding samples does not panic");
    state.progress.finish();
    Ran {
        pool,
        journal: state.journal,
        timed_out: state.timed_out,
        counts: state.counts,
        ending: Ending { interrupted, computing_expected, write_failure, pool_fault, fed },
        attached,
    }
}

/// The jobs waiting for room in the workers' queue: canonical solutions to record first,
/// as samples wait for them, then the samples, the longest expected first.
#[derive(Default)]
struct Queue {
    recordings: VecDeque<Job<Work>>,
    samples: LongestFirst<Job<Work>>,
}

impl Queue {
    fn pop(&mut self) -> Option<Job<Work>> {
        self.recordings.pop_front().or_else(|| self.samples.pop())
    }

    fn is_empty(&self) -> bool {
        self.recordings.is_empty() && self.samples.is_empty()
    }
}

/// Offers a sample read to be run, queueing the job that runs it, if any.
fn queue(
    state: &mut Decisions,
    queued: &mut Queue,
    pending: Pending,
    calibrated: &[Option<Duration>],
) -> Result<(), EvalError> {
    let expected = pending.program.problem().tests.expected_time();
    if let Some(job) = offer(state, pending, calibrated)? {
        queued.samples.push(expected, job);
    }
    Ok(())
}

/// Takes a sample read: decides it at once when an identical one's verdict is known, or
/// returns the job that runs it.
fn offer(
    state: &mut Decisions,
    pending: Pending,
    calibrated: &[Option<Duration>],
) -> Result<Option<Job<Work>>, EvalError> {
    let Pending { sample, key, program, problem, only_retry } = pending;
    let timeout = calibrated[problem];
    if only_retry {
        // Decided before a resume, as a time-out: it joins this run's time-outs.
        state.timed_out.note(sample.index, key, &program, timeout, problem);
        return Ok(None);
    }
    state.read += 1;
    match state.dedup.offer(key, sample) {
        Offer::Run(sample) => {
            let kept = (program.clone(), timeout, problem);
            Ok(Some(Job {
                program,
                tag: Work::Sample(Tag { sample, key, program: kept }),
                limits: JobLimits::timeout(timeout),
            }))
        }
        Offer::Known(sample, verdict) => {
            state.counts.reused += 1;
            state.record(sample, &verdict).map(|()| None)
        }
        Offer::Waiting => Ok(None),
    }
}
