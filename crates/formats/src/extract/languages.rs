//! The rules for languages other than Python (C++, Java, Go, Rust, JavaScript,
//! TypeScript, Bash), in Python's order: a fence, a repeated prompt, the whole function
//! among prose, a completion. Where an answer holds the whole function it runs as a
//! solution that keeps its helpers and types (`program`, `java`); where it continues the
//! prompt it ends where the prompt's function closes, or runs as a solution where it goes
//! on to helpers of its own.

use passk_runner::{Candidate, Language, ProblemCode, Tests};

use super::braces::{function_end, items, Syntax};
use super::markdown::{after_leading_prose, fenced_blocks};
use super::program::{declarations, defines};
use super::{after_prompt, cut, Extracted, Rule};

pub fn extract(
    raw: &str,
    problem: &ProblemCode,
    whole_program: bool,
    language: &Language,
    syntax: Syntax,
) -> Extracted {
    let entry = problem.entry_point.as_str();
    let blocks = fenced_blocks(raw);
    if matches!(problem.tests, Tests::Stdio(_)) {
        // A standard-input program is whole: the first block, or the text.
        let program = blocks.into_iter().next().unwrap_or_else(|| raw.to_owned());
        let rule = if program.len() == raw.len() { Rule::AsIs } else { Rule::Fence };
        return Extracted { candidate: Candidate::Solution(program), rule };
    }
    if !blocks.is_empty() {
        let chosen = blocks
            .iter()
            .find(|block| defines(block, entry, syntax))
            .or_else(|| blocks.iter().find(|block| block.contains("return")))
            .unwrap_or(&blocks[0]);
        let candidate = if defines(chosen, entry, syntax) {
            Candidate::Solution(whole(chosen, problem, syntax, whole_program))
        } else if whole_program {
            Candidate::Solution(chosen.clone())
        } else {
            continuation(after_prompt(chosen, problem).unwrap_or(chosen), problem, syntax, language).0
        };
        return Extracted { candidate, rule: Rule::Fence };
    }
    if !whole_program {
        if let Some(rest) = after_prompt(raw, problem) {
            let (candidate, _) = continuation(rest, problem, syntax, language);
            return Extracted { candidate, rule: Rule::PromptRepeated };
        }
    }
    // A text that starts with an indented line is a body, however it goes on.
    let starts_indented =
        raw.lines().find(|line| !line.trim().is_empty()).is_some_and(|line| line.starts_with([' ', '\t']));
    if !starts_indented && defines(raw, entry, syntax) {
        return Extracted {
            candidate: Candidate::Solution(whole(raw, problem, syntax, whole_program)),
            rule: Rule::Function,
        };
    }
    if whole_program {
        return Extracted { candidate: Candidate::Solution(raw.to_owned()), rule: Rule::AsIs };
    }
    let (candidate, rule) = continuation(after_leading_prose(raw), problem, syntax, language);
    Extracted { candidate, rule }
}

/// The program of `code`, which holds the whole entry point: its definitions, after the
/// prompt's preamble unless it is a `solution`.
fn whole(code: &str, problem: &ProblemCode, syntax: Syntax, whole_program: bool) -> String {
    if syntax == Syntax::Java {
        return super::java::program(code, &problem.prompt, &problem.entry_point, whole_program);
    }
    let preamble = if whole_program { "" } else { preamble(&problem.prompt, syntax) };
    super::program::program(code, preamble, syntax)
}

/// The prompt's code before its entry point (and the comments on it): its package
/// clause, includes, imports and helpers.
fn preamble(prompt: &str, syntax: Syntax) -> &str {
    match items(prompt, syntax).into_iter().rev().find(|item| !item.prose) {
        Some(last) if !last.closed => &prompt[..last.start],
        _ => prompt,
    }
}

/// `text`, which continues the prompt, as the candidate it stands for. Where the prompt's
/// function closes in it, it ends there: before the closing brace where the suite's tests
/// close the function themselves (MultiPL-E's C++, Java, Rust and Bash), after the blocks
/// around it close otherwise; and where code of its own follows (a helper, a type), the
/// prompt and the text run as one answer holding the whole function, which keeps them.
/// Where the function does not close, the text is cut at the first stop sequence.
fn continuation(text: &str, problem: &ProblemCode, syntax: Syntax, language: &Language) -> (Candidate, Rule) {
    let full = format!("{}{text}", problem.prompt);
    let from = problem.prompt.len();
    let Some((close, closed)) = function_end(&full, from, syntax) else {
        let cut_text = cut(text, language);
        let rule = if cut_text.len() < text.len() { Rule::StopSequence } else { Rule::AsIs };
        return (Candidate::Completion(cut_text.to_owned()), rule);
    };
    let end = closed.unwrap_or(full.len());
    let between = full[close + 1..end].trim_matches(|c: char| c == '}' || c.is_whitespace());
    let after = declarations(&full[end..], syntax);
    let more = !between.is_empty() || after.iter().any(|found| found.item.closed && found.declares.kept());
    if more && closed.is_some() {
        return (Candidate::Solution(whole(&full, problem, syntax, false)), Rule::Function);
    }
    let closes_itself = match &problem.tests {
        Tests::Check(suite) => suite.candidate_suffix().is_none(),
        _ => true,
    };
    let completion = if closes_itself { &full[from..end] } else { &full[from..close] };
    let rule = if completion.trim_end().len() < text.trim_end().len() { Rule::StopSequence } else { Rule::AsIs };
    (Candidate::Completion(completion.to_owned()), rule)
}
