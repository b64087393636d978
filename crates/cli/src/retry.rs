//! `--retry-timeouts`: samples that ran into their time limit are run again at the end,
//! one at a time, with the machine to themselves. A limit hit only because the machine
//! was busy is then not charged to the model; one hit again stands.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use passk_runner::{CancellationToken, Job, Pool, PoolError, PoolOptions, Program, Status, Verdict};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::dedup::Key;
use crate::report::Tally;
use crate::CommandError;

/// Samples that timed out, by program, with the limit each ran under.
#[derive(Debug, Default)]
pub struct TimedOut {
    programs: HashMap<Key, (Program, Option<Duration>)>,
    samples: HashMap<usize, Key>,
}

impl TimedOut {
    pub fn note(&mut self, index: usize, key: Key, program: &Program, timeout: Option<Duration>) {
        self.programs.entry(key).or_insert_with(|| (program.clone(), timeout));
        self.samples.insert(index, key);
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

/// How the retry went.
#[derive(Debug)]
pub struct Retried {
    pub samples: usize,
    /// Samples whose verdict changed.
    pub changed: usize,
    /// The tally of the whole results file after the retry.
    pub tally: Tally,
}

/// Runs the timed-out programs on `pool`: the verdicts it reached, and what stopped it
/// early, if anything did.
async fn run(pool: Pool, timed_out: &TimedOut) -> (HashMap<Key, Verdict>, Option<PoolError>) {
    let (job_tx, job_rx) = mpsc::channel(timed_out.programs.len().max(1));
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    for (key, (program, timeout)) in &timed_out.programs {
        let job = Job { program: program.clone(), tag: *key, timeout: *timeout };
        job_tx.send(job).await.expect("the queue holds every job");
    }
    drop(job_tx);
    let fault = pool.run(job_rx, verdict_tx, CancellationToken::new()).await.err();
    let mut verdicts = HashMap::new();
    while let Ok((key, verdict)) = verdict_rx.try_recv() {
        verdicts.insert(key, verdict);
    }
    (verdicts, fault)
}

fn write_error(path: &Path, source: std::io::Error) -> CommandError {
    CommandError::Write { path: path.display().to_string(), source }
}

/// Runs every timed-out program again on one worker, then rewrites `partial` (the run's
/// complete results) with the new verdicts: `infrastructure` for any the retry could not
/// run, which the caller reports as such.
pub async fn retry(mut options: PoolOptions, timed_out: TimedOut, partial: &Path) -> Result<Retried, CommandError> {
    options.jobs = 1;
    let (mut verdicts, fault) = match Pool::start(options).await {
        Ok(pool) => run(pool, &timed_out).await,
        Err(fault) => (HashMap::new(), Some(fault)),
    };
    // A program the retry could not run has no verdict now: its first one was a time-out
    // that this retry was to confirm or overturn. Marked so, it is run again on resume.
    if let Some(fault) = fault {
        let detail = format!("the retry could not run it: {}", passk_runner::error_chain(&fault));
        for key in timed_out.samples.values() {
            verdicts.entry(*key).or_insert_with(|| Verdict::infrastructure(detail.clone()));
        }
    }

    // The rewrite goes to a new file that replaces the old at once, so a crash here
    // leaves the run's results as they were.
    let mut rewritten = partial.as_os_str().to_owned();
    rewritten.push(".retry");
    let rewritten = std::path::PathBuf::from(rewritten);
    let reader = BufReader::new(std::fs::File::open(partial).map_err(|source| write_error(partial, source))?);
    let mut writer =
        std::io::BufWriter::new(std::fs::File::create(&rewritten).map_err(|source| write_error(&rewritten, source))?);
    let (mut changed, mut tally) = (0, Tally::default());
    for (index, line) in reader.lines().enumerate() {
        let line = line.map_err(|source| write_error(partial, source))?;
        let mut result: Value =
            serde_json::from_str(&line).map_err(|e| write_error(partial, std::io::Error::other(e)))?;
        if let Some(verdict) = timed_out.samples.get(&index).and_then(|key| verdicts.get(key)) {
            changed += usize::from(verdict.status != Status::Timeout);
            if let Some(line) = result.as_object_mut() {
                crate::output::record_verdict(line, verdict);
                line.insert("retried".into(), json!(true));
            }
        }
        tally.add(
            result["task_id"].as_str().unwrap_or_default(),
            result["passed"].as_bool().unwrap_or(false),
            result["status"].as_str(),
        );
        serde_json::to_writer(&mut writer, &result).map_err(|e| write_error(&rewritten, std::io::Error::other(e)))?;
        writer.write_all(b"\n").map_err(|source| write_error(&rewritten, source))?;
    }
    let file = writer.into_inner().map_err(|error| write_error(&rewritten, error.into_error()))?;
    file.sync_all().map_err(|source| write_error(&rewritten, source))?;
    std::fs::rename(&rewritten, partial).map_err(|source| write_error(partial, source))?;
    Ok(Retried { samples: timed_out.samples.len(), changed, tally })
}
