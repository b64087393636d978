//! HumanEval's format: the prompt, the test code with `check(candidate)`, the entry
//! point. HumanEval-X's Python file has the same fields but the entry point: its test
//! code ends in the call `check(<entry point>)`, which names it.

use std::sync::Arc;

use passk_runner::{ProblemCode, Tests};
use serde_json::{Map, Value};

use super::{Problem, Statement};
use crate::error::InputError;
use crate::fields::{optional_string_field, string_field};

pub fn problem(source: &str, line: usize, object: &Map<String, Value>) -> Result<Problem, InputError> {
    let field = |field| string_field(source, line, object, field);
    let task_id = field("task_id")?;
    let prompt = field("prompt")?;
    let (entry_point, test) = match optional_string_field(source, line, object, "entry_point")? {
        Some(entry_point) => (entry_point, field("test")?),
        None if object.contains_key("declaration") => {
            called_at_the_end(&field("test")?).ok_or_else(|| InputError::Field {
                path: source.to_owned(),
                line,
                field: "test",
                message: "does not end in the call `check(<entry point>)` and there is no `entry_point` \
                          (HumanEval-X in a language other than Python?)"
                    .to_owned(),
            })?
        }
        None => return Err(InputError::Missing { path: source.to_owned(), line, field: "entry_point" }),
    };
    let canonical_solution = optional_string_field(source, line, object, "canonical_solution")?;
    if !super::is_identifier(&entry_point) {
        return Err(InputError::EntryPoint { path: source.to_owned(), line, value: entry_point });
    }
    let solution = canonical_solution.as_ref().map(|completion| format!("{prompt}{completion}"));
    let tests = Tests::check(&prompt, &test, &entry_point, solution.as_deref());
    let code = Arc::new(ProblemCode { prompt, tests, entry_point });
    Ok(Problem { task_id, code, canonical_solution, evalplus: None, statement: Statement::default() })
}

/// The entry point a HumanEval-X test names in its last line, `check(<entry point>)`, and
/// the test without that line (the harness makes the call).
fn called_at_the_end(test: &str) -> Option<(String, String)> {
    let trimmed = test.trim_end();
    let (before, last) = trimmed.rsplit_once('\n').unwrap_or(("", trimmed));
    let name = last.trim().strip_prefix("check(")?.strip_suffix(')')?.trim();
    super::is_identifier(name).then(|| (name.to_owned(), format!("{before}\n")))
}

#[cfg(test)]
mod tests {
    use super::called_at_the_end;

    #[test]
    fn a_humaneval_x_test_names_its_entry_point_in_its_last_call() {
        let test = "def check(f):\n    assert f(1) == 2\n\ncheck(add_one)\n";
        assert_eq!(
            called_at_the_end(test),
            Some(("add_one".to_owned(), "def check(f):\n    assert f(1) == 2\n\n".to_owned()))
        );
        assert_eq!(called_at_the_end("int main() {\n}\n"), None);
        assert_eq!(called_at_the_end("check(a + b)"), None);
    }
}
