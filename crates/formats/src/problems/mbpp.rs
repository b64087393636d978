//! MBPP, original and sanitized: a task in words, a reference solution, and asserts
//! that call the function by name.
//!
//! The asserts become the body of a `check(candidate)` function, so that MBPP is judged
//! as HumanEval is: in judge mode the function's name is bound to the judge's stand-in.
//! The program is the candidate, then the setup code (`test_setup_code`, or the
//! sanitized file's `test_imports`), then the asserts: the setup builds objects of
//! classes the solution defines, and in that order every canonical solution passes
//! under plain Python. In judge mode the candidate's process runs the setup code after
//! the candidate too, since in one namespace the solution may use what it imports. The
//! problem has no prompt: a completion is the whole solution.
//! The entry point is the function the first assert calls that the reference solution
//! defines; where it is itself named `check`, the asserts' function takes another name.

use std::sync::Arc;

use passk_runner::{ProblemCode, Tests};
use serde_json::{Map, Value};

use super::{Problem, SetOptions, Statement};
use crate::error::InputError;
use crate::fields::{optional_string_field, string_field, strings};
use crate::jsonl::JsonlReader;

/// The task ids of sanitized MBPP's 427 problems (google-research's sanitized-mbpp.json,
/// as problems/fetch-benchmark pins it), as runs of consecutive ids: samples that answer
/// only these, given against the original MBPP, are most likely sanitized MBPP's.
#[rustfmt::skip]
const SANITIZED_IDS: &[(u64, u64)] = &[
    (2, 4), (6, 9), (11, 12), (14, 14), (16, 20), (56, 59), (61, 72), (74, 75), (77, 77), (79, 80), (82, 106),
    (108, 109), (111, 111), (113, 113), (115, 120), (123, 133), (135, 135), (137, 143), (145, 145), (160, 168),
    (170, 172), (222, 224), (226, 230), (232, 235), (237, 240), (242, 242), (244, 253), (255, 257), (259, 262),
    (264, 274), (276, 287), (290, 297), (299, 301), (304, 312), (388, 401), (404, 415), (417, 422), (424, 448),
    (450, 465), (468, 468), (470, 479), (554, 560), (562, 569), (572, 574), (576, 600), (602, 608), (610, 612),
    (614, 620), (622, 633), (635, 635), (637, 641), (643, 644), (720, 726), (728, 728), (730, 760), (762, 767),
    (769, 773), (775, 788), (790, 794), (796, 809),
];

/// Whether `task_id` is one of sanitized MBPP's.
pub fn in_sanitized(task_id: &str) -> bool {
    task_id.parse::<u64>().is_ok_and(|id| SANITIZED_IDS.iter().any(|&(first, last)| (first..=last).contains(&id)))
}

/// A line of the original MBPP file.
pub fn original(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    options: &SetOptions,
) -> Result<Problem, InputError> {
    let task_id = super::task_id(source, line, object, "task_id")?;
    let code = string_field(source, line, object, "code")?;
    let setup = optional_string_field(source, line, object, "test_setup_code")?.unwrap_or_default();
    let mut asserts = strings(source, line, object, "test_list")?;
    if options.challenge_tests {
        asserts.extend(strings(source, line, object, "challenge_test_list").or_else(|error| match error {
            InputError::Missing { .. } => Ok(Vec::new()),
            error => Err(error),
        })?);
    }
    let description = optional_string_field(source, line, object, "text")?;
    problem(source, line, Task { task_id, code, setup, description }, &asserts)
}

/// The sanitized MBPP file: one JSON array.
pub fn sanitized(reader: JsonlReader) -> Result<Vec<(usize, Problem)>, InputError> {
    let source = reader.source().to_owned();
    let text = reader.rest()?;
    let items: Vec<Value> = match serde_json::from_str(&text) {
        Ok(Value::Array(items)) => items,
        Ok(_) => return Err(InputError::NotObject { path: source, line: 1 }),
        Err(error) => {
            // A sanitized file may also come as JSON Lines (as some mirrors publish it).
            if let Some(lines) = as_lines(&text) {
                lines
            } else {
                return Err(InputError::Json { path: source, line: error.line(), message: error.to_string() });
            }
        }
    };
    let mut problems = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        // Errors name the item: its position in the array stands for a line.
        let line = index + 1;
        let Value::Object(object) = item else {
            return Err(InputError::NotObject { path: source, line });
        };
        // Read as sanitized, the original's setup code would be left out, and its tasks
        // that need it would fail every sample.
        let names: Vec<&str> = object.keys().map(String::as_str).collect();
        if super::Format::of_fields(&names) == Some(super::Format::Mbpp) {
            return Err(InputError::OtherFormat {
                path: source,
                line,
                what: "the original MBPP's file, with `text` and `test_setup_code`",
                fields: names.join(", "),
                format: super::Format::MbppSanitized.name(),
                right: super::Format::Mbpp.name(),
            });
        }
        let task_id = super::task_id(&source, line, &object, "task_id")?;
        let code = string_field(&source, line, &object, "code")?;
        let imports = strings(&source, line, &object, "test_imports").unwrap_or_default();
        let asserts = strings(&source, line, &object, "test_list")?;
        let description = optional_string_field(&source, line, &object, "prompt")?;
        let task = Task { task_id, code, setup: imports.join("\n"), description };
        problems.push((line, problem(&source, line, task, &asserts)?));
    }
    Ok(problems)
}

fn as_lines(text: &str) -> Option<Vec<Value>> {
    text.lines().filter(|line| !line.trim().is_empty()).map(|line| serde_json::from_str(line).ok()).collect()
}

/// What an MBPP record says of its task, beside the asserts.
struct Task {
    task_id: String,
    /// The reference solution.
    code: String,
    /// Run after the candidate, before the asserts.
    setup: String,
    /// The task in words.
    description: Option<String>,
}

fn problem(source: &str, line: usize, task: Task, asserts: &[String]) -> Result<Problem, InputError> {
    let Task { task_id, code, setup, description } = task;
    let entry_point = entry_point(&code, asserts).ok_or_else(|| InputError::NoEntryPoint {
        path: source.to_owned(),
        line,
        task_id: task_id.clone(),
    })?;
    let call = function_name(&entry_point, &[&code, &setup, &asserts.join("\n")]);
    let mut test = if setup.trim().is_empty() { String::new() } else { format!("{}\n", setup.trim_end()) };
    test.push_str(&format!("def {call}(candidate):\n"));
    let mut starts = Vec::with_capacity(asserts.len());
    for assert in asserts {
        starts.push(test.lines().count() + 1);
        for text in assert.lines() {
            test.push_str("    ");
            test.push_str(text);
            test.push('\n');
        }
    }
    if asserts.is_empty() {
        test.push_str("    pass\n");
    }
    let setup = setup.trim_end();
    let tests = Tests::check_calling("", &test, &entry_point, &call, setup, Some(&code), &starts);
    let code_of = Arc::new(ProblemCode { prompt: String::new(), tests, entry_point });
    let statement = Statement { example: asserts.first().cloned(), ..Statement::described(description) };
    Ok(Problem { task_id, code: code_of, canonical_solution: Some(code), evalplus: None, statement })
}

/// The name of the function that holds the asserts: `check`, as in HumanEval, unless the
/// entry point is so named; then a name none of the problem's code uses.
fn function_name(entry_point: &str, code: &[&str]) -> String {
    let mut name = String::from("check");
    while name == entry_point || (name != "check" && code.iter().any(|text| text.contains(name.as_str()))) {
        name.push('_');
    }
    name
}

/// The function the asserts check: the first name they call that the reference code
/// defines at the top level.
fn entry_point(code: &str, asserts: &[String]) -> Option<String> {
    let defined: Vec<&str> = code
        .lines()
        .filter_map(|line| line.strip_prefix("def "))
        .filter_map(|rest| rest.split('(').next())
        .map(str::trim)
        .filter(|name| super::is_identifier(name))
        .collect();
    asserts.iter().flat_map(|assert| called(assert)).find(|name| defined.contains(name)).map(str::to_owned)
}

/// The names called in `text`, in order: identifiers followed by `(`.
fn called(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut names = Vec::new();
    let mut start = None;
    for (i, &byte) in bytes.iter().enumerate() {
        let word = byte == b'_' || byte.is_ascii_alphanumeric();
        match (start, word) {
            (None, true) if i == 0 || bytes[i - 1] != b'.' => start = Some(i),
            (Some(from), false) => {
                if byte == b'(' {
                    names.push(&text[from..i]);
                }
                start = None;
            }
            _ => {}
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_point_is_the_defined_function_the_asserts_call() {
        let code = "import math\ndef helper(x):\n    return x\ndef volume(r):\n    return helper(r)";
        let asserts = vec!["assert math.isclose(volume(2), 8.0, rel_tol=0.001)".to_owned()];
        assert_eq!(entry_point(code, &asserts).as_deref(), Some("volume"));
        let asserts = vec!["assert set(similar(1)) == set([1])".to_owned()];
        assert_eq!(entry_point("def similar(x):\n  return [x]", &asserts).as_deref(), Some("similar"));
        assert_eq!(entry_point("def f(): pass", &["assert g(1) == 1".to_owned()]), None);
    }

    /// Guards against the asserts' function taking the name of an entry point `check`,
    /// which then called itself (MBPP 56, 349, 899, 967).
    #[test]
    fn the_asserts_function_never_takes_the_entry_points_name() {
        assert_eq!(function_name("volume", &["def volume(r): pass"]), "check");
        assert_eq!(function_name("check", &["def check(n): pass"]), "check_");
        assert_eq!(function_name("check", &["def check(n): return check_(n)\ndef check_(n): pass"]), "check__");
    }

    #[test]
    fn sanitized_ids_are_427_in_increasing_runs() {
        let count: u64 = SANITIZED_IDS.iter().map(|&(first, last)| last - first + 1).sum();
        assert_eq!(count, 427);
        assert!(SANITIZED_IDS.windows(2).all(|pair| pair[0].1 + 1 < pair[1].0));
        assert!(in_sanitized("2") && in_sanitized("809") && !in_sanitized("1") && !in_sanitized("Mbpp/2"));
    }
}
