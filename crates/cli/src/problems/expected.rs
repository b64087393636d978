//! EvalPlus's expected outputs: what each problem's canonical solution returns for every
//! input, and how long each call took, which sets the input's time limit.
//!
//! They are computed here, by running the canonical solutions in the sandbox through the
//! judge exactly as candidates are run, and kept in a cache named by the problem file's
//! SHA-256 and the interpreter's version, so a file is measured once per machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use passk_runner::{CancellationToken, Candidate, PoolOptions, ProblemCode, Program, Status, Tests};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::evalplus::{judging_suite, recording_suite, Recorded};
use super::{ProblemSet, SetOptions};
use crate::error::CommandError;
use crate::report::plural;
use crate::say::say;

/// What the cache file holds.
#[derive(Debug, Serialize, Deserialize)]
struct Cache {
    problems_sha256: String,
    python: String,
    /// Per task id: each phase's outputs and times; or why the canonical solution could
    /// not give them.
    problems: BTreeMap<String, Result<Vec<Recorded>, String>>,
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

/// Gives every EvalPlus problem of `problems` its judging tests, from the cache or by
/// running the canonical solutions now. A problem whose canonical solution fails is
/// judged `unjudgeable`, with a warning.
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
    let python = pool.interpreter.version.clone();
    let path = cache_dir.join(format!("expected-{}-python{python}.json", problems.sha256));
    let cache = match read(&path, &problems.sha256, &python) {
        Some(cache) => {
            tracing::info!(path = %path.display(), "expected outputs from the cache");
            cache
        }
        None => {
            say!(
                "computing expected outputs: running the canonical solutions of {} on every input (cached in {})",
                plural(problems.problems.len(), "problem"),
                path.display()
            );
            let cache = compute(problems, options, pool, interrupt).await?;
            let write_error = |source| CommandError::Write { path: path.display().to_string(), source };
            std::fs::create_dir_all(cache_dir).map_err(write_error)?;
            let text = serde_json::to_vec(&cache).map_err(|error| write_error(error.into()))?;
            crate::output::write_atomically(&path, &text).map_err(write_error)?;
            cache
        }
    };
    let mut failing = Vec::new();
    for problem in &mut problems.problems {
        let Some(inputs) = &problem.evalplus else { continue };
        let suite = match cache.problems.get(&problem.task_id) {
            Some(Ok(recorded)) => judging_suite(inputs, recorded, options),
            other => {
                let why = match other {
                    Some(Err(why)) => why.clone(),
                    _ => "no expected outputs were recorded".to_owned(),
                };
                failing.push(format!("{} ({why})", problem.task_id));
                let data = json!({"unjudgeable": format!("the canonical solution gives no expected outputs: {why}"), "phases": []});
                passk_runner::Suite::new(data, 1, None)
            }
        };
        let code = &problem.code;
        problem.code = Arc::new(ProblemCode {
            prompt: code.prompt.clone(),
            tests: Tests::Calls(Arc::new(suite)),
            entry_point: code.entry_point.clone(),
        });
    }
    if !failing.is_empty() {
        say!(
            "warning: {} cannot be judged, for want of expected outputs: {}",
            plural(failing.len(), "problem"),
            crate::report::first_few(&failing, 5)
        );
    }
    Ok(())
}

fn read(path: &Path, sha256: &str, python: &str) -> Option<Cache> {
    let text = std::fs::read(path).ok()?;
    let cache: Cache = serde_json::from_slice(&text).ok()?;
    (cache.problems_sha256 == sha256 && cache.python == python).then_some(cache)
}

/// Runs each EvalPlus problem's canonical solution on every input, recording what it
/// returns and how long each call takes.
async fn compute(
    problems: &ProblemSet,
    options: &SetOptions,
    pool: PoolOptions,
    interrupt: &CancellationToken,
) -> Result<Cache, CommandError> {
    let python = pool.interpreter.version.clone();
    let programs = problems.problems.iter().map(|problem| {
        let (inputs, solution) = (problem.evalplus.as_ref()?, problem.canonical_solution.as_ref()?);
        let code = ProblemCode {
            prompt: problem.code.prompt.clone(),
            tests: Tests::Calls(Arc::new(recording_suite(inputs, options))),
            entry_point: problem.code.entry_point.clone(),
        };
        Some(Program::new(&Arc::new(code), &Candidate::Completion(solution.clone())))
    });
    let runs = crate::canonical::run_programs(pool, programs.collect(), 1, None, interrupt).await?;
    let mut recorded = BTreeMap::new();
    for (problem, verdicts) in problems.problems.iter().zip(runs) {
        if problem.evalplus.is_none() {
            continue;
        }
        let outcome = match verdicts.as_deref() {
            Some([verdict]) if verdict.status == Status::Passed => verdict
                .phases
                .iter()
                .map(|phase| match (&phase.outputs, &phase.times) {
                    (Some(outputs), Some(times)) => Ok(Recorded { outputs: outputs.clone(), times: times.clone() }),
                    _ => Err(format!("phase {} recorded nothing", phase.phase)),
                })
                .collect(),
            Some([verdict]) => Err(format!("{}: {}", verdict.status, verdict.detail)),
            _ => Err("it has no canonical solution".to_owned()),
        };
        recorded.insert(problem.task_id.clone(), outcome);
    }
    Ok(Cache { problems_sha256: problems.sha256.clone(), python, problems: recorded })
}
