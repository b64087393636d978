//! The run itself: samples go to the workers as they are read, and each verdict goes to
//! the journal the moment it comes back. One task owns the state: it takes samples from
//! the reader and verdicts from the pool in one `select!`, with Ctrl-C and SIGTERM.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use passk_runner::{CancellationToken, Job, Pool, PoolError, Program, Status, Verdict};
use tokio::sync::mpsc;

use super::journal::{Journal, Recorded};
use super::prepare::Prepared;
use super::samples::{self, Feed, Pending, SamplesFile};
use super::EvaluateOptions;
use crate::dedup::{Dedup, Key, Offer, Sample};
use crate::error::CommandError;
use crate::input::InputError;
use crate::problems::ProblemSet;
use crate::retry::TimedOut;

/// How many samples may be read ahead of the verdicts decided. Samples waiting for an
/// identical one's verdict wait in memory; this bound keeps that memory flat, and is
/// wide enough that the other workers go on through a slow sample's whole time limit.
const READ_AHEAD: usize = 4096;

/// What travels with a job.
#[derive(Debug)]
struct Tag {
    sample: Sample,
    key: Key,
    /// Kept only to run it again, under the same limit, if it times out (with
    /// --retry-timeouts).
    program: Option<(Program, Option<Duration>)>,
}

/// How the run loop ended. Any of these may have happened together.
#[derive(Debug)]
pub struct Ending {
    pub interrupted: bool,
    pub write_failure: Option<CommandError>,
    pub pool_fault: Option<PoolError>,
    pub fed: Result<(), InputError>,
}

/// The run loop's outcome.
#[derive(Debug)]
pub struct Ran {
    pub journal: Journal,
    pub dedup: Dedup,
    pub timed_out: TimedOut,
    pub ending: Ending,
}

/// The loop's state: what has been decided, and where it goes.
struct Decisions {
    journal: Journal,
    dedup: Dedup,
    timed_out: TimedOut,
    progress: ProgressBar,
    /// Samples decided in this run, read in this run.
    decided: usize,
    read: usize,
}

impl Decisions {
    /// Records a verdict for `sample` and every identical sample that waited for it.
    fn decide(&mut self, tag: Tag, verdict: Verdict) -> Result<(), CommandError> {
        let Tag { sample, key, program } = tag;
        let mut decided = self.dedup.settle(key, &verdict);
        decided.push(sample);
        if let (Some((program, timeout)), Status::Timeout) = (program, verdict.status) {
            for sample in &decided {
                self.timed_out.note(sample.index, key, &program, timeout);
            }
        }
        decided.into_iter().try_for_each(|sample| self.record(sample, &verdict))
    }

    fn record(&mut self, sample: Sample, verdict: &Verdict) -> Result<(), CommandError> {
        tracing::debug!(
            sample = sample.index,
            task_id = sample.fields.get("task_id").and_then(serde_json::Value::as_str).unwrap_or_default(),
            status = %verdict.status,
            duration = verdict.duration,
            stdout_bytes = verdict.stdout_bytes,
            stderr_bytes = verdict.stderr_bytes,
            stdout = verdict.stdout,
            stderr = verdict.stderr,
            "{}",
            verdict.detail
        );
        self.journal
            .record(sample.index, sample.fields, verdict)
            .map_err(|source| CommandError::Write { path: self.journal.file().display().to_string(), source })?;
        self.decided += 1;
        self.progress.inc(1);
        Ok(())
    }
}

/// Runs every sample `resumed` does not decide, on `pool`, recording verdicts in
/// `journal`.
pub async fn run(
    options: &EvaluateOptions,
    prepared: &Prepared,
    pool: Pool,
    journal: Journal,
    resumed: Option<&Recorded>,
    calibrated: &[Option<Duration>],
) -> Ran {
    let already = resumed.map_or(0, Recorded::decided);
    let feed = Feed {
        decided: resumed.map_or_else(BTreeSet::new, |r| (0..prepared.total).filter(|&i| r.is_decided(i)).collect()),
        retry: match resumed {
            Some(resumed) if options.retry_timeouts => resumed.unretried_timeouts().into_iter().collect(),
            _ => BTreeSet::new(),
        },
        total: prepared.total,
        extract: options.extract,
    };
    let (job_tx, job_rx) = mpsc::channel(options.jobs * 4);
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    let (pending_tx, mut pending_rx) = mpsc::channel(options.jobs * 4);
    let cancel = CancellationToken::new();
    let running = tokio::spawn(pool.run(job_rx, verdict_tx, cancel.clone()));
    let feeding = {
        let (problems, samples): (Arc<ProblemSet>, Arc<SamplesFile>) =
            (prepared.problems.clone(), prepared.samples.clone());
        tokio::task::spawn_blocking(move || samples::feed(&samples, &problems, &feed, &pending_tx))
    };

    let mut state = Decisions {
        journal,
        dedup: Dedup::new(options.dedup),
        timed_out: TimedOut::default(),
        progress: progress_bar(prepared.total as u64, already as u64),
        decided: 0,
        read: 0,
    };
    let mut job_tx = Some(job_tx);
    let mut interrupted = false;
    let mut write_failure = None;
    let mut stop_signals = match StopSignals::new() {
        Ok(signals) => signals,
        Err(error) => {
            write_failure = Some(error);
            StopSignals::never()
        }
    };
    while write_failure.is_none() {
        tokio::select! {
            () = stop_signals.next() => {
                interrupted = true;
                break;
            }
            pending = pending_rx.recv(), if job_tx.is_some() && state.read - state.decided < READ_AHEAD => match pending {
                Some(pending) => {
                    if let Err(error) = offer(options, &mut state, &mut job_tx, pending, calibrated).await {
                        write_failure = Some(error);
                    }
                }
                // Every sample is in: closing the queue lets the pool finish.
                None => job_tx = None,
            },
            verdict = verdict_rx.recv() => match verdict {
                Some((tag, verdict)) => {
                    if let Err(error) = state.decide(tag, verdict) {
                        write_failure = Some(error);
                    }
                }
                None => break,
            },
        }
    }
    // Whatever ended the loop, no candidate outlives it.
    cancel.cancel();
    drop(job_tx);
    let pool_fault = running.await.expect("the pool does not panic").err();
    drop(pending_rx);
    let fed = feeding.await.expect("feeding samples does not panic");
    state.progress.finish_and_clear();
    Ran {
        journal: state.journal,
        dedup: state.dedup,
        timed_out: state.timed_out,
        ending: Ending { interrupted, write_failure, pool_fault, fed },
    }
}

/// Hands a sample read to the workers, or decides it at once when an identical one's
/// verdict is known.
async fn offer(
    options: &EvaluateOptions,
    state: &mut Decisions,
    job_tx: &mut Option<mpsc::Sender<Job<Tag>>>,
    pending: Pending,
    calibrated: &[Option<Duration>],
) -> Result<(), CommandError> {
    let Pending { sample, key, program, problem, only_retry } = pending;
    let timeout = calibrated[problem];
    if only_retry {
        // Decided before a resume, as a time-out: it joins this run's time-outs.
        state.timed_out.note(sample.index, key, &program, timeout);
        return Ok(());
    }
    state.read += 1;
    match state.dedup.offer(key, sample) {
        Offer::Run(sample) => {
            let jobs = job_tx.as_ref().expect("open while samples come");
            let kept = options.retry_timeouts.then(|| (program.clone(), timeout));
            if jobs.send(Job { program, tag: Tag { sample, key, program: kept }, timeout }).await.is_err() {
                // The pool stopped; its error is the one to report.
                *job_tx = None;
            }
            Ok(())
        }
        Offer::Known(sample, verdict) => state.record(sample, &verdict),
        Offer::Waiting => Ok(()),
    }
}

/// Ctrl-C and SIGTERM, either of which stops the run cleanly.
struct StopSignals {
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    fn new() -> Result<StopSignals, CommandError> {
        use tokio::signal::unix::{signal, SignalKind};
        let listen =
            |kind| signal(kind).map_err(|source| CommandError::Write { path: "signal handlers".into(), source });
        Ok(StopSignals { signals: Some((listen(SignalKind::interrupt())?, listen(SignalKind::terminate())?)) })
    }

    fn never() -> StopSignals {
        StopSignals { signals: None }
    }

    async fn next(&mut self) {
        match &mut self.signals {
            Some((interrupt, terminate)) => tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            },
            None => std::future::pending().await,
        }
    }
}

/// The progress bar, on a terminal only. It counts verdicts decided, resumed ones
/// included, and its rate and ETA count only this run's.
fn progress_bar(total: u64, decided: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} samples  {rate}  ETA {eta}")
        .expect("the template is valid")
        .with_key("rate", |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{}", rate(state.per_sec()));
        });
    bar.set_style(style);
    bar.set_position(decided);
    bar.reset_eta();
    bar
}

/// Samples a second, to as many digits as say something: "12.3/s", "250/s", "0.42/s".
fn rate(per_second: f64) -> String {
    if !per_second.is_finite() || per_second <= 0.0 {
        "-/s".to_owned()
    } else if per_second >= 100.0 {
        format!("{per_second:.0}/s")
    } else if per_second >= 1.0 {
        format!("{per_second:.1}/s")
    } else {
        format!("{per_second:.2}/s")
    }
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn rates_have_sensible_precision() {
        assert_eq!(rate(0.0), "-/s");
        assert_eq!(rate(0.4212), "0.42/s");
        assert_eq!(rate(12.3456), "12.3/s");
        assert_eq!(rate(359.87), "360/s");
    }
}
