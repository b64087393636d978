//! EvalPlus's HumanEval+ and MBPP+: each problem's base and plus inputs, judged against
//! what its canonical solution returns for them.
//!
//! The inputs stay text until the interpreter reads them, as EvalPlus does, with
//! Python's JSON reader: the released files hold `Infinity` and integers beyond 64 bits
//! (see `raw`). Until the expected outputs are known (`expected`), a problem's tests
//! record what the candidate returns: that is how the canonical solution is run.

use std::sync::Arc;
use std::time::Duration;

use passk_runner::{ProblemCode, Suite, Tests};
use serde_json::{json, Value};

use super::{raw, Problem, SetOptions, Statement};
use crate::error::InputError;
use crate::jsonl::JsonlReader;

/// EvalPlus's defaults: an input's limit is max(1 s, 4 x the canonical solution's time).
pub const MIN_TIME_LIMIT: f64 = 1.0;
pub const TIME_LIMIT_FACTOR: f64 = 4.0;
/// EvalPlus bounds the time a phase may take at 60 s, plus one.
const PHASE_CEILING: f64 = 60.0;
/// Bytes of expected outputs (in base64) a judge loads in a second, at the least.
const LOADED_PER_SECOND: f64 = 10e6;

/// A problem's inputs, as the file gives them.
#[derive(Debug)]
pub struct EvalPlusInputs {
    /// `humaneval` or `mbpp`: which suite's special cases apply.
    pub dataset: &'static str,
    /// MBPP+'s task number, by which some inputs are rebuilt.
    pub task: Option<u64>,
    pub entry_point: String,
    pub atol: f64,
    pub base: Inputs,
    pub plus: Inputs,
}

/// One phase's inputs: the JSON text of the list of argument lists, and how many.
#[derive(Debug)]
pub struct Inputs {
    pub text: String,
    pub count: usize,
}

pub fn read(mut reader: JsonlReader) -> Result<Vec<(usize, Problem)>, InputError> {
    let source = reader.source().to_owned();
    let mut problems = Vec::new();
    let pending =
        Arc::new(Suite::new(json!({"unjudgeable": "its expected outputs were never computed", "phases": []}), 1, None));
    while let Some(next) = reader.next_text() {
        let (line, text) = next?;
        let fields = raw::fields(text).map_err(|message| InputError::Json { path: source.clone(), line, message })?;
        let get = |field: &'static str| {
            fields.iter().find(|(name, _)| name == field).map(|(_, value)| *value).ok_or_else(|| InputError::Missing {
                path: source.clone(),
                line,
                field,
            })
        };
        let string = |field: &'static str| -> Result<String, InputError> {
            serde_json::from_str(get(field)?).map_err(|_| InputError::WrongType {
                path: source.clone(),
                line,
                field,
                expected: "a string",
            })
        };
        let task_id = string("task_id")?;
        let prompt = string("prompt")?;
        let entry_point = string("entry_point")?;
        let canonical_solution = string("canonical_solution")?;
        if !super::is_identifier(&entry_point) {
            return Err(InputError::EntryPoint { path: source.clone(), line, value: entry_point });
        }
        let atol = match fields.iter().find(|(name, _)| name == "atol") {
            None => 0.0,
            Some((_, text)) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Number(number)) => number.as_f64().unwrap_or(0.0),
                Ok(Value::Null) => 0.0,
                _ => {
                    return Err(InputError::WrongType {
                        path: source.clone(),
                        line,
                        field: "atol",
                        expected: "a number",
                    })
                }
            },
        };
        let inputs = |field: &'static str| -> Result<Inputs, InputError> {
            let text = get(field)?;
            // MbppPlus v0.2.0 gives Mbpp/793 `{}` for its plus inputs, which EvalPlus
            // iterates as none.
            if raw::fields(text).is_ok_and(|fields| fields.is_empty()) {
                return Ok(Inputs { text: "[]".to_owned(), count: 0 });
            }
            let count = raw::array_len(text).ok_or_else(|| InputError::WrongType {
                path: source.clone(),
                line,
                field,
                expected: "a list of argument lists",
            })?;
            Ok(Inputs { text: text.to_owned(), count })
        };
        let (dataset, task) = match task_id.strip_prefix("Mbpp/") {
            Some(number) => ("mbpp", number.parse().ok()),
            None => ("humaneval", None),
        };
        let inputs = Arc::new(EvalPlusInputs {
            dataset,
            task,
            entry_point: entry_point.clone(),
            atol,
            base: inputs("base_input")?,
            plus: inputs("plus_input")?,
        });
        // Judged only once its expected outputs are attached (expected::attach).
        let tests = Tests::Calls(pending.clone());
        let code = Arc::new(ProblemCode { prompt, tests, entry_point });
        problems.push((
            line,
            Problem {
                task_id,
                code,
                canonical_solution: Some(canonical_solution),
                evalplus: Some(inputs),
                statement: Statement::default(),
            },
        ));
    }
    Ok(problems)
}

impl EvalPlusInputs {
    fn phases(&self, base_only: bool) -> Vec<(&'static str, &Inputs)> {
        let mut phases = vec![("base", &self.base)];
        if !base_only {
            phases.push(("plus", &self.plus));
        }
        phases
    }

    fn common(&self) -> serde_json::Map<String, Value> {
        let mut common = serde_json::Map::new();
        common.insert("entry_point".into(), json!(self.entry_point));
        common.insert("dataset".into(), json!(self.dataset));
        common.insert("task".into(), json!(self.task));
        common.insert("atol".into(), json!(self.atol));
        common.insert("compare".into(), json!("evalplus"));
        common
    }
}

/// The suite that runs the canonical solution on every input and records its outputs
/// and times: every phase, without per-input limits.
pub fn recording_suite(inputs: &EvalPlusInputs, options: &SetOptions) -> Suite {
    let limit = RECORDING_LIMIT.max(options.timeout);
    let phases: Vec<Value> = inputs
        .phases(false)
        .into_iter()
        .map(|(name, phase)| {
            json!({"name": name, "inputs": phase.text, "count": phase.count, "timeout": limit.as_secs_f64()})
        })
        .collect();
    let mut data = inputs.common();
    data.insert("record".into(), json!(true));
    data.insert("all".into(), json!(true));
    data.insert("phases".into(), Value::Array(phases));
    let runs = data["phases"].as_array().map_or(0, Vec::len);
    Suite::new(Value::Object(data), runs, Some(limit * u32::try_from(runs).unwrap_or(1)))
}

/// How long the canonical solution may take over one phase while it is recorded: a guard
/// against a hang, generous, since the outputs are computed once (Mbpp/255's plus phase,
/// which encodes a 1.2 GB answer, took over 120 s on a busy 2-CPU machine).
const RECORDING_LIMIT: Duration = Duration::from_secs(600);

/// What the canonical solution returned for one phase.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    /// The judge's encoding of each input's output, in base64.
    pub outputs: Vec<String>,
    pub times: Vec<f64>,
    /// The judge's encoding of each input's arguments, in base64: each call is sent to
    /// the candidates as these bytes, without encoding its inputs again.
    pub arguments: Vec<String>,
}

/// The suite that judges candidates: each input's limit from the canonical solution's
/// time, and its expected output.
pub fn judging_suite(inputs: &EvalPlusInputs, recorded: Vec<Recorded>, options: &SetOptions) -> Suite {
    let mut budget = 0.0;
    let canonical_time: f64 = recorded.iter().flat_map(|phase| &phase.times).sum();
    let phases: Vec<Value> = inputs
        .phases(options.base_only)
        .into_iter()
        .zip(recorded)
        .map(|((name, phase), recorded)| {
            let limits: Vec<f64> = recorded
                .times
                .iter()
                .map(|time| options.min_time_limit.max(options.time_limit_factor * time))
                .collect();
            // EvalPlus's ceiling bounds the time its canonical solution's calls take; passk's
            // times include an answer's encoding and transfer, so a phase
            // whose canonical run took more than a quarter of the ceiling (Mbpp/255's 1.2 GB
            // answer) gets the factor's share of that run instead.
            let recorded_time: f64 = recorded.times.iter().sum();
            let ceiling = PHASE_CEILING.max(options.time_limit_factor * recorded_time);
            let timeout = limits.iter().sum::<f64>().min(ceiling) + 1.0;
            // The judge loads the phase's expected outputs and calls before the candidate starts.
            let bytes: usize = recorded.outputs.iter().chain(&recorded.arguments).map(String::len).sum();
            budget += timeout + bytes as f64 / LOADED_PER_SECOND;
            let rule = format!(
                ", its limit (the larger of {} s and {} x the canonical solution's time)",
                options.min_time_limit, options.time_limit_factor
            );
            // Moved, not copied: a phase's outputs may be tens of megabytes.
            let strings = |texts: Vec<String>| Value::Array(texts.into_iter().map(Value::String).collect());
            json!({
                "name": name,
                "inputs": phase.text,
                "count": phase.count,
                "expected": strings(recorded.outputs),
                "expected_form": "base64-each",
                "arguments": strings(recorded.arguments),
                "limits": limits,
                "times": recorded.times,
                "limit_rule": rule,
                "timeout": timeout,
            })
        })
        .collect();
    let runs = phases.len();
    let mut data = inputs.common();
    data.insert("record".into(), json!(false));
    data.insert("all".into(), json!(options.all_tests));
    data.insert("phases".into(), Value::Array(phases));
    Suite::new(Value::Object(data), runs, Some(Duration::from_secs_f64(budget)))
        .with_expected_time(Duration::from_secs_f64(canonical_time))
}
