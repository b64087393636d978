//! Function completions in languages other than Python: HumanEval-X (`CPP/0`,
//! `Java/0`, `JavaScript/0`, `Go/0`, `Rust/0`, and `Python/0`, read as HumanEval) and
//! MultiPL-E (`name, language, prompt, tests, stop_tokens`). A completion continues the
//! prompt, and the tests follow, as each suite's own harness assembles them; here the
//! tests go to the judge alone, with the prompt's helpers, and the candidate's process
//! serves calls of the entry point (see `sandbox/passk_driver/programs.py`).

use std::sync::Arc;

use passk_runner::{Language, ProblemCode, Suite, Tests};
use serde_json::{json, Map, Value};

use super::Problem;
use crate::error::InputError;
use crate::fields::{optional_string_field, string_field};

/// HumanEval-X's language of a task id's prefix.
fn humaneval_x_language(task_id: &str) -> Option<&'static str> {
    let (prefix, _) = task_id.split_once('/')?;
    Some(match prefix {
        "CPP" => "cpp",
        "Java" => "java",
        "JavaScript" => "javascript",
        "Go" => "go",
        "Rust" => "rust",
        "Python" => "python",
        _ => return None,
    })
}

/// A record of HumanEval-X's files.
pub fn humaneval_x(source: &str, line: usize, object: &Map<String, Value>) -> Result<Problem, InputError> {
    let task_id = string_field(source, line, object, "task_id")?;
    let name = humaneval_x_language(&task_id).ok_or_else(|| InputError::Field {
        path: source.to_owned(),
        line,
        field: "task_id",
        message: format!(
            "is {task_id:?}, which names none of HumanEval-X's languages (CPP/, Java/, JavaScript/, Go/, Rust/, Python/)"
        ),
    })?;
    if name == "python" {
        return super::humaneval::problem(source, line, object);
    }
    let language = known(source, line, name)?;
    let prompt = string_field(source, line, object, "prompt")?;
    let test = string_field(source, line, object, "test")?;
    let canonical_solution = optional_string_field(source, line, object, "canonical_solution")?;
    // CodeGeeX puts before every C++ program the includes of its list that the prompt
    // lacks.
    let prefix = (name == "cpp").then(|| {
        CODEGEEX_CPP_INCLUDES
            .iter()
            .filter(|include| !prompt.contains(*include))
            .map(|include| format!("{include}\n"))
            .collect()
    });
    function_problem(source, line, Record { task_id, language, prompt, test, canonical_solution, prefix })
}

/// CodeGeeX's `IMPORT_HELPER["cpp"]` (codegeex/benchmark/utils.py).
const CODEGEEX_CPP_INCLUDES: [&str; 9] = [
    "#include<stdlib.h>",
    "#include<algorithm>",
    "#include<math.h>",
    "#include<stdio.h>",
    "#include<vector>",
    "#include<string>",
    "#include<climits>",
    "#include<cstring>",
    "#include<iostream>",
];

/// A record of MultiPL-E's files.
pub fn multipl_e(source: &str, line: usize, object: &Map<String, Value>) -> Result<Problem, InputError> {
    let task_id = match optional_string_field(source, line, object, "task_id")? {
        Some(task_id) => task_id,
        None => string_field(source, line, object, "name")?,
    };
    let name = string_field(source, line, object, "language")?;
    let language = known(source, line, &name)?;
    let prompt = string_field(source, line, object, "prompt")?;
    let tests = string_field(source, line, object, "tests")?;
    let record = Record { task_id, language, prompt, test: tests, canonical_solution: None, prefix: None };
    function_problem(source, line, record)
}

fn known(source: &str, line: usize, name: &str) -> Result<&'static Language, InputError> {
    Language::named(name).ok_or_else(|| InputError::UnknownLanguage {
        path: source.to_owned(),
        line,
        language: name.to_owned(),
        known: Language::names().join(", "),
    })
}

/// What a suite's record says of a function completion's problem.
struct Record {
    task_id: String,
    language: &'static Language,
    prompt: String,
    test: String,
    canonical_solution: Option<String>,
    /// Code the suite's harness puts before every candidate.
    prefix: Option<String>,
}

fn function_problem(source: &str, line: usize, record: Record) -> Result<Problem, InputError> {
    let Record { task_id, language, prompt, test, canonical_solution, prefix: candidate_prefix } = record;
    if test.trim().is_empty() {
        return Err(InputError::Field {
            path: source.to_owned(),
            line,
            field: "test",
            message: "is empty: a problem with no tests would pass every sample".to_owned(),
        });
    }
    let Declared { helpers, name: entry_point, declaration } =
        entry_point(&prompt, language).ok_or_else(|| InputError::Field {
            path: source.to_owned(),
            line,
            field: "prompt",
            message: format!(
                "does not end in a {} function's declaration, so the entry point is unknown",
                language.name
            ),
        })?;
    // MultiPL-E's C++, Rust and Bash tests begin with the `}` that closes the function a
    // completion (cut at `\n}`) leaves open: the candidate's process closes it, and the
    // judge runs the rest.
    let (candidate_suffix, test) = match test.split_once('\n') {
        Some((first, rest)) if first.trim() == "}" => (Some("}\n"), rest.to_owned()),
        _ => (None, test),
    };
    let helpers = format!("{}{helpers}", candidate_prefix.as_deref().unwrap_or_default());
    let mut data = json!({
        "entry_point": entry_point,
        "declaration": declaration,
        "program": {"language": language.name, "helpers": helpers, "test": test},
    });
    if let Some(suffix) = candidate_suffix {
        data["program"]["candidate_suffix"] = suffix.into();
    }
    if let Some(prefix) = candidate_prefix.filter(|prefix| !prefix.is_empty()) {
        data["program"]["candidate_prefix"] = prefix.into();
    }
    let tests = Tests::Check(Arc::new(Suite::new(data, 1, None)));
    let code = Arc::new(ProblemCode { prompt, tests, entry_point });
    Ok(Problem { task_id, code, canonical_solution, evalplus: None })
}

/// The function a prompt leaves for the completion to finish.
#[derive(Debug, PartialEq, Eq)]
struct Declared {
    /// The prompt's code before the function (its helpers, which the tests may call).
    helpers: String,
    name: String,
    /// The line that declares it, from which a compiled language's tests take its type.
    declaration: String,
}

/// The entry point: the last function the prompt declares.
fn entry_point(prompt: &str, language: &Language) -> Option<Declared> {
    let mut at = 0;
    let mut found = None;
    for line in prompt.split_inclusive('\n') {
        if let Some(name) = declared(line.trim_start(), language) {
            found = Some(Declared { helpers: prompt[..at].to_owned(), name, declaration: line.trim_end().to_owned() });
        }
        at += line.len();
    }
    found
}

/// The function a line declares, where it begins a declaration of one.
fn declared(line: &str, language: &Language) -> Option<String> {
    let identifier = |text: &str| -> Option<String> {
        let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).unwrap_or(text.len());
        let name = &text[..end];
        (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then(|| name.to_owned())
    };
    match language.name.as_str() {
        "javascript" => {
            let line = line.strip_prefix("export ").unwrap_or(line);
            let line = line.strip_prefix("async ").unwrap_or(line);
            if let Some(rest) = line.strip_prefix("function ") {
                let name = identifier(rest.trim_start())?;
                return rest.trim_start()[name.len()..].trim_start().starts_with('(').then_some(name);
            }
            let rest = ["const ", "let ", "var "].iter().find_map(|keyword| line.strip_prefix(keyword))?;
            let name = identifier(rest.trim_start())?;
            let value = rest.trim_start()[name.len()..].trim_start().strip_prefix('=')?.trim_start();
            let value = value.strip_prefix("async ").unwrap_or(value).trim_start();
            (value.starts_with('(') || value.starts_with("function")).then_some(name)
        }
        "bash" => {
            // `name() {`, `function name {` or `function name() {`.
            let (keyword, line) = match line.strip_prefix("function ") {
                Some(rest) => (true, rest.trim_start()),
                None => (false, line),
            };
            let name = identifier(line)?;
            let rest = line[name.len()..].trim_start();
            let (parentheses, rest) = match rest.strip_prefix("()") {
                Some(rest) => (true, rest.trim_start()),
                None => (false, rest),
            };
            ((keyword || parentheses) && rest.starts_with('{')).then_some(name)
        }
        _ => {
            // A C-like declaration: `type name(...) {`; the name is the last identifier
            // before the first parenthesis.
            let open = line.find('(')?;
            if !line.trim_end().ends_with('{') || line.starts_with("//") || line.starts_with('#') {
                return None;
            }
            let before = line[..open].trim_end();
            let start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |at| at + 1);
            let name = identifier(&before[start..])?;
            (!["if", "for", "while", "switch", "return"].contains(&name.as_str())).then_some(name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_point_is_the_last_function_the_prompt_declares() {
        let javascript = Language::named("javascript").unwrap();
        let prompt = "/* helps */\nconst isPalindrome = (text) => {\n  return true\n}\n/* doc */\nconst makePalindrome = (string) => {\n";
        let Declared { helpers, name, declaration } = entry_point(prompt, javascript).unwrap();
        assert_eq!(name, "makePalindrome");
        assert_eq!(helpers, "/* helps */\nconst isPalindrome = (text) => {\n  return true\n}\n/* doc */\n");
        assert_eq!(declaration, "const makePalindrome = (string) => {");
        let multipl_e = "//Doc\n// >>> f(1)\nfunction has_close_elements(numbers, threshold){\n";
        let declared = entry_point(multipl_e, javascript).unwrap();
        assert_eq!((declared.helpers.as_str(), declared.name.as_str()), ("//Doc\n// >>> f(1)\n", "has_close_elements"));
        assert_eq!(entry_point("// no function here\n", javascript), None);
        let bash = Language::named("bash").unwrap();
        let prompt = "#!/bin/bash\n# Doc.\n# $1 is a list\nhas_close_elements() {\n";
        let declared = entry_point(prompt, bash).unwrap();
        assert_eq!(
            (declared.helpers.as_str(), declared.name.as_str()),
            ("#!/bin/bash\n# Doc.\n# $1 is a list\n", "has_close_elements")
        );
        assert_eq!(entry_point("function f {\n", bash).unwrap().name, "f");
        assert_eq!(entry_point("echo {\n", bash), None);
        let cpp = Language::named("cpp").unwrap();
        let prompt = "#include<vector>\nusing namespace std;\nbool has_close_elements(vector<float> numbers, float threshold){\n";
        let declared = entry_point(prompt, cpp).unwrap();
        assert_eq!(declared.name, "has_close_elements");
        assert_eq!(declared.declaration, "bool has_close_elements(vector<float> numbers, float threshold){");
    }
}
