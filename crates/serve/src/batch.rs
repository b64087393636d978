//! `POST /evaluate`: many samples judged in one call, each against all of its problem's
//! tests on the server: no round trip per test, as a trainer that sends each test case
//! to `run_code` makes.
//!
//! The problems are a set the server loaded at start, by name, or given inline as
//! records of any format passk reads (HumanEval's assert code, MBPP's asserts, APPS's
//! calls with expected values, standard-input pairs). The samples are samples-file
//! records. Each answer line is the sample's line of a results file, as `passk
//! evaluate` writes it; with `k`, the scores follow. With `"stream": true` the lines go
//! out as NDJSON as each verdict is decided, with the sample's `index`, and the scores
//! come last.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State as Shared;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use passk_eval::served::Admitted;
use passk_formats::problems::{Format, ProblemSet, SetOptions};
use passk_formats::results::ResultLine;
use passk_runner::{JobLimits, Language, Program, Status, Tests, Verdict};
use passk_scorer::{summarize, Counts, Metric, Summary};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, Semaphore};

use crate::engine::Engine;
use crate::error::Refusal;
use crate::state::{parse, State};

/// The most values of k one request may ask pass@k at.
const MOST_KS: usize = 100;

/// Names the request's samples in errors, with the sample's position from 1 as its line.
const SAMPLES: &str = "the request's samples";
const PROBLEMS: &str = "the request's problems";

#[derive(Debug, Deserialize)]
pub struct EvaluateRequest {
    /// A loaded set's name, or problem records.
    problems: ProblemsGiven,
    /// The inline records' format, if it is not to be told from the first.
    #[serde(default)]
    format: Option<String>,
    samples: Vec<Map<String, Value>>,
    /// Take the program out of raw model output, as `--extract` does.
    #[serde(default)]
    extract: bool,
    /// The language of samples that name none (`--language`).
    #[serde(default)]
    language: Option<String>,
    /// Each sample's wall-clock limit in seconds, instead of the server's.
    #[serde(default)]
    timeout: Option<f64>,
    /// Score pass@k at each of these.
    #[serde(default)]
    k: Vec<u64>,
    #[serde(default)]
    stream: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ProblemsGiven {
    Loaded(String),
    Inline(Vec<Value>),
}

/// One sample ready to run.
struct Queued {
    fields: Map<String, Value>,
    problem: usize,
    program: Program,
}

pub async fn handle(Shared(state): Shared<Arc<State>>, body: Bytes) -> Result<Response, Refusal> {
    let request: EvaluateRequest = parse(&body, "evaluate request")?;
    // Each k is scored over every problem, on the thread that serves requests: a
    // million of them would hold it for minutes.
    if request.k.len() > MOST_KS {
        return Err(Refusal::BadRequest(format!(
            "k holds {} values: at most {MOST_KS} are scored in one request",
            request.k.len()
        )));
    }
    let engine = state.engine()?;
    let problems = problems(&engine, &request, state.allow_inline_test_code)?;
    let queued = samples(&engine, &problems, &request)?;
    let timeout = match request.timeout {
        Some(seconds)
            if seconds.is_finite() && seconds > 0.0 && Duration::from_secs_f64(seconds) <= state.max_timeout =>
        {
            Some(Duration::from_secs_f64(seconds))
        }
        Some(seconds) => {
            return Err(Refusal::BadRequest(format!(
                "timeout is {seconds}: give seconds above 0, at most this server's {} (--max-timeout)",
                state.max_timeout.as_secs_f64()
            )))
        }
        None => None,
    };
    if request.k.contains(&0) {
        return Err(Refusal::BadRequest("k holds 0: pass@k is for k of 1 or more".into()));
    }
    let window = window(queued.len(), engine.served.capacity());
    let room = engine.served.admit(window).map_err(|full| {
        Refusal::RetryLater(format!(
            "the queue has no room for {window} more programs ({} of {} taken)",
            full.queued, full.capacity
        ))
    })?;
    let scoring = Scoring { ks: request.k.clone(), problems: problems.clone() };
    let decided = judge(state.clone(), engine, queued, JobLimits::timeout(timeout), room);
    if request.stream {
        return Ok(stream(decided, scoring));
    }
    let mut decided = decided;
    let mut lines: Vec<Option<(usize, Value)>> = Vec::new();
    let mut tally = Tally::default();
    while let Some(line) = decided.recv().await {
        tally.add(&line);
        let index = line.index;
        if lines.len() <= index {
            lines.resize_with(index + 1, || None);
        }
        lines[index] = Some((line.problem, line.result));
    }
    let results: Vec<Value> = lines.into_iter().flatten().map(|(_, result)| result).collect();
    let mut answer = json!({"results": results});
    if !scoring.ks.is_empty() {
        answer["scores"] = scoring.scores(&tally);
    }
    Ok(Json(answer).into_response())
}

/// The problems the request names: a loaded set, or its own records.
fn problems(engine: &Engine, request: &EvaluateRequest, test_code: bool) -> Result<Arc<ProblemSet>, Refusal> {
    match &request.problems {
        ProblemsGiven::Loaded(name) => engine.sets.get(name).cloned().ok_or_else(|| {
            let loaded: Vec<&str> = engine.sets.keys().map(String::as_str).collect();
            let loaded = if loaded.is_empty() { "none".to_owned() } else { loaded.join(", ") };
            Refusal::NotFound(format!(
                "this server has no problem set {name:?} (it loaded {loaded}); give the problems inline as records"
            ))
        }),
        ProblemsGiven::Inline(records) => {
            let format = match &request.format {
                None => None,
                Some(name) => Some(Format::named(name).ok_or_else(|| {
                    let known: Vec<&str> = Format::all().map(Format::name).collect();
                    Refusal::BadRequest(format!("format {name:?} is not one passk reads: {}", known.join(", ")))
                })?),
            };
            let options = SetOptions { format, ..SetOptions::default() };
            let set = ProblemSet::from_records(PROBLEMS, records, &options)?;
            // Tests given as code run in the judge, and decide the verdict: where the
            // caller is the model being trained (a trainer that lets rollouts call the
            // server), its own tests would pass anything.
            let with_code = set.problems.iter().find(|problem| matches!(problem.code.tests, Tests::Check(_)));
            if let (Some(problem), false) = (with_code, test_code) {
                return Err(Refusal::BadRequest(format!(
                    "problem {:?} carries its tests as code ({} tests), and this server runs no test code a \
                     request gives: a caller could send tests that pass anything. Load the set at start (passk \
                     serve --problems) and name it, give tests as data (inputs and expected outputs: APPS, \
                     CodeContests, LiveCodeBench), or start the server with --allow-inline-test-code where \
                     every caller is trusted",
                    problem.task_id,
                    set.format.name()
                )));
            }
            if set.format == Format::Evalplus {
                return Err(Refusal::BadRequest(
                    "HumanEval+ and MBPP+ problems need their expected outputs computed first: load the set at \
                     start (passk serve --problems) and name it"
                        .into(),
                ));
            }
            Ok(Arc::new(set))
        }
    }
}

/// The request's samples, checked, as programs.
fn samples(engine: &Engine, problems: &ProblemSet, request: &EvaluateRequest) -> Result<Vec<Queued>, Refusal> {
    let default = match &request.language {
        None => None,
        Some(name) => Some(Language::named(name).ok_or_else(|| {
            Refusal::BadRequest(format!("language {name:?} is not one passk runs: {}", Language::names().join(", ")))
        })?),
    };
    let toolchains = engine.toolchains.with_default(default);
    let mut queued = Vec::with_capacity(request.samples.len());
    for (index, fields) in request.samples.iter().enumerate() {
        let mut sample = passk_formats::sample::sample(SAMPLES, problems, (index + 1, fields.clone()))?;
        if let Some(language) = toolchains.check(SAMPLES, &sample, problems)? {
            if toolchains.toolchain(language).is_none() {
                let why = engine.unavailable.get(&language.name).cloned().unwrap_or_default();
                return Err(Refusal::BadRequest(format!(
                    "sample {}: {} programs cannot run on this server: {why}",
                    index + 1,
                    language.name
                )));
            }
        }
        let program = passk_eval::sample_program::program(&mut sample, problems, &toolchains, request.extract);
        queued.push(Queued { fields: sample.fields, problem: sample.problem, program });
    }
    if queued.is_empty() {
        return Err(Refusal::BadRequest("samples is empty: give at least one sample".into()));
    }
    Ok(queued)
}

/// A sample's result line, as it is decided.
struct Decided {
    index: usize,
    problem: usize,
    status: Status,
    result: Value,
}

/// How many of a batch's programs are queued or running at once: all of them where the
/// queue holds them, else half the queue, so that a batch larger than the queue runs
/// through it and other callers keep room beside it.
fn window(samples: usize, capacity: usize) -> usize {
    if samples <= capacity {
        samples
    } else {
        (capacity / 2).max(1)
    }
}

/// Runs every sample, at most as many at once as `room` holds, and sends each result
/// line as its verdict comes; the room is given back once the last is in. Once the
/// caller is gone (the receiver dropped), no more samples are started: those running
/// keep their room until their verdicts are in.
fn judge(
    state: Arc<State>,
    engine: Arc<Engine>,
    queued: Vec<Queued>,
    limits: JobLimits,
    room: Admitted,
) -> mpsc::UnboundedReceiver<Decided> {
    let (send, receive) = mpsc::unbounded_channel();
    let in_flight = Arc::new(Semaphore::new(room.count()));
    let room = Arc::new(room);
    tokio::spawn(async move {
        for (index, sample) in queued.into_iter().enumerate() {
            let turn = tokio::select! {
                biased;
                () = send.closed() => return,
                turn = in_flight.clone().acquire_owned() => turn,
            };
            let Ok(turn) = turn else { return };
            if send.is_closed() {
                return;
            }
            let (state, engine, send, room) = (state.clone(), engine.clone(), send.clone(), room.clone());
            tokio::spawn(async move {
                let verdict: Verdict = engine.served.run(sample.program, limits, &room).await;
                drop(turn);
                state.metrics.verdict(verdict.status.as_str(), verdict.duration);
                let line = ResultLine::new(sample.fields, &verdict);
                let result = serde_json::to_value(&line).unwrap_or_else(|error| json!({"error": error.to_string()}));
                let _ = send.send(Decided { index, problem: sample.problem, status: verdict.status, result });
            });
        }
    });
    receive
}

/// The answer as NDJSON: each result line with its `index` as it is decided, then the
/// scores, if asked for, and a last line that says how many were judged.
fn stream(mut decided: mpsc::UnboundedReceiver<Decided>, scoring: Scoring) -> Response {
    let (lines, body) = mpsc::channel::<Result<Bytes, std::convert::Infallible>>(64);
    tokio::spawn(async move {
        let mut tally = Tally::default();
        loop {
            let line = tokio::select! {
                line = decided.recv() => line,
                // The client went away: the batch starts nothing more.
                () = lines.closed() => return,
            };
            let Some(line) = line else { break };
            tally.add(&line);
            let mut result = line.result;
            if let Value::Object(fields) = &mut result {
                fields.insert("index".into(), json!(line.index));
            }
            if lines.send(Ok(ndjson(&result))).await.is_err() {
                // The client went away.
                return;
            }
        }
        let mut last = json!({"done": true, "judged": tally.judged});
        if !scoring.ks.is_empty() {
            last["scores"] = scoring.scores(&tally);
        }
        let _ = lines.send(Ok(ndjson(&last))).await;
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(body));
    ([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response()
}

fn ndjson(value: &Value) -> Bytes {
    let mut line = value.to_string();
    line.push('\n');
    Bytes::from(line)
}

/// Samples and passes per problem, as verdicts come.
#[derive(Debug, Default)]
struct Tally {
    judged: usize,
    /// By problem position: (samples counted, passed).
    counts: BTreeMap<usize, Counts>,
    /// Samples with no verdict to count: infrastructure faults and unjudgeable problems.
    uncounted: usize,
}

impl Tally {
    fn add(&mut self, decided: &Decided) {
        self.judged += 1;
        if matches!(decided.status, Status::Infrastructure | Status::Unjudgeable) {
            self.uncounted += 1;
            return;
        }
        let counts = self.counts.entry(decided.problem).or_default();
        counts.n += 1;
        counts.c += u64::from(decided.status == Status::Passed);
    }
}

/// pass@k over the problems the samples answered.
struct Scoring {
    ks: Vec<u64>,
    problems: Arc<ProblemSet>,
}

impl Scoring {
    fn scores(&self, tally: &Tally) -> Value {
        let counts: Vec<Counts> = tally.counts.values().copied().collect();
        let per_problem: Map<String, Value> = tally
            .counts
            .iter()
            .map(|(&problem, counts)| {
                (self.problems.problems[problem].task_id.clone(), json!({"n": counts.n, "c": counts.c}))
            })
            .collect();
        let mut scores = Map::new();
        match summarize(&counts, &self.ks, Metric::PassAt) {
            Ok(summaries) => {
                for summary in summaries {
                    let value = match &summary {
                        Summary::Estimated { mean, .. } => json!(mean),
                        Summary::LeftOut { .. } => Value::Null,
                    };
                    scores.insert(summary.name(), value);
                }
            }
            Err(error) => {
                scores.insert("error".into(), json!(error.to_string()));
            }
        }
        json!({
            "pass_at_k": scores,
            "problems": per_problem.len(),
            "uncounted": tally.uncounted,
            "per_problem": per_problem,
        })
    }
}
