//! The results file: one line per sample, its own fields followed by its verdict's and
//! the marks of how the verdict was reached. passk writes every line through
//! [`ResultLine`] and reads every line back through it (a resume, `score`, `compare`,
//! the reports), so the schema is written down once, here.

use std::path::Path;

use passk_runner::{Status, TestCounts, Verdict};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::InputError;
use crate::fields::string_field;
use crate::jsonl::JsonlReader;
use crate::sample::looks_like_a_problem;

/// One phase of a suite of calls, as a results line shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseLine {
    pub phase: String,
    pub status: Status,
    pub passed: u64,
    pub run: u64,
    pub total: u64,
    pub failure: Option<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_at_a_time: bool,
}

/// What a results line says of its verdict. passk writes every field it has; a line of
/// the reference harness's has only `passed` and `result`, so the rest may be missing.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VerdictFields {
    pub passed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Written even where unknown (null): whether the run had control groups shows.
    pub memory_peak_bytes: Option<u64>,
    pub cpu_seconds: Option<f64>,
    /// EvalPlus's base_status, as a flag: the base inputs alone passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_passed: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Value>,
    /// How the verdict was reached, where not the usual way: `"in-process"` (the
    /// fallback) or `"judge"` (a sample whose own answers made its tests unjudgeable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<String>,
    /// Run again after a time-out, alone (`timeouts`), with the limit it ran under where
    /// that was its problem's floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retried: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retried_limit: Option<f64>,
}

/// Every field a results line's verdict has: passk's alone to write, so a sample that
/// carries one (a samples file made from earlier results, or a sample that forges
/// `"passed": true`) cannot pass it off as its verdict's. The last three are the marks
/// of how the verdict was reached.
pub const VERDICT_FIELDS: [&str; 14] = [
    "passed",
    "result",
    "status",
    "detail",
    "duration",
    "memory_peak_bytes",
    "cpu_seconds",
    "base_passed",
    "phases",
    "tests",
    "failure",
    "verdicts",
    "retried",
    "retried_limit",
];

/// A field of a results line whose value is of the wrong kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongField {
    pub field: &'static str,
    pub expected: &'static str,
}

/// One sample's line of a results file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultLine {
    /// The sample's own fields, as it gave them: `task_id`, `completion`, and whatever
    /// else it carried.
    pub sample: Map<String, Value>,
    pub verdict: VerdictFields,
}

impl VerdictFields {
    /// The fields of `verdict`.
    pub fn of(verdict: &Verdict) -> VerdictFields {
        let phases: Vec<PhaseLine> = verdict
            .phases
            .iter()
            .map(|phase| PhaseLine {
                phase: phase.phase.clone(),
                status: phase.status,
                passed: phase.passed,
                run: phase.run,
                total: phase.total,
                failure: phase.failure.clone(),
                one_at_a_time: phase.one_at_a_time,
            })
            .collect();
        VerdictFields {
            passed: Some(verdict.passed()),
            result: Some(verdict.result.clone()),
            status: Some(verdict.status.as_str().to_owned()),
            detail: Some(verdict.detail.clone()),
            duration: Some(verdict.duration),
            memory_peak_bytes: verdict.memory_peak_bytes,
            cpu_seconds: verdict.cpu_seconds,
            base_passed: phases.iter().find(|phase| phase.phase == "base").map(|base| base.status == Status::Passed),
            phases,
            tests: verdict.tests,
            failure: verdict.failure.clone(),
            verdicts: None,
            retried: None,
            retried_limit: None,
        }
    }

    /// The status, or what `passed` says where a line has none (the reference's).
    pub fn status_or_passed(&self) -> &str {
        match (&self.status, self.passed) {
            (Some(status), _) => status,
            (None, Some(true)) => "passed",
            (None, _) => "failed",
        }
    }
}

impl ResultLine {
    /// A sample's line with `verdict`. The verdict's fields are passk's to write, so a
    /// sample's own of the same names are dropped.
    pub fn new(mut sample: Map<String, Value>, verdict: &Verdict) -> ResultLine {
        for field in VERDICT_FIELDS {
            sample.remove(field);
        }
        ResultLine { sample, verdict: VerdictFields::of(verdict) }
    }

    /// The line with a new verdict, keeping its marks.
    pub fn decided_again(&mut self, verdict: &Verdict) {
        let VerdictFields { verdicts, retried, retried_limit, .. } = std::mem::take(&mut self.verdict);
        self.verdict = VerdictFields { verdicts, retried, retried_limit, ..VerdictFields::of(verdict) };
    }

    pub fn task_id(&self) -> Option<&str> {
        self.sample.get("task_id").and_then(Value::as_str)
    }

    /// The value of `field`, the sample's own or the verdict's.
    pub fn field(&self, field: &str) -> Option<Value> {
        match self.sample.get(field) {
            Some(value) => Some(value.clone()),
            None => serde_json::to_value(&self.verdict).ok()?.get(field).cloned(),
        }
    }

    /// Reads a line from its JSON object: the verdict's fields are taken out and typed,
    /// and the rest are the sample's.
    pub fn from_object(mut object: Map<String, Value>) -> Result<ResultLine, WrongField> {
        let verdict = VerdictFields {
            passed: take(&mut object, "passed", "true or false")?,
            result: take(&mut object, "result", "a string")?,
            status: take(&mut object, "status", "a string")?,
            detail: take(&mut object, "detail", "a string")?,
            duration: take(&mut object, "duration", "a number of seconds")?,
            memory_peak_bytes: take(&mut object, "memory_peak_bytes", "a number of bytes")?,
            cpu_seconds: take(&mut object, "cpu_seconds", "a number of seconds")?,
            base_passed: take(&mut object, "base_passed", "true or false")?,
            phases: take(&mut object, "phases", "a list of phases")?.unwrap_or_default(),
            tests: take(&mut object, "tests", "an object of counts `passed`, `run` and `total`")?,
            failure: take(&mut object, "failure", "a JSON value")?,
            verdicts: take(&mut object, "verdicts", "a string")?,
            retried: take(&mut object, "retried", "true or false")?,
            retried_limit: take(&mut object, "retried_limit", "a number of seconds")?,
        };
        Ok(ResultLine { sample: object, verdict })
    }
}

/// Takes `field` out of `object`, typed: None where it is missing or null.
fn take<T: DeserializeOwned>(
    object: &mut Map<String, Value>,
    field: &'static str,
    expected: &'static str,
) -> Result<Option<T>, WrongField> {
    match object.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value).map(Some).map_err(|_| WrongField { field, expected }),
    }
}

impl Serialize for ResultLine {
    /// The sample's fields in its own order, then the verdict's.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(verdict) = serde_json::to_value(&self.verdict).map_err(serde::ser::Error::custom)? else {
            return Err(serde::ser::Error::custom("a verdict's fields are an object"));
        };
        serializer.collect_map(self.sample.iter().chain(verdict.iter()))
    }
}

impl<'de> Deserialize<'de> for ResultLine {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ResultLine, D::Error> {
        let object = Map::deserialize(deserializer)?;
        ResultLine::from_object(object).map_err(|WrongField { field, expected }| {
            serde::de::Error::custom(format!("field `{field}` must be {expected}"))
        })
    }
}

/// A results file, read a line at a time: each line's number and its line. A line must
/// name its task and say whether it passed; a file that is something else (samples, a
/// problem set, an interrupted run's journal, a run's record of its settings) is named
/// as what it is, with the command that makes results of it.
#[derive(Debug)]
pub struct ResultsFile {
    reader: JsonlReader,
    source: String,
}

impl ResultsFile {
    pub fn open(path: &Path) -> Result<ResultsFile, InputError> {
        let reader = JsonlReader::open(path)?;
        let source = reader.source().to_owned();
        Ok(ResultsFile { reader, source })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    fn line(&self, line: usize, object: Map<String, Value>) -> Result<ResultLine, InputError> {
        let source = &self.source;
        // Before any field is read: a problem set's ids may be numbers (MBPP's).
        if !object.contains_key("passed") {
            let fields = object.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
            let path = source.clone();
            if object.contains_key("completion") || object.contains_key("solution") {
                return Err(InputError::SamplesAsResults { path, line, fields });
            }
            if looks_like_a_problem(&object) {
                return Err(InputError::ProblemsAsResults { path, line, fields });
            }
            // An interrupted run's journal: a line per verdict, the results line inside.
            if object.contains_key("sample") && object.contains_key("result") {
                let results = source.strip_suffix(".partial").unwrap_or(source).to_owned();
                return Err(InputError::InterruptedRun { path, results });
            }
        }
        string_field(source, line, &object, "task_id")?;
        let read = ResultLine::from_object(object).map_err(|WrongField { field, expected }| InputError::WrongType {
            path: source.clone(),
            line,
            field,
            expected,
        })?;
        if read.verdict.passed.is_none() {
            return Err(InputError::Missing { path: source.clone(), line, field: "passed" });
        }
        Ok(read)
    }
}

impl Iterator for ResultsFile {
    type Item = Result<(usize, ResultLine), InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        let record = self.reader.next()?;
        Some(
            record
                .map_err(|error| settings_record(error, &self.source))
                .and_then(|(line, object)| Ok((line, self.line(line, object)?))),
        )
    }
}

/// A results file's record of its run's settings, given in its place, is one JSON object
/// over several lines: name the results file it belongs to rather than ask for JSON Lines.
fn settings_record(error: InputError, source: &str) -> InputError {
    let InputError::NotJsonLines { .. } = error else { return error };
    let path = source.to_owned();
    if let Some(results) = source.strip_suffix(".partial.run.json") {
        return InputError::InterruptedRun { path, results: results.to_owned() };
    }
    match source.strip_suffix(".run.json") {
        Some(results) => InputError::SettingsRecord { path, results: results.to_owned() },
        None => error,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        let Value::Object(object) = value else { unreachable!("an object") };
        object
    }

    /// A line written and read back is the same line, with the sample's fields first,
    /// in their order, and a sample's own marks dropped.
    #[test]
    fn a_line_round_trips_with_the_samples_fields_first() {
        let sample = object(json!({"task_id": "t/0", "completion": "x", "retried": true, "model": "m"}));
        let mut verdict = Verdict::infrastructure(String::new());
        verdict.status = Status::Passed;
        verdict.result = "passed".into();
        let line = ResultLine::new(sample, &verdict);
        let text = serde_json::to_string(&line).unwrap();
        assert!(
            text.starts_with(r#"{"task_id":"t/0","completion":"x","model":"m","passed":true,"result":"passed""#),
            "{text}"
        );
        assert!(text.contains(r#""memory_peak_bytes":null"#), "{text}");
        assert!(!text.contains("retried"), "{text}");
        let read: ResultLine = serde_json::from_str(&text).unwrap();
        assert_eq!(read, line);
        assert_eq!(read.task_id(), Some("t/0"));
    }

    /// A sample that carries the verdict's fields forges nothing: the line has each field
    /// once, with the verdict's value, so no reader that keeps the first of two can be
    /// fooled.
    #[test]
    fn a_sample_cannot_carry_its_own_verdict() {
        let forged = object(json!({"task_id": "t", "passed": true, "status": "passed", "verdicts": "in-process"}));
        let mut verdict = Verdict::infrastructure(String::new());
        verdict.status = Status::Failed;
        let text = serde_json::to_string(&ResultLine::new(forged, &verdict)).unwrap();
        assert_eq!(text.matches("\"passed\"").count(), 1, "{text}");
        assert_eq!(text.matches("\"status\"").count(), 1, "{text}");
        assert!(text.contains(r#""passed":false"#) && !text.contains("in-process"), "{text}");
    }

    /// The reference harness's lines have `passed` and `result` only.
    #[test]
    fn a_line_of_the_reference_harness_reads() {
        let line = ResultLine::from_object(object(
            json!({"task_id": "t", "completion": "", "result": "passed", "passed": true}),
        ))
        .unwrap();
        assert_eq!(line.verdict.passed, Some(true));
        assert_eq!(line.verdict.status_or_passed(), "passed");
        assert_eq!(line.sample.keys().collect::<Vec<_>>(), ["task_id", "completion"]);
    }

    #[test]
    fn a_field_of_the_wrong_kind_is_named() {
        let wrong = ResultLine::from_object(object(json!({"task_id": "t", "passed": "yes"})));
        assert_eq!(wrong, Err(WrongField { field: "passed", expected: "true or false" }));
        let wrong = ResultLine::from_object(object(json!({"task_id": "t", "passed": true, "tests": {"passed": 1}})));
        assert_eq!(wrong.unwrap_err().field, "tests");
    }

    /// A verdict decided again keeps the marks of how it was reached.
    #[test]
    fn deciding_again_keeps_the_marks() {
        let mut line = ResultLine::new(object(json!({"task_id": "t"})), &Verdict::infrastructure("x".into()));
        line.verdict.retried = Some(true);
        let mut verdict = Verdict::infrastructure(String::new());
        verdict.status = Status::Failed;
        line.decided_again(&verdict);
        assert_eq!((line.verdict.status.as_deref(), line.verdict.retried), (Some("failed"), Some(true)));
        assert_eq!(line.field("status"), Some(json!("failed")));
        assert_eq!(line.field("task_id"), Some(json!("t")));
    }
}
