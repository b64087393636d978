//! Programming-contest suites: APPS, CodeContests and LiveCodeBench, as their authors
//! publish them and as SandboxFusion ships them. Most of their problems are whole
//! programs that read standard input and write standard output; the rest (APPS's
//! `fn_name`, LiveCodeBench's functional tests) call a function or a LeetCode-style
//! `Solution` method with JSON arguments. Each suite's outputs are compared by its own
//! harness's rule ([`Rule`]).

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use passk_runner::{ProblemCode, Suite, Tests};
use serde_json::{json, Map, Value};

use super::{Problem, SetOptions, Statement};
use crate::error::InputError;
use crate::fields::{optional_string_field, string_field};

/// CodeContests's language number for Python 3.
const CODE_CONTESTS_PYTHON3: u64 = 3;

/// A standard-input test.
struct Test {
    input: String,
    output: String,
}

/// APPS: `input_output` is JSON text of `inputs`, `outputs` and, for calls, `fn_name`.
pub fn apps(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    options: &SetOptions,
) -> Result<Problem, InputError> {
    let task_id = super::task_id(source, line, object, "problem_id")?;
    let bad = |message: String| InputError::Field { path: source.to_owned(), line, field: "input_output", message };
    let tests: Value = match object.get("input_output") {
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|error| bad(format!("not JSON: {error}")))?,
        Some(value @ Value::Object(_)) => value.clone(),
        _ => return Err(InputError::Missing { path: source.to_owned(), line, field: "input_output" }),
    };
    let list = |name: &str| {
        tests.get(name).and_then(Value::as_array).cloned().ok_or_else(|| bad(format!("has no list `{name}`")))
    };
    let (inputs, outputs) = (list("inputs")?, list("outputs")?);
    if inputs.len() != outputs.len() {
        return Err(bad(format!("has {} inputs but {} outputs", inputs.len(), outputs.len())));
    }
    let canonical_solution = match object.get("solutions") {
        Some(Value::String(text)) => serde_json::from_str::<Vec<String>>(text).ok().and_then(|s| s.into_iter().next()),
        Some(Value::Array(items)) => items.first().and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    let starter = object.get("starter_code").and_then(Value::as_str).unwrap_or_default();
    let code = match tests.get("fn_name").and_then(Value::as_str) {
        Some(name) => Calls {
            entry_point: entry_point(name, starter),
            rule: Rule::Apps,
            inputs_form: "arguments",
            count: inputs.len(),
            inputs: Value::Array(inputs).to_string(),
            expected: Value::Array(outputs).to_string(),
            expected_form: "values",
        }
        .code(options),
        None => {
            let text = |value: &Value| match value {
                Value::String(text) => Some(text.clone()),
                Value::Array(lines) => lines
                    .iter()
                    .map(|l| l.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .map(|l| l.join("\n")),
                _ => None,
            };
            let tests = inputs
                .iter()
                .zip(&outputs)
                .map(|(input, output)| Some(Test { input: text(input)?, output: text(output)? }))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("holds a test that is neither text nor a list of lines".into()))?;
            stdio(&tests, Rule::Apps, options)
        }
    };
    let statement = Statement {
        starter_code: Some(starter.to_owned()).filter(|code| !code.trim().is_empty()),
        ..Statement::described(optional_string_field(source, line, object, "question")?)
    };
    Ok(Problem { task_id, code: Arc::new(code), canonical_solution, evalplus: None, statement })
}

/// The texts of list `name` in `group`, the field every contest format keeps its inputs
/// and outputs in; `within` names where `group` sits in the field, for the message.
fn texts(
    group: &Value,
    name: &str,
    within: &str,
    bad: &impl Fn(String) -> InputError,
) -> Result<Vec<String>, InputError> {
    let items =
        group.get(name).and_then(Value::as_array).ok_or_else(|| bad(format!("{within}has no list `{name}`")))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("{within}`{name}` holds a value that is not text")))
        })
        .collect()
}

/// CodeContests: public, private and generated tests, each `{input: [...], output: [...]}`.
pub fn code_contests(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    options: &SetOptions,
) -> Result<Problem, InputError> {
    let task_id = string_field(source, line, object, "name")?;
    let mut tests = Vec::new();
    for field in ["public_tests", "private_tests", "generated_tests"] {
        let Some(group) = object.get(field) else { continue };
        let bad = |message: String| InputError::Field { path: source.to_owned(), line, field, message };
        let (inputs, outputs) = (texts(group, "input", "", &bad)?, texts(group, "output", "", &bad)?);
        if inputs.len() != outputs.len() {
            return Err(bad(format!("has {} inputs but {} outputs", inputs.len(), outputs.len())));
        }
        tests.extend(inputs.into_iter().zip(outputs).map(|(input, output)| Test { input, output }));
    }
    if tests.is_empty() {
        return Err(InputError::Field {
            path: source.to_owned(),
            line,
            field: "public_tests",
            message: "no tests at all".into(),
        });
    }
    let canonical_solution = object.get("solutions").and_then(|solutions| {
        let languages = solutions.get("language")?.as_array()?;
        let texts = solutions.get("solution")?.as_array()?;
        let at = languages.iter().position(|language| language.as_u64() == Some(CODE_CONTESTS_PYTHON3))?;
        texts.get(at)?.as_str().map(str::to_owned)
    });
    let code = Arc::new(stdio(&tests, Rule::CodeContests, options));
    let statement = Statement::described(optional_string_field(source, line, object, "description")?);
    Ok(Problem { task_id, code, canonical_solution, evalplus: None, statement })
}

/// SandboxFusion's files of these suites: `id`, `content` (the prompt), `labels` (JSON
/// text) and `test`, which is either JSON text of SandboxFusion's own standard-input
/// cases (`[{"input": {"stdin"}, "output": {"stdout"}}]`, its CodeContests), judged as
/// SandboxFusion judges them, or LiveCodeBench's packing (base64 of zlib of a pickle) of
/// `{"input_output": JSON text}` in APPS's shape, judged as LiveCodeBench judges it.
pub fn sandboxfusion(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    options: &SetOptions,
) -> Result<Problem, InputError> {
    let task_id = super::task_id(source, line, object, "id")?;
    let text = string_field(source, line, object, "test")?;
    let bad = |message: String| InputError::Field { path: source.to_owned(), line, field: "test", message };
    let canonical_solution = object.get("canonical_solution").and_then(Value::as_str).map(str::to_owned);
    let code = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(cases)) => {
            let text_at =
                |case: &Value, side: &str, stream: &str| Some(case.get(side)?.get(stream)?.as_str()?.to_owned());
            let tests = cases
                .iter()
                .map(|case| {
                    Some(Test { input: text_at(case, "input", "stdin")?, output: text_at(case, "output", "stdout")? })
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("holds a case without `input.stdin` or `output.stdout` text".into()))?;
            if tests.is_empty() {
                return Err(bad("holds no cases".into()));
            }
            stdio(&tests, Rule::CodeContests, options)
        }
        Ok(_) => return Err(bad("is JSON but not a list of cases".into())),
        Err(_) => {
            let packed: Value = serde_json::from_str(&unpickle_text(&text).map_err(bad)?)
                .map_err(|error| bad(format!("holds no JSON: {error}")))?;
            let input_output = packed
                .get("input_output")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("holds no `input_output` text".into()))?;
            let tests: Value = serde_json::from_str(input_output)
                .map_err(|error| bad(format!("holds `input_output` that is not JSON: {error}")))?;
            let within = "`input_output` ";
            let (inputs, outputs) = (texts(&tests, "inputs", within, &bad)?, texts(&tests, "outputs", within, &bad)?);
            if inputs.len() != outputs.len() || inputs.is_empty() {
                return Err(bad(format!("holds {} inputs and {} outputs", inputs.len(), outputs.len())));
            }
            match tests.get("fn_name").and_then(Value::as_str) {
                Some(name) => {
                    let content = object.get("content").and_then(Value::as_str).unwrap_or_default();
                    Calls {
                        entry_point: entry_point(name, content),
                        rule: Rule::Livecodebench,
                        inputs_form: "lines",
                        count: inputs.len(),
                        inputs: json!(inputs).to_string(),
                        expected: json!(outputs).to_string(),
                        expected_form: "json-texts",
                    }
                    .code(options)
                }
                None => {
                    let tests: Vec<Test> =
                        inputs.into_iter().zip(outputs).map(|(input, output)| Test { input, output }).collect();
                    stdio(&tests, Rule::Livecodebench, options)
                }
            }
        }
    };
    // SandboxFusion's `content` is the whole instruction its own runs send.
    let statement = Statement::described(optional_string_field(source, line, object, "content")?);
    Ok(Problem { task_id, code: Arc::new(code), canonical_solution, evalplus: None, statement })
}

/// LiveCodeBench: public test cases as JSON text, private ones as JSON text or as
/// base64 of zlib of a pickle of JSON text; `testtype` is `stdin` or `functional`.
pub fn livecodebench(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    options: &SetOptions,
) -> Result<Problem, InputError> {
    let task_id = super::task_id(source, line, object, "question_id")?;
    let mut cases = Vec::new();
    for field in ["public_test_cases", "private_test_cases"] {
        let bad = |message: String| InputError::Field { path: source.to_owned(), line, field, message };
        let text = match object.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::String(text)) => text.clone(),
            Some(value @ Value::Array(_)) => value.to_string(),
            Some(_) => return Err(bad("is neither text nor a list".into())),
        };
        let decoded = match serde_json::from_str::<Value>(&text) {
            Ok(value) => value,
            Err(_) => serde_json::from_str(&unpickle_text(&text).map_err(bad)?)
                .map_err(|error| bad(format!("holds no JSON: {error}")))?,
        };
        let Value::Array(items) = decoded else { return Err(bad("is not a list of test cases".into())) };
        for item in items {
            let case = |name: &str| {
                item.get(name)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| bad(format!("has a test case without `{name}`")))
            };
            cases.push((case("input")?, case("output")?, case("testtype")?));
        }
    }
    if cases.is_empty() {
        return Err(InputError::Field {
            path: source.to_owned(),
            line,
            field: "public_test_cases",
            message: "no tests at all".into(),
        });
    }
    let functional = cases.iter().any(|(_, _, kind)| kind == "functional");
    let code = if functional {
        let metadata: Value = match object.get("metadata") {
            Some(Value::String(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
            Some(value) => value.clone(),
            None => Value::Null,
        };
        let name = metadata.get("func_name").and_then(Value::as_str).ok_or_else(|| InputError::Field {
            path: source.to_owned(),
            line,
            field: "metadata",
            message: "functional tests need `func_name` in the metadata".into(),
        })?;
        Calls {
            entry_point: format!("Solution.{name}"),
            rule: Rule::Livecodebench,
            inputs_form: "lines",
            inputs: json!(cases.iter().map(|(input, _, _)| input).collect::<Vec<_>>()).to_string(),
            expected: json!(cases.iter().map(|(_, output, _)| output).collect::<Vec<_>>()).to_string(),
            expected_form: "json-texts",
            count: cases.len(),
        }
        .code(options)
    } else {
        let tests: Vec<Test> = cases.into_iter().map(|(input, output, _)| Test { input, output }).collect();
        stdio(&tests, Rule::Livecodebench, options)
    };
    let statement = Statement {
        starter_code: optional_string_field(source, line, object, "starter_code")?
            .filter(|code| !code.trim().is_empty()),
        ..Statement::described(optional_string_field(source, line, object, "question_content")?)
    };
    Ok(Problem { task_id, code: Arc::new(code), canonical_solution: None, evalplus: None, statement })
}

/// The text inside LiveCodeBench's packed private tests: base64, then zlib, then a
/// pickle that may hold only a string (or lists and dicts of strings, joined as JSON).
/// The pickle is read as data by a decoder that builds no objects and runs no code: a
/// pickle naming any class or function is refused.
fn unpickle_text(packed: &str) -> Result<String, String> {
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(packed.trim())
        .map_err(|error| format!("is neither JSON nor base64: {error}"))?;
    let mut pickled = Vec::new();
    flate2::read::ZlibDecoder::new(&compressed[..])
        .read_to_end(&mut pickled)
        .map_err(|error| format!("is base64 but not zlib: {error}"))?;
    let options = serde_pickle::DeOptions::new();
    let value = serde_pickle::value_from_slice(&pickled, options)
        .map_err(|error| format!("holds a pickle that is not plain data: {error}"))?;
    let plain = plain(value).ok_or("holds a pickle of something other than strings, lists and dicts")?;
    Ok(match plain {
        Value::String(text) => text,
        other => other.to_string(),
    })
}

/// A pickled value as JSON, if it is only strings, lists and dicts of them.
fn plain(value: serde_pickle::Value) -> Option<Value> {
    use serde_pickle::{HashableValue, Value as Pickled};
    Some(match value {
        Pickled::String(text) => Value::String(text),
        Pickled::List(items) => Value::Array(items.into_iter().map(plain).collect::<Option<_>>()?),
        Pickled::Dict(entries) => Value::Object(
            entries
                .into_iter()
                .map(|(key, value)| match key {
                    HashableValue::String(key) => Some((key, plain(value)?)),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// How a suite's own harness compares a program's output with the expected one; the
/// judge applies the same rule (`sandbox/passk_driver/stdio.py`, by these names).
#[derive(Debug, Clone, Copy)]
enum Rule {
    Apps,
    CodeContests,
    Livecodebench,
}

impl Rule {
    fn name(self) -> &'static str {
        match self {
            Rule::Apps => "apps",
            Rule::CodeContests => "code-contests",
            Rule::Livecodebench => "livecodebench",
        }
    }

    /// Whether the suite's harness compares what a program printed when it ends by
    /// `sys.exit`, whatever the code: LiveCodeBench's and APPS's run it in their own
    /// process and catch SystemExit (`call_method` in each testing_util.py), where
    /// SandboxFusion runs CodeContests' programs as processes and fails a nonzero exit.
    fn compares_after_exit(self) -> bool {
        matches!(self, Rule::Apps | Rule::Livecodebench)
    }

    /// What the suite's harness puts before every program it runs, on standard input or
    /// called: an honest program may use what it imports without importing it.
    /// SandboxFusion runs CodeContests' programs as they are.
    fn preamble(self) -> Option<String> {
        match self {
            Rule::Apps => Some(APPS_PREAMBLE.to_owned()),
            Rule::CodeContests => None,
            Rule::Livecodebench => Some(livecodebench_preamble()),
        }
    }
}

/// The modules LiveCodeBench's harness imports every name of, in its order, before the
/// program (`import_string`, lcb_runner/evaluation/testing_util.py); it then imports
/// each but `builtins` and `typing` by its own name, and raises the recursion limit.
const LIVECODEBENCH_STAR_IMPORTS: [&str; 18] = [
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
    "builtins",
    "typing",
];

fn livecodebench_preamble() -> String {
    let mut text: String =
        LIVECODEBENCH_STAR_IMPORTS.iter().map(|module| format!("from {module} import *\n")).collect();
    for module in LIVECODEBENCH_STAR_IMPORTS.iter().filter(|module| !matches!(**module, "builtins" | "typing")) {
        text.push_str(&format!("import {module}\n"));
    }
    text.push_str("sys.setrecursionlimit(50000)\n\n");
    text
}

/// What APPS's harness puts before every program (`run_test`, eval/testing_util.py),
/// but that numpy, which a sample's sandbox may not offer, is imported only where it
/// can be: a program that uses `np` then fails where it could not run under APPS at all.
const APPS_PREAMBLE: &str = "import sys
import time
import itertools
from itertools import accumulate, product, permutations, combinations
import collections
from collections import Counter, OrderedDict, deque, defaultdict, ChainMap
from functools import lru_cache
import math
from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2
import fractions
from typing import List, Tuple
try:
    import numpy as np
except ImportError:
    pass
import random
import heapq
from heapq import *
";

/// A problem of standard-input tests, compared by `rule`.
fn stdio(tests: &[Test], rule: Rule, options: &SetOptions) -> ProblemCode {
    let data = json!({
        "tests": tests.iter().map(|test| json!({"input": test.input, "output": test.output})).collect::<Vec<_>>(),
        "compare": rule.name(),
        "all": options.all_tests,
        "float_tolerance": options.float_tolerance,
        "checker": options.checker,
        "preamble": rule.preamble(),
        "exit_compared": rule.compares_after_exit(),
    });
    let tests = Tests::Stdio(Arc::new(Suite::new(data, tests.len(), None)));
    ProblemCode { prompt: String::new(), tests, entry_point: String::new() }
}

/// The entry point of function `name`: a method of the candidate's `Solution` when the
/// problem's own text (its starter code) declares that class.
fn entry_point(name: &str, text: &str) -> String {
    if text.contains("class Solution") {
        format!("Solution.{name}")
    } else {
        name.to_owned()
    }
}

/// A problem of calls whose expected outputs the suite gives, in the forms the judge
/// reads them (`calls.py`).
struct Calls {
    entry_point: String,
    rule: Rule,
    inputs_form: &'static str,
    inputs: String,
    expected: String,
    expected_form: &'static str,
    count: usize,
}

impl Calls {
    fn code(self, options: &SetOptions) -> ProblemCode {
        let count = self.count;
        let limit = options.timeout.as_secs_f64();
        let timeout = limit * count as f64 + 1.0;
        let data = json!({
            "entry_point": self.entry_point,
            "compare": self.rule.name(),
            "preamble": self.rule.preamble(),
            "inputs_form": self.inputs_form,
            "record": false,
            "all": options.all_tests,
            "phases": [{
                "name": "tests",
                "inputs": self.inputs,
                "count": count,
                "expected": self.expected,
                "expected_form": self.expected_form,
                "limits": vec![limit; count],
                "limit_rule": "",
                "timeout": timeout,
            }],
        });
        let tests = Tests::Calls(Arc::new(Suite::new(data, 1, Some(Duration::from_secs_f64(timeout)))));
        ProblemCode { prompt: String::new(), tests, entry_point: self.entry_point }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_private_tests_decode_and_anything_but_plain_data_is_refused() {
        // pickle protocol 4 of the string '[{"input": "1\n", "output": "2\n", "testtype": "stdin"}]'
        let text = r#"[{"input": "1\n", "output": "2\n", "testtype": "stdin"}]"#;
        let mut pickle = vec![0x80, 4, 0x8c, u8::try_from(text.len()).unwrap()];
        pickle.extend_from_slice(text.as_bytes());
        pickle.extend_from_slice(b"\x94.");
        let packed = pack(&pickle);
        assert_eq!(unpickle_text(&packed).unwrap(), text);
        // os.system('true') as a pickle: a GLOBAL and a REDUCE.
        let hostile = b"cos\nsystem\n(Vtrue\ntR.";
        let refused = unpickle_text(&pack(hostile)).unwrap_err();
        assert!(refused.contains("not plain data"), "{refused}");
        // An integer is data, but not what test cases are made of.
        assert!(unpickle_text(&pack(b"\x80\x04K\x07.")).is_err());
    }

    fn pack(pickle: &[u8]) -> String {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(pickle).unwrap();
        base64::engine::general_purpose::STANDARD.encode(encoder.finish().unwrap())
    }
}
