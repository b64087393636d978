//! What passk reads: problem sets, samples and results, and what is wrong with them.

use std::collections::HashMap;
use std::path::Path;

use std::sync::Arc;

use passk_runner::{Candidate, ProblemCode};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::jsonl::{JsonlReader, Record};

/// A problem in a file or record that cannot be used. Every message names the file and,
/// where there is one, the line and the field or value at fault.
#[derive(Debug, Error)]
pub enum InputError {
    #[error("{path}: cannot open")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: cannot read the line")]
    Read {
        path: String,
        line: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: not valid JSON: {message}")]
    Json { path: String, line: usize, message: String },
    #[error("{path}:{line}: expected a JSON object")]
    NotObject { path: String, line: usize },
    #[error("{path}:{line}: field `{field}` is missing")]
    Missing { path: String, line: usize, field: &'static str },
    #[error("{path}:{line}: field `{field}` must be {expected}")]
    WrongType { path: String, line: usize, field: &'static str, expected: &'static str },
    #[error("{path}:{line}: field `entry_point` is {value:?}, which is not a Python identifier")]
    EntryPoint { path: String, line: usize, value: String },
    #[error("{path}:{line}: task_id {task_id:?} appears again (first on line {first})")]
    DuplicateTask { path: String, line: usize, task_id: String, first: usize },
    #[error("{path}:{line}: field `task_id` is {task_id:?}, which is not in the problem set {problems}")]
    UnknownTask { path: String, line: usize, task_id: String, problems: String },
    #[error("{path}:{line}: has both `completion` and `solution`; a sample gives one")]
    BothCandidates { path: String, line: usize },
    #[error("{path}:{line}: field `completion` (or `solution`) is missing")]
    NoCandidate { path: String, line: usize },
    #[error("{path}: contains no {what}")]
    Empty { path: String, what: &'static str },
    #[error("{path}: changed while it was being evaluated (line {line})")]
    Changed { path: String, line: usize },
    #[error("--results {path} is the samples file; results are written beside the samples, not over them")]
    ResultsOverSamples { path: String },
    #[error("{path} holds an interrupted run with other settings ({differences}); run with those settings to resume it, or add --restart to start over")]
    ResumeMismatch { path: String, differences: String },
    #[error("{name:?} is neither a problem file nor a bundled problem set (bundled: {bundled})")]
    UnknownProblemSet { name: String, bundled: String },
    #[error(
        "{path}: starts with a UTF-8 byte-order mark, which JSON Lines does not allow; remove the byte-order mark"
    )]
    ByteOrderMark { path: String },
    #[error("{path}:{line}: JSON Lines expected (one JSON object per line), this is {shape}; write each object on a line of its own")]
    NotJsonLines { path: String, line: usize, shape: &'static str },
    #[error("{path} leaves out {missing} of the {total} in {set}: {named}; pass@k over a subset is not comparable with the whole set's, so add --partial if the subset is what you mean")]
    MissingProblems { path: String, missing: String, total: usize, set: String, named: String },
    #[error(
        "{path}:{line}: field `{field}` (of --cluster-by) {problem}; every sample of a problem needs the same group"
    )]
    Grouping { path: String, line: usize, field: String, problem: String },
    #[error("{path}:{line}: {message}; each line is `n,c` or a JSON object with `n` and `c`")]
    Calc { path: String, line: usize, message: String },
    #[error("--report {path}: the name must end in .html or .md, which says which report to write")]
    ReportFormat { path: String },
    #[error("cannot write {option} {path}")]
    Unwritable {
        option: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Reads a required string field.
pub fn string_field(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<String, InputError> {
    match object.get(field) {
        None => Err(InputError::Missing { path: source.to_owned(), line, field }),
        Some(Value::String(value)) => Ok(value.clone()),
        Some(_) => Err(InputError::WrongType { path: source.to_owned(), line, field, expected: "a string" }),
    }
}

/// One HumanEval-style problem.
#[derive(Debug, Clone)]
pub struct Problem {
    pub task_id: String,
    /// The prompt, the tests and the entry point.
    pub code: Arc<ProblemCode>,
    pub canonical_solution: Option<String>,
}

/// Problem sets compiled into the binary, so they work wherever passk does.
const BUNDLED: [(&str, &str); 1] = [("basic", include_str!("../../../problems/basic.jsonl"))];

/// A problem set, in file order, with its problems findable by task id.
#[derive(Debug)]
pub struct ProblemSet {
    /// The file's path, or the bundled set's name.
    pub name: String,
    /// The SHA-256 of the file as stored, or of the bundled text.
    pub sha256: String,
    pub problems: Vec<Problem>,
    by_id: HashMap<String, usize>,
}

impl ProblemSet {
    /// Loads a problem file, or a bundled set by name when no such file exists.
    pub fn load(name: &str) -> Result<ProblemSet, InputError> {
        let path = Path::new(name);
        if path.exists() {
            let sha256 = crate::provenance::sha256_file(path)
                .map_err(|source| InputError::Open { path: name.to_owned(), source })?;
            return ProblemSet::read(JsonlReader::open(path)?, sha256);
        }
        match BUNDLED.iter().find(|(bundled, _)| *bundled == name) {
            Some((bundled, text)) => ProblemSet::read(
                JsonlReader::from_text(bundled, text),
                crate::provenance::sha256_bytes(text.as_bytes()),
            ),
            None => Err(InputError::UnknownProblemSet {
                name: name.to_owned(),
                bundled: BUNDLED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    fn read(reader: JsonlReader, sha256: String) -> Result<ProblemSet, InputError> {
        let name = reader.source().to_owned();
        let mut problems = Vec::new();
        let mut by_id = HashMap::new();
        let mut first_line = HashMap::new();
        for record in reader {
            let (line, object) = record?;
            let field = |field| string_field(&name, line, &object, field);
            let task_id = field("task_id")?;
            let prompt = field("prompt")?;
            let entry_point = field("entry_point")?;
            let test = field("test")?;
            let canonical_solution = match object.get("canonical_solution") {
                None | Some(Value::Null) => None,
                Some(_) => Some(field("canonical_solution")?),
            };
            if !is_identifier(&entry_point) {
                return Err(InputError::EntryPoint { path: name, line, value: entry_point });
            }
            let code = Arc::new(ProblemCode { prompt, test, entry_point });
            let problem = Problem { task_id, code, canonical_solution };
            if let Some(&first) = first_line.get(&problem.task_id) {
                return Err(InputError::DuplicateTask { path: name, line, task_id: problem.task_id, first });
            }
            first_line.insert(problem.task_id.clone(), line);
            by_id.insert(problem.task_id.clone(), problems.len());
            problems.push(problem);
        }
        if problems.is_empty() {
            return Err(InputError::Empty { path: name, what: "problems" });
        }
        Ok(ProblemSet { name, sha256, problems, by_id })
    }

    /// The position of a problem in the set.
    pub fn position(&self, task_id: &str) -> Option<usize> {
        self.by_id.get(task_id).copied()
    }
}

/// Whether `name` can be called as `check(name)`: a Python identifier (ASCII subset).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// A validated sample: which problem it answers, its candidate, and all its fields.
#[derive(Debug)]
pub struct Sample {
    pub line: usize,
    pub problem: usize,
    pub candidate: Candidate,
    pub fields: Map<String, Value>,
}

/// Checks one samples-file record against the problem set.
pub fn sample(source: &str, problems: &ProblemSet, record: Record) -> Result<Sample, InputError> {
    let (line, fields) = record;
    let task_id = string_field(source, line, &fields, "task_id")?;
    let problem = problems.position(&task_id).ok_or_else(|| InputError::UnknownTask {
        path: source.to_owned(),
        line,
        task_id,
        problems: problems.name.clone(),
    })?;
    let candidate = match (fields.contains_key("completion"), fields.contains_key("solution")) {
        (true, true) => return Err(InputError::BothCandidates { path: source.to_owned(), line }),
        (true, false) => Candidate::Completion(string_field(source, line, &fields, "completion")?),
        (false, true) => Candidate::Solution(string_field(source, line, &fields, "solution")?),
        (false, false) => return Err(InputError::NoCandidate { path: source.to_owned(), line }),
    };
    Ok(Sample { line, problem, candidate, fields })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("has_close_elements"));
        assert!(is_identifier("_f2"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("2f"));
        assert!(!is_identifier("f); import os; os.system('x'"));
    }

    #[test]
    fn the_bundled_set_loads() {
        let set = ProblemSet::load("basic").unwrap();
        assert!(set.problems.len() >= 20);
        assert!(set.problems.iter().all(|p| p.canonical_solution.is_some()));
    }
}
