//! Problem sets in the formats the common suites are published in, each read into the
//! one shape the runner takes: a prompt, an entry point, and tests.
//!
//! - HumanEval: test code with `check(candidate)`.
//! - MBPP (original and sanitized): asserts, put in that form.
//! - EvalPlus's HumanEval+ and MBPP+: inputs whose expected outputs come from running
//!   the canonical solution (see `expected`), each input one call through the judge.
//! - APPS, CodeContests and LiveCodeBench: standard-input tests, or calls of a function
//!   or of a LeetCode-style `class Solution` method; also in SandboxFusion's files.
//!
//! The format is told from the file's first record, or given with `--format`.

mod contests;
pub mod evalplus;
mod format;
mod humaneval;
pub mod mbpp;
mod multilingual;
mod raw;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use passk_runner::ProblemCode;
use serde_json::{Map, Value};

use crate::error::InputError;
use crate::jsonl::JsonlReader;

pub use evalplus::EvalPlusInputs;
pub use format::Format;

/// How a problem set's tests are run, as asked on the command line.
#[derive(Debug, Clone)]
pub struct SetOptions {
    pub format: Option<Format>,
    /// MBPP: add the challenge asserts.
    pub challenge_tests: bool,
    /// EvalPlus: only the base inputs.
    pub base_only: bool,
    /// Run every test or input, instead of stopping at the first that fails.
    pub all_tests: bool,
    /// EvalPlus: each input's limit is max(min_time_limit, factor x the canonical's time).
    pub min_time_limit: f64,
    pub time_limit_factor: f64,
    /// Standard-input tests: numbers match within this tolerance.
    pub float_tolerance: Option<f64>,
    /// Standard-input tests: a program that decides whether an output is right.
    pub checker: Option<String>,
    /// Each standard-input test's limit, and each call's for suites without measured times.
    pub timeout: Duration,
}

impl Default for SetOptions {
    fn default() -> SetOptions {
        SetOptions {
            format: None,
            challenge_tests: false,
            base_only: false,
            all_tests: false,
            min_time_limit: evalplus::MIN_TIME_LIMIT,
            time_limit_factor: evalplus::TIME_LIMIT_FACTOR,
            float_tolerance: None,
            checker: None,
            timeout: Duration::from_secs(3),
        }
    }
}

/// One problem.
#[derive(Debug, Clone)]
pub struct Problem {
    pub task_id: String,
    /// The prompt, the tests and the entry point.
    pub code: Arc<ProblemCode>,
    pub canonical_solution: Option<String>,
    /// EvalPlus: the inputs, until their expected outputs are known.
    pub evalplus: Option<Arc<EvalPlusInputs>>,
    /// What a model is shown of the problem where its prompt is not code to continue.
    pub statement: Statement,
}

/// What a model is asked from, beside the prompt: the sets whose prompt is empty (MBPP's,
/// the contest sets') give the task in words, and a suite may say where its completions
/// end. Read only to ask a model for samples (`passk generate`); no verdict depends on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Statement {
    /// The task in words: MBPP's `text`, sanitized MBPP's `prompt`, a contest problem's
    /// description.
    pub description: Option<String>,
    /// A test shown with the description: MBPP's first assert, as the MBPP paper and
    /// EvalPlus show one, so that the model knows the function's name and signature.
    pub example: Option<String>,
    /// The code an answer starts from: APPS's and LiveCodeBench's starter code.
    pub starter_code: Option<String>,
    /// Where the suite ends a completion: MultiPL-E's `stop_tokens`.
    pub stop: Option<Vec<String>>,
}

impl Statement {
    /// A statement of `description` alone.
    fn described(description: Option<String>) -> Statement {
        Statement { description: description.filter(|text| !text.trim().is_empty()), ..Statement::default() }
    }
}

impl Problem {
    /// The language a problem whose tests are in a language of their own is written in
    /// (HumanEval-X's and MultiPL-E's); None where it is its format's.
    pub fn language(&self) -> Option<&'static passk_runner::Language> {
        match &self.code.tests {
            passk_runner::Tests::Check(suite) => {
                passk_runner::Language::named(suite.data.get("program")?.get("language")?.as_str()?)
            }
            _ => None,
        }
    }
}

/// Problem sets compiled into the binary, so they work wherever passk does.
const BUNDLED: [(&str, &str); 1] = [("basic", include_str!("../../../../problems/basic.jsonl"))];

/// A problem set, in file order, with its problems findable by task id.
#[derive(Debug, Clone)]
pub struct ProblemSet {
    /// The file's path, or the bundled set's name.
    pub name: String,
    /// The SHA-256 of the file as stored, or of the bundled text.
    pub sha256: String,
    pub format: Format,
    pub problems: Vec<Problem>,
    by_id: HashMap<String, usize>,
}

impl ProblemSet {
    /// Loads a problem file, or a bundled set by name when no such file exists.
    pub fn load(name: &str, options: &SetOptions) -> Result<ProblemSet, InputError> {
        let path = Path::new(name);
        if path.is_dir() {
            return Err(InputError::ProblemsFolder { name: name.to_owned(), holds: problem_files_in(path) });
        }
        let (open, sha256): (Box<dyn Fn() -> Result<JsonlReader, InputError>>, String) = if path.exists() {
            let sha256 = crate::provenance::sha256_file(path)
                .map_err(|source| InputError::Open { path: name.to_owned(), source })?;
            (Box::new(move || JsonlReader::open(path)), sha256)
        } else {
            match BUNDLED.iter().find(|(bundled, _)| *bundled == name) {
                Some((bundled, text)) => (
                    Box::new(move || Ok(JsonlReader::from_text(bundled, text))),
                    crate::provenance::sha256_bytes(text.as_bytes()),
                ),
                // A name with a folder or an extension is a file's.
                None if name.contains(['/', '.']) => {
                    let beside = match std::env::current_dir() {
                        Ok(dir) if path.is_relative() => format!(" in {}", dir.display()),
                        _ => String::new(),
                    };
                    return Err(InputError::NoProblemFile { name: name.to_owned(), beside, hint: where_to_get(name) });
                }
                None => {
                    return Err(InputError::UnknownProblemSet {
                        name: name.to_owned(),
                        bundled: BUNDLED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
                        hint: where_to_get(name),
                    })
                }
            }
        };
        let format = match options.format {
            Some(format) => format,
            None => detect(open()?)?,
        };
        let reader = open()?;
        let source = reader.source().to_owned();
        let problems = format.read(reader, options);
        let problems = problems.map_err(|error| match error {
            // Of the formats, only sanitized MBPP's file is one JSON array.
            InputError::NotJsonLines { path, line, shape: "a JSON array" } => {
                match open().ok().and_then(array_of_sanitized_mbpp) {
                    Some(fields) => InputError::OtherFormat {
                        path,
                        line,
                        what: "sanitized MBPP's file, one JSON array of problems",
                        fields,
                        format: format.name(),
                        right: Format::MbppSanitized.name(),
                    },
                    None => InputError::NotJsonLines { path, line, shape: "a JSON array" },
                }
            }
            // A field --format's reader wants is missing where the record is another
            // format's: say which, rather than only what is missing.
            InputError::Missing { path, line, field } if options.format.is_some() => {
                match open().ok().and_then(|reader| other_format(reader, format)) {
                    Some((right, fields)) => InputError::OtherFormat {
                        path,
                        line,
                        what: "a record of another format",
                        fields,
                        format: format.name(),
                        right: right.name(),
                    },
                    None => InputError::Missing { path, line, field },
                }
            }
            error => error,
        })?;
        ProblemSet::new(source, sha256, format, problems)
    }

    /// Problems given as records in memory (a service's request), in any format passk
    /// reads, told from the first record unless `options` names one. `source` names them
    /// in errors, and each record's line is its position, from 1.
    pub fn from_records(source: &str, records: &[Value], options: &SetOptions) -> Result<ProblemSet, InputError> {
        let mut text = String::new();
        for record in records {
            text.push_str(&record.to_string());
            text.push('\n');
        }
        let open = || JsonlReader::from_string(source, text.clone());
        let format = match options.format {
            Some(format) => format,
            None => detect(open())?,
        };
        let problems = format.read(open(), options)?;
        ProblemSet::new(source.to_owned(), crate::provenance::sha256_bytes(text.as_bytes()), format, problems)
    }

    fn new(
        name: String,
        sha256: String,
        format: Format,
        problems: Vec<(usize, Problem)>,
    ) -> Result<ProblemSet, InputError> {
        let mut by_id = HashMap::new();
        let mut first_line = HashMap::new();
        let mut kept = Vec::with_capacity(problems.len());
        for (line, problem) in problems {
            if let Some(&first) = first_line.get(&problem.task_id) {
                return Err(InputError::DuplicateTask { path: name, line, task_id: problem.task_id, first });
            }
            first_line.insert(problem.task_id.clone(), line);
            by_id.insert(problem.task_id.clone(), kept.len());
            kept.push(problem);
        }
        if kept.is_empty() {
            return Err(InputError::Empty { path: name, what: "problems" });
        }
        Ok(ProblemSet { name, sha256, format, problems: kept, by_id })
    }

    /// The position of a problem in the set.
    pub fn position(&self, task_id: &str) -> Option<usize> {
        self.by_id.get(task_id).copied()
    }

    /// Whether task ids are numbers in this format (MBPP's), so that samples may give
    /// them as JSON numbers.
    pub fn numeric_ids(&self) -> bool {
        self.format.numeric_ids()
    }
}

/// How to get a well-known set that is not here: named as if it were bundled, or a file
/// not yet fetched.
fn where_to_get(name: &str) -> String {
    let name = name.to_ascii_lowercase().replace(['-', '_', ' '], "");
    let (set, how) = if name.contains("humanevalplus") || name.contains("humaneval+") {
        ("HumanEval+", fetch_benchmark("humaneval-plus", "HumanEvalPlus-v0.1.10.jsonl.gz"))
    } else if name.contains("mbppplus") || name.contains("mbpp+") {
        ("MBPP+", fetch_benchmark("mbpp-plus", "MbppPlus-v0.2.0.jsonl.gz"))
    } else if name.contains("mbpp") && name.contains("sanitized") {
        ("sanitized MBPP", fetch_benchmark("mbpp-sanitized", "sanitized-mbpp.json"))
    } else if name.contains("mbpp") {
        ("MBPP", fetch_benchmark("mbpp", "mbpp.jsonl"))
    } else if name.contains("humaneval") {
        ("HumanEval", fetch_humaneval())
    } else {
        return String::new();
    };
    format!("; {set} is not bundled: {how}")
}

/// Where a fetch script of passk's is, so that a hint works from any folder.
enum Script {
    /// In the `problems` folder (given) of the source tree this passk was built from.
    InSource(PathBuf),
    /// On PATH, where the container image installs fetch-humaneval.
    OnPath,
    /// Neither: named as the source tree has it.
    Unknown,
}

fn script(name: &str) -> Script {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../problems");
    if let Ok(folder) = source.canonicalize() {
        if folder.join(name).is_file() {
            return Script::InSource(folder);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|folder| folder.join(name).is_file()) {
        return Script::OnPath;
    }
    Script::Unknown
}

/// How to get the released `file` that `fetch-benchmark release` downloads: "X
/// downloads it, then give --problems Y", in absolute paths where passk's source is.
pub fn fetch_benchmark(release: &str, file: &str) -> String {
    match script("fetch-benchmark") {
        Script::InSource(folder) => format!(
            "{} {release} downloads it, then give --problems {}",
            folder.join("fetch-benchmark").display(),
            folder.join("released").join(file).display()
        ),
        Script::OnPath => {
            format!("fetch-benchmark {release} --dir ~/released downloads it, then give --problems ~/released/{file}")
        }
        Script::Unknown => format!(
            "problems/fetch-benchmark {release}, in passk's source, downloads it and prints its path: give that \
             path as --problems"
        ),
    }
}

/// How to get HumanEval, as `fetch_benchmark` says how to get the others.
fn fetch_humaneval() -> String {
    match script("fetch-humaneval") {
        Script::InSource(folder) => format!(
            "{} downloads it, then give --problems {}",
            folder.join("fetch-humaneval").display(),
            folder.join("humaneval/HumanEval.jsonl.gz").display()
        ),
        Script::OnPath => {
            "fetch-humaneval ~/humaneval downloads it, then give --problems ~/humaneval/HumanEval.jsonl.gz".to_owned()
        }
        Script::Unknown => "problems/fetch-humaneval, in passk's source, downloads it and prints the folder that \
                            holds HumanEval.jsonl.gz: give that file as --problems"
            .to_owned(),
    }
}

/// What of a folder given as --problems may be the problem file meant (fetch-humaneval
/// prints its folder, not the file), as the end of a message.
fn problem_files_in(folder: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(folder) else { return String::new() };
    let mut files: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.path().display().to_string())
        .filter(|name| {
            [".jsonl", ".jsonl.gz", ".json", ".json.gz"].iter().any(|end| name.ends_with(end))
                && !name.contains("_results.jsonl")
        })
        .collect();
    files.sort();
    const SHOWN: usize = 5;
    let more = match files.len().saturating_sub(SHOWN) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    match files.len() {
        0 => "; it holds no .jsonl or .json file".to_owned(),
        1 => format!("; it holds {}", files[0]),
        _ => format!("; its .jsonl and .json files are {}{more}", files[..files.len().min(SHOWN)].join(", ")),
    }
}

/// The fields of the first problem of a JSON array of sanitized MBPP's problems, if that
/// is what `reader` holds.
fn array_of_sanitized_mbpp(reader: JsonlReader) -> Option<String> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&reader.rest().ok()?) else { return None };
    let names: Vec<&str> = items.first()?.as_object()?.keys().map(String::as_str).collect();
    (Format::of_fields(&names) == Some(Format::MbppSanitized)).then(|| names.join(", "))
}

/// The format the file's first record is of, and its fields, where that is not `named`.
fn other_format(mut reader: JsonlReader, named: Format) -> Option<(Format, String)> {
    let (_, text) = reader.next_text()?.ok()?;
    let fields = raw::fields(text).ok()?;
    let names: Vec<&str> = fields.iter().map(|(name, _)| name.as_str()).collect();
    Format::of_fields(&names).filter(|found| *found != named).map(|found| (found, names.join(", ")))
}

/// The format of the records `reader` holds, told from the first.
fn detect(mut reader: JsonlReader) -> Result<Format, InputError> {
    let source = reader.source().to_owned();
    let first = {
        let peeked = reader.next_text();
        match peeked {
            None => return Err(InputError::Empty { path: source, what: "problems" }),
            Some(Err(InputError::NotJsonLines { shape: "a JSON array", .. })) => return Ok(Format::MbppSanitized),
            Some(Err(error)) => return Err(error),
            Some(Ok((line, text))) => (line, text.to_owned()),
        }
    };
    let (line, text) = first;
    let fields = raw::fields(&text).map_err(|message| InputError::Json { path: source.clone(), line, message })?;
    let names: Vec<&str> = fields.iter().map(|(name, _)| name.as_str()).collect();
    let is_sample = names.contains(&"completion") || names.contains(&"solution");
    // MultiPL-E's translations name their language; no --format would make them Python.
    let language = fields
        .iter()
        .find(|(name, _)| name == "language")
        .and_then(|(_, value)| serde_json::from_str::<String>(value).ok())
        .filter(|language| !["python", "py"].contains(&language.to_lowercase().as_str()));
    Format::of_fields(&names).ok_or_else(|| {
        let fields = names.join(", ");
        if is_sample {
            InputError::SamplesAsProblems { path: source, line, fields, hint: "" }
        } else if let Some(language) = language {
            InputError::OtherLanguage { path: source, line, language }
        } else {
            InputError::UnknownFormat { path: source, line, fields }
        }
    })
}

/// Reads every line of a JSON Lines problem file as a strict JSON object.
fn each_line(
    reader: JsonlReader,
    mut read: impl FnMut(usize, &Map<String, Value>) -> Result<Problem, InputError>,
) -> Result<Vec<(usize, Problem)>, InputError> {
    let mut problems = Vec::new();
    for record in reader {
        let (line, object) = record?;
        problems.push((line, read(line, &object)?));
    }
    Ok(problems)
}

/// A task id as the suite gives it: a string, or (MBPP, APPS) a whole number.
fn task_id(source: &str, line: usize, object: &Map<String, Value>, field: &'static str) -> Result<String, InputError> {
    match object.get(field) {
        Some(Value::String(id)) => Ok(id.clone()),
        Some(Value::Number(id)) if id.is_u64() || id.is_i64() => Ok(id.to_string()),
        Some(_) => {
            Err(InputError::WrongType { path: source.to_owned(), line, field, expected: "a string or a whole number" })
        }
        None => Err(InputError::Missing { path: source.to_owned(), line, field }),
    }
}

/// Whether `name` can be called as `check(name)`: a Python identifier (ASCII subset).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
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
        let set = ProblemSet::load("basic", &SetOptions::default()).unwrap();
        assert_eq!(set.format, Format::Humaneval);
        assert!(set.problems.len() >= 20);
        assert!(set.problems.iter().all(|p| p.canonical_solution.is_some()));
    }

    #[test]
    fn formats_are_told_by_their_fields() {
        assert_eq!(Format::of_fields(&["task_id", "prompt", "entry_point", "test"]), Some(Format::Humaneval));
        assert_eq!(Format::of_fields(&["task_id", "text", "code", "test_list"]), Some(Format::Mbpp));
        assert_eq!(Format::of_fields(&["task_id", "prompt", "code", "test_list"]), Some(Format::MbppSanitized));
        assert_eq!(
            Format::of_fields(&["task_id", "prompt", "entry_point", "test", "base_input", "plus_input"]),
            Some(Format::Evalplus)
        );
        assert_eq!(Format::of_fields(&["problem_id", "input_output"]), Some(Format::Apps));
        assert_eq!(Format::of_fields(&["name", "public_tests"]), Some(Format::CodeContests));
        assert_eq!(Format::of_fields(&["question_id", "public_test_cases"]), Some(Format::Livecodebench));
        assert_eq!(Format::of_fields(&["id", "question"]), None);
    }
}
