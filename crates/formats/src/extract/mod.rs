//! `--extract`: the program in a model's raw output.
//!
//! Chat models answer in markdown: prose, a fenced block or several, more prose. Base
//! models continue the prompt and run on past the function into whatever comes next.
//! Run as they are, both fail for reasons that have nothing to do with the code, and a
//! score of zero says nothing about the model. Each rule here takes out what a reader
//! would call the answer, and the results line records which rule did, so a surprising
//! verdict can be checked against the text that was run.
//!
//! `markdown` finds fences and prose; `python` reads Python's definitions by their
//! indentation; every other language's are found by `braces`, a scanner of top-level
//! items, and `languages` applies the same rules to them, with `program` (and `java`, for
//! Java's classes) making an answer that holds the whole function a program.
//! `resembles` tells the language a program that runs as Python looks written in.

mod braces;
mod java;
mod languages;
mod markdown;
mod program;
mod python;
mod resembles;

pub use resembles::resembles;

use passk_runner::{Candidate, Language, ProblemCode};
use serde::Serialize;

/// Which rule took the program out of the raw text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A fenced markdown block: the one that defines the entry point, if several do not.
    Fence,
    /// The completion repeated the prompt; what follows it is the completion.
    PromptRepeated,
    /// The text holds the whole function among prose or other statements; its imports,
    /// definitions and constants are kept.
    Function,
    /// A completion cut at the first stop sequence (in a language of braces, where the
    /// prompt's function closes).
    StopSequence,
    /// Nothing to take out: the text runs as it is.
    AsIs,
}

/// What runs for a sample, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub candidate: Candidate,
    pub rule: Rule,
}

/// Takes the program out of `raw`, a sample's `completion` (or `solution`, when
/// `whole_program`), written in `language`.
pub fn extract(raw: &str, problem: &ProblemCode, whole_program: bool, language: &Language) -> Extracted {
    match braces::Syntax::of(&language.name) {
        Some(syntax) => languages::extract(raw, problem, whole_program, language, syntax),
        None => python::extract(raw, problem, whole_program, language),
    }
}

/// What closes a base model's completion of `problem`'s prompt that a server cut at a
/// stop sequence, MultiPL-E's `\n}` or `\n    }\n`, before the function's closing brace:
/// the braces of the blocks still open, one a line, where the problem's tests do not
/// close the function themselves (HumanEval-X's C++, Java and Rust; MultiPL-E's tests
/// begin with that `}`). None where nothing is left open.
pub fn closing_braces(text: &str, problem: &ProblemCode, language: &Language) -> Option<String> {
    let syntax = braces::Syntax::of(&language.name)?;
    if let passk_runner::Tests::Check(suite) = &problem.tests {
        if suite.candidate_suffix().is_some() {
            return None;
        }
    }
    let open = braces::open_blocks(&format!("{}{text}", problem.prompt), syntax);
    (open > 0).then(|| (0..open).rev().map(|depth| format!("\n{}}}", "    ".repeat(depth))).collect::<String>() + "\n")
}

/// Whether `text` looks like a chat model's raw answer rather than code: a markdown
/// fence, or a first line of prose.
pub fn looks_like_chat(text: &str) -> bool {
    !markdown::fenced_blocks(text).is_empty()
        || text.lines().find(|line| !line.trim().is_empty()).is_some_and(markdown::is_prose)
}

/// What follows the prompt in `raw`, where `raw` starts with it. Blank lines before the
/// prompt go on both sides: a model's answer drops them where most of HumanEval's
/// prompts start with one.
fn after_prompt<'a>(raw: &'a str, problem: &ProblemCode) -> Option<&'a str> {
    let unprompted = raw.trim_start_matches(['\n', '\r']);
    let prompt = problem.prompt.trim_start_matches(['\n', '\r']).trim_end();
    if prompt.is_empty() {
        return None;
    }
    let rest = unprompted.strip_prefix(prompt)?;
    Some(rest.strip_prefix('\n').unwrap_or(rest))
}

/// A completion up to its language's first stop sequence.
fn cut<'a>(text: &'a str, language: &Language) -> &'a str {
    let end = language.stop_sequences.iter().filter_map(|stop| text.find(stop.as_str())).min().unwrap_or(text.len());
    &text[..end]
}
