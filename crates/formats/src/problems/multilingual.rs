//! Function completions in languages other than Python: HumanEval-X (`CPP/0`,
//! `Java/0`, `JavaScript/0`, `Go/0`, `Rust/0`, and `Python/0`, read as HumanEval) and
//! MultiPL-E (`name, language, prompt, tests, stop_tokens`). A completion continues the
//! prompt, and the tests follow, as each suite's own harness assembles them; here the
//! tests go to the judge alone, with the prompt's helpers, and the candidate's process
//! serves calls of the entry point (see `sandbox/passk_driver/programs.py`).

use std::sync::Arc;

use passk_runner::{Language, ProblemCode, Suite, Tests};
use serde_json::{json, Map, Value};

use super::{Problem, Statement};
use crate::error::InputError;
use crate::fields::{optional_string_field, string_field, strings};

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
    let mut prompt = string_field(source, line, object, "prompt")?;
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
    // And before every Go program the problem's test_setup (its package clause and
    // imports), which the Go assembly takes as CodeGeeX does.
    let prefix = if name == "go" { Some(string_field(source, line, object, "test_setup")?) } else { prefix };
    // CodeGeeX's Rust program is `fn main(){}` (the serving code's main here), the
    // declaration (the crates' `use`s and the function's first line), the prompt (its
    // doc comment), the code and the tests: a completion continues the first two.
    if name == "rust" {
        prompt = format!("{}{prompt}", string_field(source, line, object, "declaration")?);
    }
    function_problem(source, line, Record { task_id, language, prompt, test, canonical_solution, prefix, stop: None })
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
    // The suite's own, which its completions were cut at; the language's list is the same
    // in every release seen, but a file may say otherwise.
    let stop = match object.get("stop_tokens") {
        None | Some(Value::Null) => None,
        Some(_) => Some(strings(source, line, object, "stop_tokens")?),
    };
    let record = Record { task_id, language, prompt, test: tests, canonical_solution: None, prefix: None, stop };
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
    /// Where the suite ends a completion.
    stop: Option<Vec<String>>,
}

fn function_problem(source: &str, line: usize, record: Record) -> Result<Problem, InputError> {
    let Record { task_id, language, prompt, test, canonical_solution, prefix: candidate_prefix, stop } = record;
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
    // HumanEval-X's Rust tests may call functions that only the canonical solution
    // declares (make_palindrome after is_palindrome_10, encode_cyclic beside
    // decode_cyclic): each that they call is an entry point, its declaration a line of
    // `declaration`.
    let (entry_point, declaration) = match (language.name.as_str(), &canonical_solution) {
        ("rust", Some(solution)) => {
            called(&format!("{prompt}{solution}"), &test, language).unwrap_or((entry_point, declaration))
        }
        _ => (entry_point, declaration),
    };
    // MultiPL-E's C++, Rust and Bash tests begin with the `}` that closes the function a
    // completion (cut at `\n}`) leaves open: the candidate's process closes it, and the
    // judge runs the rest.
    let (candidate_suffix, test) = match test.split_once('\n') {
        Some((first, rest)) if first.trim() == "}" => (Some("}\n"), rest.to_owned()),
        _ => (None, test),
    };
    let helpers = format!("{}{helpers}", candidate_prefix.as_deref().unwrap_or_default());
    // The helpers are the prompt's, which every candidate is shown: the candidate's
    // process may hold them, and its serving code is compiled with their includes (see
    // programs.py).
    let mut data = json!({
        "entry_point": entry_point,
        "declaration": declaration,
        "prompt_helpers": helpers,
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
    Ok(Problem {
        task_id,
        code,
        canonical_solution,
        evalplus: None,
        statement: Statement { stop, ..Statement::default() },
    })
}

/// The functions `code` declares that `tests` call and do not declare themselves: the
/// first one's name, and their declarations, a line each; None if there are none.
fn called(code: &str, tests: &str, language: &Language) -> Option<(String, String)> {
    let own: Vec<String> = tests.lines().filter_map(|line| declared(line.trim_start(), language)).collect();
    let calls = |name: &str| {
        tests.match_indices(name).any(|(at, _)| {
            let before = tests[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
            !before && tests[at + name.len()..].trim_start().starts_with('(')
        })
    };
    let mut entries: Vec<(String, &str)> = Vec::new();
    for line in code.lines() {
        if let Some(name) = declared(line.trim_start(), language) {
            if !own.contains(&name) && calls(&name) && !entries.iter().any(|(known, _)| *known == name) {
                entries.push((name, line.trim()));
            }
        }
    }
    let first = entries.first()?.0.clone();
    Some((first, entries.iter().map(|(_, line)| *line).collect::<Vec<_>>().join("\n")))
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
        "go" => {
            // `func name(` or, generic, `func name[`: not a method's `func (r T) name(`.
            let rest = line.strip_prefix("func ")?.trim_start();
            let name = identifier(rest)?;
            (rest[name.len()..].trim_start().starts_with(['(', '[']) && line.trim_end().ends_with('{')).then_some(name)
        }
        "rust" => {
            // `fn name(...) ... {`, perhaps `pub`, `const`, `async` or `unsafe`.
            let mut rest = line;
            while let Some(after) = ["pub ", "pub(crate) ", "const ", "async ", "unsafe "]
                .iter()
                .find_map(|qualifier| rest.strip_prefix(qualifier))
            {
                rest = after.trim_start();
            }
            let rest = rest.strip_prefix("fn ")?.trim_start();
            let name = identifier(rest)?;
            let after = rest[name.len()..].trim_start();
            ((after.starts_with('(') || after.starts_with('<')) && line.trim_end().ends_with('{')).then_some(name)
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
        let go = Language::named("go").unwrap();
        let prompt = "import (\n    \"math\"\n)\n\n// Doc.\nfunc Poly(xs []int, x float64) float64{\n    return 0\n}\nfunc (s S) Method() {\n}\n// Doc.\nfunc FindZero(xs []int) float64 {\n";
        let declared = entry_point(prompt, go).unwrap();
        assert_eq!(declared.name, "FindZero");
        assert_eq!(declared.declaration, "func FindZero(xs []int) float64 {");
        assert!(declared.helpers.ends_with("func (s S) Method() {\n}\n// Doc.\n"));
        assert_eq!(entry_point("func Longest(strings []string) interface{}{\n", go).unwrap().name, "Longest");
        // Java's are C-like too: HumanEval-X's instance methods of `class Solution` (after
        // helper methods, with a `throws` clause), MultiPL-E's static ones of `class Problem`.
        let java = Language::named("java").unwrap();
        let prompt = "import java.util.*;\n\nclass Solution {\n    /**\n    >>> f(\"a\")\n     */\n    public String encode(String s) {\n        return s;\n    }\n    /**\n    >>> decode(\"b\")\n     */\n    public Optional<String> decode(String s) throws NoSuchAlgorithmException {\n";
        let declared = entry_point(prompt, java).unwrap();
        assert_eq!(declared.name, "decode");
        assert_eq!(
            declared.declaration,
            "    public Optional<String> decode(String s) throws NoSuchAlgorithmException {"
        );
        assert!(declared.helpers.ends_with("        return s;\n    }\n    /**\n    >>> decode(\"b\")\n     */\n"));
        let prompt = "import org.javatuples.*;\nclass Problem {\n    // >>> f((Pair.with(1l, 2l)))\n    public static Pair<Long, Long> f(ArrayList<ArrayList<Long>> grid, long k) {\n";
        assert_eq!(entry_point(prompt, java).unwrap().name, "f");
        let rust = Language::named("rust").unwrap();
        let prompt = "use rand::Rng;\n/// f(1)\npub fn compare_one<'a>(a:&'a dyn Any) -> i32{\n/* doc */\n";
        let declared = entry_point(prompt, rust).unwrap();
        assert_eq!((declared.helpers.as_str(), declared.name.as_str()), ("use rand::Rng;\n/// f(1)\n", "compare_one"));
        assert_eq!(entry_point("/// fn f(x) {\n", rust), None);
    }

    /// Guards HumanEval-X's Rust tests that call what only the canonical solution
    /// declares: each function the tests call is an entry point, and none they declare.
    #[test]
    fn the_entry_points_are_the_functions_the_tests_call() {
        let rust = Language::named("rust").unwrap();
        let code = "fn decode(s: &str) -> String {\n}\npub fn encode(s: &str) -> String {\n}\nfn unused() {\n}\n";
        let tests =
            "fn random() -> char {\n}\n#[test]\nfn test_decode() { assert!(decode(&encode(&s)) == s); random(); }\n";
        assert_eq!(
            called(code, tests, rust),
            Some((
                "decode".to_owned(),
                "fn decode(s: &str) -> String {\npub fn encode(s: &str) -> String {".to_owned()
            ))
        );
        assert_eq!(called("fn random() -> char {\n", tests, rust), None);
    }
}
