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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use passk_runner::{
    CancellationToken, Candidate, Interpreter, Job, JobLimits, Pool, ProblemCode, Program, Status, Suite, Tests,
    Verdict,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;

use crate::error::EvalError;
use crate::events::{info, warning, EventSink, Phase, Progress};
use passk_formats::problems::evalplus::{judging_suite, recording_suite, Recorded};
use passk_formats::problems::{Problem, ProblemSet, SetOptions};
use passk_report::words::plural;

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

/// The cache folder of one problem file under one toolchain and one passk: a file per
/// problem, named by the SHA-256 of its task id.
#[derive(Debug)]
struct Store {
    folder: PathBuf,
}

impl Store {
    fn new(cache_dir: &Path, problems_sha256: &str, toolchain: &Interpreter) -> Store {
        let passk = env!("CARGO_PKG_VERSION");
        let language = toolchain.language;
        let driver = passk_runner::sandbox::driver_package::digest(language);
        let (name, version) = (&language.name, &toolchain.version);
        let name = format!("expected-{problems_sha256}-{name}{version}-passk{passk}-driver{}", &driver[..16]);
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
    fn write(&self, task_id: &str, phases: &[Recorded]) -> Result<(), EvalError> {
        let path = self.path(task_id);
        let write_error = |source| EvalError::Write { path: path.display().to_string(), source };
        std::fs::create_dir_all(&self.folder).map_err(write_error)?;
        let entry = json!({"task_id": task_id, "phases": phases});
        let text = serde_json::to_vec(&entry).map_err(|error| write_error(error.into()))?;
        // Not synced, unlike the files `write_atomically` writes: a cache file lost to a
        // crash is only computed again.
        let writing = passk_formats::write::sibling(&path, ".writing");
        std::fs::write(&writing, text).map_err(write_error)?;
        std::fs::rename(&writing, &path).map_err(write_error)
    }
}

/// Gives every EvalPlus problem of `problems` its judging tests, from the cache or by
/// running the canonical solutions now, on `pool`. A problem whose
/// canonical solution fails is judged `unjudgeable`, with a warning, and tried again on
/// the next run.
pub async fn attach(
    problems: &mut ProblemSet,
    options: &SetOptions,
    pool: &mut Pool,
    cache_dir: &Path,
    interrupt: &CancellationToken,
    events: &EventSink,
) -> Result<(), EvalError> {
    let toolchain = pool.options().interpreter.clone();
    let mut recordings = Recordings::plan(problems, options, cache_dir, &toolchain, None, events);
    recordings.compute(problems, pool, interrupt, events).await?;
    recordings.warn(events);
    Ok(())
}

/// The EvalPlus problems whose expected outputs are not cached: each one's canonical
/// solution is run on every input, as a job of its own, and once its outputs come back
/// (`Recordings::attach`) the problem gets its judging tests.
///
/// `passk evaluate` runs these jobs on the pool that judges the samples, ahead of them:
/// a problem's samples are judged as soon as its outputs are known, while other
/// problems' are still being computed, so no worker waits for the slowest canonical
/// solution before judging starts (`evaluate::run`).
#[derive(Debug)]
pub struct Recordings {
    attacher: Attacher,
    /// The recording programs, by problem position, until they are taken to run.
    jobs: Vec<(usize, Program)>,
    /// Why each problem that got no outputs got none, by task id.
    failed: BTreeMap<String, String>,
}

/// Makes a problem's judging tests of its canonical solution's outputs, and caches them.
/// Cheap to clone, to attach off the task that takes the verdicts: a suite of tens of
/// megabytes of outputs takes a second to make.
#[derive(Debug, Clone)]
pub struct Attacher {
    shared: Arc<(Store, SetOptions)>,
}

/// What a canonical solution's run gives its problem.
#[derive(Debug)]
pub struct Attached {
    pub problem: usize,
    pub task_id: String,
    /// The problem's code with its judging tests, or with tests that judge every sample
    /// `unjudgeable` where the canonical solution gave no outputs.
    pub code: Arc<ProblemCode>,
    /// Why it gave none.
    pub failed: Option<String>,
}

impl Recordings {
    /// Attaches the cached outputs of every EvalPlus problem of `problems` (of those at
    /// `only`, where given) and plans the recording of the rest.
    pub fn plan(
        problems: &mut ProblemSet,
        options: &SetOptions,
        cache_dir: &Path,
        toolchain: &Interpreter,
        only: Option<&BTreeSet<usize>>,
        events: &EventSink,
    ) -> Recordings {
        let store = Store::new(cache_dir, &problems.sha256, toolchain);
        let wanted = |index: usize, problem: &Problem| {
            problem.evalplus.is_some() && only.map_or(true, |only| only.contains(&index))
        };
        // Read, and made suites, on every CPU: a cached HumanEval+ is 140 MB of JSON,
        // which the workers would otherwise wait for.
        let suites: Vec<Option<Suite>> = tokio::task::block_in_place(|| {
            problems
                .problems
                .par_iter()
                .enumerate()
                .map(|(index, problem)| {
                    let inputs = problem.evalplus.as_ref().filter(|_| wanted(index, problem))?;
                    Some(judging_suite(inputs, store.read(&problem.task_id)?, options))
                })
                .collect()
        });
        let mut recordings = Recordings {
            attacher: Attacher { shared: Arc::new((store, options.clone())) },
            jobs: Vec::new(),
            failed: BTreeMap::new(),
        };
        let mut cached = 0;
        for (index, (problem, suite)) in problems.problems.iter_mut().zip(suites).enumerate() {
            if !wanted(index, problem) {
                continue;
            }
            if let Some(suite) = suite {
                problem.code = with_tests(&problem.code, suite);
                cached += 1;
                continue;
            }
            let (Some(inputs), Some(solution)) = (&problem.evalplus, &problem.canonical_solution) else {
                let why = "it has no canonical solution".to_owned();
                problem.code = with_tests(&problem.code, unjudgeable(&why));
                recordings.failed.insert(problem.task_id.clone(), why);
                continue;
            };
            let code = ProblemCode {
                prompt: problem.code.prompt.clone(),
                tests: Tests::Calls(Arc::new(recording_suite(inputs, options))),
                entry_point: problem.code.entry_point.clone(),
            };
            recordings.jobs.push((index, Program::new(&Arc::new(code), &Candidate::Completion(solution.clone()))));
        }
        let folder = recordings.attacher.shared.0.folder.display();
        if recordings.jobs.is_empty() {
            // A set without expected outputs (HumanEval, MBPP) read nothing from a cache.
            if cached > 0 {
                tracing::info!(%folder, "expected outputs of {} from the cache", plural(cached, "problem"));
            }
        } else {
            info!(
                events,
                "computing expected outputs: running the canonical solutions of {} on every input{} (cached in {folder})",
                plural(recordings.jobs.len(), "problem"),
                if cached > 0 { format!(", {cached} being cached already") } else { String::new() },
            );
        }
        recordings
    }

    /// Whether every outputs wanted came from the cache.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The recording jobs, each tagged with its problem's position: they are run once.
    pub fn take_jobs(&mut self) -> Vec<(usize, Program)> {
        std::mem::take(&mut self.jobs)
    }

    /// What attaches each recording's outputs to its problem, for the task that takes
    /// the recordings' verdicts.
    pub fn attacher(&self) -> Attacher {
        self.attacher.clone()
    }

    /// Notes what `attach` gave, for the warning (`warn`).
    pub fn note(&mut self, attached: &Attached) {
        if let Some(why) = &attached.failed {
            self.failed.insert(attached.task_id.clone(), why.clone());
        }
    }

    /// Runs every recording job now, if any, on `pool`, and attaches each
    /// outputs as they come; each is cached as soon as it comes. What gave none is noted
    /// for `warn`.
    pub async fn compute(
        &mut self,
        problems: &mut ProblemSet,
        pool: &mut Pool,
        interrupt: &CancellationToken,
        events: &EventSink,
    ) -> Result<(), EvalError> {
        if self.is_empty() {
            return Ok(());
        }
        let jobs: Vec<Job<usize>> = self
            .take_jobs()
            .into_iter()
            .map(|(tag, program)| Job { program, tag, limits: JobLimits::default() })
            .collect();
        let mut progress = Progress::new(events, Phase::ComputingExpectedOutputs, jobs.len() as u64, 0);
        let (job_tx, job_rx) = mpsc::channel(jobs.len() + 1);
        for job in jobs {
            job_tx.send(job).await.expect("room for every job");
        }
        drop(job_tx);
        let (verdict_tx, mut verdict_rx) = mpsc::unbounded_channel();
        let batch = pool.batch();
        let running = pool.run(batch, job_rx, verdict_tx, interrupt.clone());
        tokio::pin!(running);
        let mut finished = None;
        loop {
            tokio::select! {
                outcome = &mut running, if finished.is_none() => finished = Some(outcome),
                verdict = verdict_rx.recv() => {
                    let Some((index, verdict)) = verdict else { break };
                    let attached = tokio::task::block_in_place(|| self.attacher.attach(problems, index, &verdict))?;
                    self.note(&attached);
                    problems.problems[index].code = attached.code;
                    progress.done();
                }
            }
        }
        progress.finish();
        finished.expect("the pool ran to its end")?;
        if interrupt.is_cancelled() {
            return Err(EvalError::Interrupted { phase: "computing expected outputs" });
        }
        Ok(())
    }

    /// Warns of the problems that got no outputs, each with why.
    pub fn warn(&self, events: &EventSink) {
        if self.failed.is_empty() {
            return;
        }
        let failing: Vec<String> = self.failed.iter().map(|(task_id, why)| format!("{task_id} ({why})")).collect();
        warning!(
            events,
            "{} cannot be judged, for want of expected outputs (not cached: the same command tries again): {}",
            plural(failing.len(), "problem"),
            passk_report::words::first_few(&failing, 5)
        );
    }
}

impl Attacher {
    /// What the canonical solution's run `verdict` gives problem `index`: its outputs,
    /// written to the cache, made its judging tests.
    pub fn attach(&self, problems: &ProblemSet, index: usize, verdict: &Verdict) -> Result<Attached, EvalError> {
        let (store, options) = &*self.shared;
        let problem = &problems.problems[index];
        let task_id = &problem.task_id;
        tracing::debug!(task_id, duration = verdict.duration, "canonical solution run");
        let inputs = problem.evalplus.as_ref().expect("only EvalPlus problems are recorded");
        let (suite, failed) = match outputs_of(verdict) {
            Ok(phases) => {
                store.write(task_id, &phases)?;
                (judging_suite(inputs, phases, options), None)
            }
            Err(why) => (unjudgeable(&why), Some(why)),
        };
        Ok(Attached { problem: index, task_id: task_id.clone(), code: with_tests(&problem.code, suite), failed })
    }
}

/// Tests that judge every sample `unjudgeable`, for want of expected outputs.
fn unjudgeable(why: &str) -> Suite {
    Suite::new(json!({"unjudgeable": format!("{NO_EXPECTED_OUTPUTS}: {why}"), "phases": []}), 1, None)
}

fn with_tests(code: &ProblemCode, suite: Suite) -> Arc<ProblemCode> {
    Arc::new(ProblemCode {
        prompt: code.prompt.clone(),
        tests: Tests::Calls(Arc::new(suite)),
        entry_point: code.entry_point.clone(),
    })
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
