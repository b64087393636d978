//! `POST /run_code`, in SandboxFusion's schema: one program, run once as it is, on its
//! input, with its files; how its build and run ended and what they printed.
//!
//! A trainer's reward is decided from this answer, so every way it can go wrong is told
//! apart: the program's own failure is `Failed`, with the build's or the run's result
//! saying how; a fault of the machine is `SandboxError`, which SandboxFusion's client
//! raises on and verl turns into an error, never a reward the program earned; no room in
//! the queue is an HTTP 504, which both retry.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State as Shared;
use axum::Json;
use base64::Engine as _;
use passk_runner::{Candidate, JobLimits, Language, ProblemCode, Program, ProgramRun, Status, Tests, Verdict};
use serde::{Deserialize, Serialize};

use crate::error::Refusal;
use crate::state::{parse, State};

/// SandboxFusion's request. Fields it does not know are ignored, as SandboxFusion's own
/// server ignores them (ROLL sends `expected_stdout`).
#[derive(Debug, Deserialize)]
pub struct RunCodeRequest {
    code: String,
    language: String,
    #[serde(default = "ten_seconds")]
    compile_timeout: f64,
    #[serde(default = "ten_seconds")]
    run_timeout: f64,
    /// MiB; -1 (SandboxFusion's default) for the server's own limit.
    #[serde(default, rename = "memory_limit_MB")]
    memory_limit_mb: Option<i64>,
    #[serde(default)]
    stdin: Option<String>,
    /// Paths in the program's working directory to their contents, in base64.
    #[serde(default)]
    files: BTreeMap<String, Option<String>>,
    #[serde(default)]
    fetch_files: Vec<String>,
}

fn ten_seconds() -> f64 {
    10.0
}

/// SandboxFusion's answer.
#[derive(Debug, Serialize)]
pub struct RunCodeResponse {
    status: RunStatus,
    message: String,
    compile_result: Option<CommandRunResult>,
    run_result: Option<CommandRunResult>,
    executor_pod_name: Option<String>,
    files: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
enum RunStatus {
    Success,
    Failed,
    SandboxError,
}

#[derive(Debug, Serialize)]
struct CommandRunResult {
    status: CommandRunStatus,
    execution_time: f64,
    return_code: Option<i32>,
    stdout: String,
    stderr: String,
}

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
enum CommandRunStatus {
    Finished,
    TimeLimitExceeded,
}

pub async fn handle(Shared(state): Shared<Arc<State>>, body: Bytes) -> Result<Json<RunCodeResponse>, Refusal> {
    let request: RunCodeRequest = parse(&body, "run_code request")?;
    let engine = state.engine()?;
    let language = language(&request.language, &engine.languages())?;
    let toolchain = match language.program {
        None => None,
        Some(_) => match engine.toolchains.toolchain(language) {
            Some(toolchain) => Some(toolchain.clone()),
            None => {
                let why = engine.unavailable.get(&language.name).cloned().unwrap_or_default();
                return Err(Refusal::BadRequest(format!(
                    "{} programs cannot run on this server: {why}",
                    language.name
                )));
            }
        },
    };
    let limits = JobLimits {
        timeout: Some(seconds("run_timeout", request.run_timeout, state.max_timeout)?),
        compile_timeout: Some(seconds("compile_timeout", request.compile_timeout, state.max_timeout)?),
        memory_mib: memory_mib(request.memory_limit_mb)?,
    };
    let files = files(&request.files)?;
    if request.fetch_files.len() > MOST_PATHS {
        return Err(Refusal::BadRequest(format!(
            "fetch_files names {} paths, more than the {MOST_PATHS} a request may",
            request.fetch_files.len()
        )));
    }
    let fetch = request.fetch_files.iter().map(|path| inside("fetch_files", path).map(|()| path.clone()));
    let fetch = fetch.collect::<Result<Vec<_>, _>>()?;
    let code = if request.language == "pytest" { pytest(&request.code) } else { request.code };
    let problem = Arc::new(ProblemCode {
        prompt: String::new(),
        tests: Tests::plain(request.stdin.as_deref().unwrap_or_default(), &files, &fetch),
        entry_point: String::new(),
    });
    let mut program = Program::new(&problem, &Candidate::Solution(code));
    if let Some(toolchain) = toolchain {
        program = program.in_language(toolchain);
    }
    let room = engine.served.admit(1).map_err(|full| {
        Refusal::RetryLater(format!("the queue is full ({} of {} programs)", full.queued, full.capacity))
    })?;
    // The program runs in a task of its own, which holds its room until its verdict is
    // in: a client that hangs up drops this handler, not the program, which would
    // otherwise run on with its room given back, and the queue would admit more than it
    // holds.
    let running = tokio::spawn(async move {
        let verdict = engine.served.run(program, limits, &room).await;
        drop(room);
        state.metrics.verdict(verdict.status.as_str(), verdict.duration);
        verdict
    });
    let verdict = running.await.unwrap_or_else(|_| Verdict::infrastructure("the program's task panicked".to_owned()));
    Ok(Json(answer(verdict)))
}

/// Paths a request may give in `files`, or name in `fetch_files`.
const MOST_PATHS: usize = 4096;
/// A path's bytes, its components, and one component's bytes (a file name's most on Linux).
const LONGEST_PATH: usize = 1024;
const MOST_COMPONENTS: usize = 32;
const LONGEST_NAME: usize = 255;

/// The memory limit a request asks for: none of its own (the server's) for -1 or 0, as
/// SandboxFusion reads them; never more than the server's own, which the pool's control
/// groups were made with (`Pool::run` takes the smaller).
fn memory_mib(asked: Option<i64>) -> Result<Option<u64>, Refusal> {
    match asked {
        None | Some(-1 | 0) => Ok(None),
        Some(mib) if mib < 0 => Err(Refusal::BadRequest(format!(
            "memory_limit_MB is {mib}: give MiB above 0, or -1 for the server's limit"
        ))),
        // Past 2^40 MiB the limit in bytes would not fit in 64 bits, and no machine has it.
        Some(mib) => Ok(Some(mib.unsigned_abs().min(1 << 40))),
    }
}

/// The language SandboxFusion's name gives, among those this server runs.
fn language(name: &str, runs: &[String]) -> Result<&'static Language, Refusal> {
    // SandboxFusion's pytest runs a Python file of tests.
    let passk_name = if name == "pytest" { "python" } else { name };
    Language::named(passk_name).filter(|language| runs.contains(&language.name)).ok_or_else(|| {
        Refusal::BadRequest(format!("language {name:?} is not one this server runs; it runs {}", runs.join(", ")))
    })
}

/// A Python file of tests run as pytest runs it: its own exit status is pytest's.
fn pytest(code: &str) -> String {
    format!(
        "{code}\n\nif __name__ == \"__main__\":\n    import sys as _passk_sys\n    import pytest as _passk_pytest\n    \
         _passk_sys.exit(_passk_pytest.main([\"-q\", \"-p\", \"no:cacheprovider\", __file__]))\n"
    )
}

fn seconds(field: &str, value: f64, most: Duration) -> Result<Duration, Refusal> {
    if value.is_nan() || value <= 0.0 || value.is_infinite() {
        return Err(Refusal::BadRequest(format!("{field} is {value}: give a number of seconds above 0")));
    }
    let asked = Duration::from_secs_f64(value);
    if asked > most {
        return Err(Refusal::BadRequest(format!(
            "{field} is {value} s, more than this server's most ({} s, --max-timeout)",
            most.as_secs_f64()
        )));
    }
    Ok(asked)
}

/// Refuses a path that is not inside the program's working directory, or that no file
/// system holds.
fn inside(field: &str, path: &str) -> Result<(), Refusal> {
    let shown = || {
        let mut shown: String = path.chars().take(64).collect();
        if shown.len() < path.len() {
            shown.push_str("...");
        }
        format!("{shown:?}")
    };
    if path.len() > LONGEST_PATH {
        return Err(Refusal::BadRequest(format!(
            "{field} names a path of {} bytes ({}): at most {LONGEST_PATH}",
            path.len(),
            shown()
        )));
    }
    let parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty() && *part != ".").collect();
    if path.starts_with('/') || path.contains('\0') || parts.is_empty() || parts.contains(&"..") {
        return Err(Refusal::BadRequest(format!(
            "{field} names {}: paths are relative to the program's working directory, without `..`",
            shown()
        )));
    }
    if parts.len() > MOST_COMPONENTS {
        return Err(Refusal::BadRequest(format!(
            "{field} names {}, {} directories deep: at most {MOST_COMPONENTS}",
            shown(),
            parts.len()
        )));
    }
    if parts.iter().any(|part| part.len() > LONGEST_NAME) {
        return Err(Refusal::BadRequest(format!(
            "{field} names {}, with a name longer than {LONGEST_NAME} bytes",
            shown()
        )));
    }
    Ok(())
}

/// The files to put in place, each checked to be inside and to be base64, and none in
/// the place of another's directory.
fn files(given: &BTreeMap<String, Option<String>>) -> Result<BTreeMap<String, String>, Refusal> {
    if given.len() > MOST_PATHS {
        return Err(Refusal::BadRequest(format!(
            "files gives {} files, more than the {MOST_PATHS} a request may",
            given.len()
        )));
    }
    let mut directories = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeSet::new();
    for path in given.keys() {
        inside("files", path)?;
        let parts = normal(path);
        for depth in 1..parts.len() {
            directories.insert(parts[..depth].join("/"));
        }
        if !names.insert(parts.join("/")) {
            return Err(Refusal::BadRequest(format!("files gives {path:?} twice, under two spellings")));
        }
    }
    if let Some(both) = names.intersection(&directories).next() {
        return Err(Refusal::BadRequest(format!("files gives {both:?} as a file and as a directory of others")));
    }
    let mut files = BTreeMap::new();
    for (path, content) in given {
        let content = content.clone().unwrap_or_default();
        if base64::engine::general_purpose::STANDARD.decode(&content).is_err() {
            return Err(Refusal::BadRequest(format!("files[{path:?}] is not base64")));
        }
        files.insert(path.clone(), content);
    }
    Ok(files)
}

/// A path's components, without empty ones and `.`.
fn normal(path: &str) -> Vec<&str> {
    path.split('/').filter(|part| !part.is_empty() && *part != ".").collect()
}

/// The verdict in SandboxFusion's words.
fn answer(verdict: Verdict) -> RunCodeResponse {
    let stage = |name: &str| verdict.runs.iter().find(|run| run.stage == name).map(result);
    let (compile_result, run_result) = (stage("compile"), stage("run"));
    let sandbox_error = |message: String| RunCodeResponse {
        status: RunStatus::SandboxError,
        message,
        compile_result: None,
        run_result: None,
        executor_pod_name: None,
        files: BTreeMap::new(),
    };
    if matches!(verdict.status, Status::Infrastructure | Status::Unjudgeable) {
        return sandbox_error(verdict.detail);
    }
    if compile_result.is_none() && run_result.is_none() {
        // A verdict with no run in it was not reached by running the program.
        return sandbox_error(format!("the program was not run: {}", verdict.detail));
    }
    let finished_well =
        |result: &CommandRunResult| result.status == CommandRunStatus::Finished && result.return_code == Some(0);
    let success = compile_result.as_ref().map_or(true, finished_well) && run_result.as_ref().is_some_and(finished_well);
    RunCodeResponse {
        status: if success { RunStatus::Success } else { RunStatus::Failed },
        message: String::new(),
        compile_result,
        run_result,
        executor_pod_name: None,
        files: verdict.files,
    }
}

fn result(run: &ProgramRun) -> CommandRunResult {
    CommandRunResult {
        status: if run.ended == "timeout" { CommandRunStatus::TimeLimitExceeded } else { CommandRunStatus::Finished },
        execution_time: run.duration,
        return_code: run.return_code,
        stdout: run.stdout.clone(),
        stderr: run.stderr.clone(),
    }
}
