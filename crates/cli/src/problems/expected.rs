//! EvalPlus's expected outputs: what each problem's canonical solution returns for every
//! input, and how long each call took, which sets the input's time limit.
//!
//! They are computed here, by running the canonical solutions in the sandbox through the
//! judge exactly as candidates are run, and cached in a folder named by the problem
//! file's SHA-256, the interpreter's version and passk's (its version and a digest of its
//! driver, which records and encodes the outputs), so a file is measured once per machine
//! and passk, and a passk that encodes or compares otherwise never reads another's.
//! Each problem's outputs are written to the folder as soon as they are known, so an
//! interrupted run keeps what it computed; a problem whose canonical solution gave no
//! outputs is never written, and the next run tries it again: the same command runs its
//! samples again too (`evaluate::rerun`), which it tells by their detail.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use passk_runner::{
    CancellationToken, Candidate, Job, Pool, PoolOptions, ProblemCode, Program, Status, Suite, Tests, Verdict,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;

use super::evalplus::{judging_suite, recording_suite, Recorded};
use super::{Problem, ProblemSet, SetOptions};
use crate::error::CommandError;
use crate::progress::{Phase, Progress};
use crate::report::plural;
use crate::say::say;

/// How the detail of a sample unjudgeable for want of expected outputs begins.
pub const NO_EXPECTED_OUTPUTS: &str = "the canonical solution gives no expected outputs";

/// One problem's file in the cache folder.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    task_id: String,
    /// Each phase's outputs and times, base inputs first.
    phases: Vec<Recorded>,
}

/// Where expected outputs are cached by default: `$XDG_CACHE_HOME/passk`, or
/// `~/.cache/passk`.
pub fn default_cache_dir() -> PathBuf {
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    home.join("passk")
}

/// The cache folder of one problem file under one interpreter and one passk: a file per
/// problem, named by the SHA-256 of its task id.
struct Store {
    folder: PathBuf,
}

impl Store {
    fn new(cache_dir: &Path, problems_sha256: &str, python: &str) -> Store {
        let passk = env!("CARGO_PKG_VERSION");
        let driver = passk_runner::sandbox::driver_package::digest();
        let name = format!("expected-{problems_sha256}-python{python}-passk{passk}-driver{}", &driver[..16]);
        Store { folder: cache_dir.join(name) }
    }

    fn path(&self, task_id: &str) -> PathBuf {
        use sha2::Digest;
        self.folder.join(format!("{:x}.json", sha2::Sha256::digest(task_id.as_bytes())))
    }

    /// The problem's outputs, if a whole, readable file holds them.
    fn read(&self, task_id: &str) -> Option<Vec<Recorded>> {
        let text = std::fs::read(self.path(task_id)).ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        (entry.task_id == task_id).then_some(entry.phases)
    }

    /// Writes the problem's outputs whole or not at all: a file cut short by a crash is
    /// unreadable, and so computed again.
    fn write(&self, task_id: &str, phases: &[Recorded]) -> Result<(), CommandError> {
        let path = self.path(task_id);
        let write_error = |source| CommandError::Write { path: path.display().to_string(), source };
        std::fs::create_dir_all(&self.folder).map_err(write_error)?;
        let entry = json!({"task_id": task_id, "phases": phases});
        let text = serde_json::to_vec(&entry).map_err(|error| write_error(error.into()))?;
        let partial = path.with_extension("json.partial");
        std::fs::write(&partial, text).map_err(write_error)?;
        std::fs::rename(&partial, &path).map_err(write_error)
    }
}

/// Gives every EvalPlus problem of `problems` its judging tests, from the cache or by
/// running the canonical solutions now. A problem whose canonical solution fails is
/// judged `unjudgeable`, with a warning, and tried again on the next run.
pub async fn attach(
    problems: &mut ProblemSet,
    options: &SetOptions,
    pool: PoolOptions,
    cache_dir: &Path,
    interrupt: &CancellationToken,
) -> Result<(), CommandError> {
    if problems.problems.iter().all(|problem| problem.evalplus.is_none()) {
        return Ok(());
    }
    let store = Store::new(cache_dir, &problems.sha256, &pool.interpreter.version);
    // Read, and later made suites, on every CPU: a cached HumanEval+ is 140 MB of JSON,
    // which the workers would otherwise wait for.
    let cached: Vec<Option<Vec<Recorded>>> = tokio::task::block_in_place(|| {
        problems
            .problems
            .par_iter()
            .map(|problem| problem.evalplus.as_ref().and_then(|_| store.read(&problem.task_id)))
            .collect()
    });
    let mut recorded: HashMap<String, Vec<Recorded>> = HashMap::new();
    let mut missing = Vec::new();
    for (index, (problem, cached)) in problems.problems.iter().zip(cached).enumerate() {
        if problem.evalplus.is_none() {
            continue;
        }
        match cached {
            Some(phases) => {
                recorded.insert(problem.task_id.clone(), phases);
            }
            None => missing.push(index),
        }
    }
    let mut failed = BTreeMap::new();
    if missing.is_empty() {
        tracing::info!(folder = %store.folder.display(), "expected outputs from the cache");
    } else {
        let cached = recorded.len();
        say!(
            "computing expected outputs: running the canonical solutions of {} on every input{} (cached in {})",
            plural(missing.len(), "problem"),
            if cached > 0 { format!(", {cached} being cached already") } else { String::new() },
            store.folder.display()
        );
        failed = compute(problems, &missing, options, pool, &store, &mut recorded, interrupt).await?;
    }
    let outputs: Vec<Option<Vec<Recorded>>> =
        problems.problems.iter().map(|problem| recorded.remove(&problem.task_id)).collect();
    let suites: Vec<Option<Suite>> = tokio::task::block_in_place(|| {
        problems
            .problems
            .par_iter()
            .zip(outputs)
            .map(|(problem, phases)| Some(judging_suite(problem.evalplus.as_ref()?, phases?, options)))
            .collect()
    });
    let mut failing = Vec::new();
    for (problem, suite) in problems.problems.iter_mut().zip(suites) {
        if problem.evalplus.is_none() {
            continue;
        }
        let suite = suite.unwrap_or_else(|| {
            let why = failed.remove(&problem.task_id).unwrap_or_else(|| "it has no canonical solution".to_owned());
            failing.push(format!("{} ({why})", problem.task_id));
            let data = json!({"unjudgeable": format!("{NO_EXPECTED_OUTPUTS}: {why}"), "phases": []});
            Suite::new(data, 1, None)
        });
        let code = &problem.code;
        problem.code = Arc::new(ProblemCode {
            prompt: code.prompt.clone(),
            tests: Tests::Calls(Arc::new(suite)),
            entry_point: code.entry_point.clone(),
        });
    }
    if !failing.is_empty() {
        say!(
            "warning: {} cannot be judged, for want of expected outputs (not cached: the same command tries again): {}",
            plural(failing.len(), "problem"),
            crate::report::first_few(&failing, 5)
        );
    }
    Ok(())
}

/// The outputs of a canonical solution's run, or why it gave none.
fn outputs_of(verdict: &Verdict) -> Result<Vec<Recorded>, String> {
    if verdict.status != Status::Passed {
        return Err(format!("{}: {}", verdict.status, verdict.detail));
    }
    verdict
        .phases
        .iter()
        .map(|phase| match (&phase.outputs, &phase.times, &phase.arguments) {
            (Some(outputs), Some(times), Some(arguments)) => {
                Ok(Recorded { outputs: outputs.clone(), times: times.clone(), arguments: arguments.clone() })
            }
            _ => Err(format!("the outputs of phase {} never came from the judge", phase.phase)),
        })
        .collect()
}

/// Runs the canonical solution of each problem at `indices` on every input, recording
/// what it returns and how long each call takes; each problem's outputs go into
/// `recorded` and the cache as soon as they come. Returns why each problem that gave
/// none failed.
async fn compute(
    problems: &ProblemSet,
    indices: &[usize],
    options: &SetOptions,
    pool: PoolOptions,
    store: &Store,
    recorded: &mut HashMap<String, Vec<Recorded>>,
    interrupt: &CancellationToken,
) -> Result<BTreeMap<String, String>, CommandError> {
    let mut failed = BTreeMap::new();
    let mut jobs = Vec::new();
    for &index in indices {
        let problem: &Problem = &problems.problems[index];
        let (Some(inputs), Some(solution)) = (&problem.evalplus, &problem.canonical_solution) else { continue };
        let code = ProblemCode {
            prompt: problem.code.prompt.clone(),
            tests: Tests::Calls(Arc::new(recording_suite(inputs, options))),
            entry_point: problem.code.entry_point.clone(),
        };
        let program = Program::new(&Arc::new(code), &Candidate::Completion(solution.clone()));
        jobs.push(Job { program, tag: index, timeout: None });
    }
    let pool = Pool::start(pool).await?;
    let mut progress = Progress::new(Phase::ComputingExpectedOutputs, jobs.len() as u64, 0);
    let (job_tx, job_rx) = mpsc::channel(jobs.len() + 1);
    for job in jobs {
        job_tx.send(job).await.expect("room for every job");
    }
    drop(job_tx);
    let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
    let running = pool.run(job_rx, verdict_tx, interrupt.clone());
    tokio::pin!(running);
    let mut finished = None;
    loop {
        tokio::select! {
            outcome = &mut running, if finished.is_none() => finished = Some(outcome),
            verdict = verdict_rx.recv() => {
                let Some((index, verdict)) = verdict else { break };
                let task_id = &problems.problems[index].task_id;
                tracing::debug!(task_id, duration = verdict.duration, "canonical solution run");
                match outputs_of(&verdict) {
                    Ok(phases) => {
                        store.write(task_id, &phases)?;
                        recorded.insert(task_id.clone(), phases);
                    }
                    Err(why) => {
                        failed.insert(task_id.clone(), why);
                    }
                }
                progress.done();
            }
        }
    }
    progress.finish();
    finished.expect("the pool ran to its end")?;
    if interrupt.is_cancelled() {
        return Err(CommandError::Interrupted { phase: "computing expected outputs" });
    }
    Ok(failed)
}
