//! HumanEval's format: the prompt, the test code with `check(candidate)`, the entry
//! point.

use std::sync::Arc;

use passk_runner::{ProblemCode, Tests};
use serde_json::{Map, Value};

use super::Problem;
use crate::input::{optional_string_field, string_field, InputError};

pub fn problem(source: &str, line: usize, object: &Map<String, Value>) -> Result<Problem, InputError> {
    let field = |field| string_field(source, line, object, field);
    let task_id = field("task_id")?;
    let prompt = field("prompt")?;
    let entry_point = field("entry_point")?;
    let test = field("test")?;
    let canonical_solution = optional_string_field(source, line, object, "canonical_solution")?;
    if !super::is_identifier(&entry_point) {
        return Err(InputError::EntryPoint { path: source.to_owned(), line, value: entry_point });
    }
    let tests = Tests::check(&prompt, &test, &entry_point);
    let code = Arc::new(ProblemCode { prompt, tests, entry_point });
    Ok(Problem { task_id, code, canonical_solution, evalplus: None })
}
