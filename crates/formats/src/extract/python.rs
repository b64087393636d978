//! Python's rules: an answer's definitions, read line by line from the indentation.

use passk_runner::{Candidate, Language, ProblemCode};

use super::markdown::{after_leading_prose, fenced_blocks};
use super::{cut, Extracted, Rule};

/// The program in `raw`, an answer to a problem whose tests call a Python function (or
/// whose program is read on standard input).
pub fn extract(raw: &str, problem: &ProblemCode, whole_program: bool, language: &Language) -> Extracted {
    let blocks = fenced_blocks(raw);
    if !blocks.is_empty() {
        let chosen = blocks
            .iter()
            .find(|block| defines(block, &problem.entry_point))
            .or_else(|| blocks.iter().find(|block| block.contains("return")))
            .unwrap_or(&blocks[0]);
        return Extracted { candidate: from_code(chosen, problem, whole_program), rule: Rule::Fence };
    }
    if let Some(rest) = super::after_prompt(raw, problem) {
        let completion = cut(rest, language).to_owned();
        return Extracted { candidate: Candidate::Completion(completion), rule: Rule::PromptRepeated };
    }
    // A text that starts with an indented line is a body, however it goes on.
    let starts_indented =
        raw.lines().find(|line| !line.trim().is_empty()).is_some_and(|line| line.starts_with([' ', '\t']));
    if !starts_indented && defines(raw, &problem.entry_point) {
        return Extracted { candidate: from_code(raw, problem, whole_program), rule: Rule::Function };
    }
    if whole_program {
        return Extracted { candidate: Candidate::Solution(raw.to_owned()), rule: Rule::AsIs };
    }
    let body = after_leading_prose(raw);
    let cut_body = cut(body, language);
    let rule = if cut_body.len() < raw.len() { Rule::StopSequence } else { Rule::AsIs };
    Extracted { candidate: Candidate::Completion(cut_body.to_owned()), rule }
}

/// Whether `code` defines `name` at the top level.
pub fn defines(code: &str, name: &str) -> bool {
    code.lines().any(|line| top_level_definition(line) == Some(name))
}

/// The name a top-level `def` or `async def` line defines.
fn top_level_definition(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("async ").unwrap_or(line).strip_prefix("def ")?;
    let end = rest.find('(')?;
    Some(rest[..end].trim())
}

/// A block of code as the candidate it stands for: a whole program when it defines the
/// entry point, else the body that continues the prompt.
fn from_code(code: &str, problem: &ProblemCode, whole_program: bool) -> Candidate {
    if defines(code, &problem.entry_point) {
        let kept = top_level_code(code);
        // The prompt's imports and helpers, which the answer may use without repeating.
        let preamble = if whole_program { "" } else { preamble(problem) };
        return Candidate::Solution(format!("{preamble}{kept}"));
    }
    if whole_program {
        Candidate::Solution(code.to_owned())
    } else {
        Candidate::Completion(code.to_owned())
    }
}

/// The part of the prompt before the entry point's definition: its imports and helpers.
fn preamble(problem: &ProblemCode) -> &str {
    let mut offset = 0;
    for line in problem.prompt.split_inclusive('\n') {
        if top_level_definition(line) == Some(problem.entry_point.as_str()) {
            break;
        }
        offset += line.len();
    }
    let preamble = &problem.prompt[..offset];
    // A decorator belongs to the definition it precedes.
    match preamble.trim_end().rfind('\n') {
        Some(at) if preamble[at + 1..].starts_with('@') => &preamble[..at + 1],
        None if preamble.starts_with('@') => "",
        _ => preamble,
    }
}

/// The statements of `code` that define something: imports, definitions, decorators,
/// classes and assignments, each with its indented lines. Prose, calls, prints, asserts
/// and `if __name__ == "__main__":` blocks are left out, as they run at import time and
/// are not part of the answer.
fn top_level_code(code: &str) -> String {
    let mut kept = String::new();
    let mut keeping = false;
    let mut open_string = None;
    for line in code.split_inclusive('\n') {
        // A line inside a triple-quoted string continues the statement it is in (HumanEval/64's
        // `FIX = """`, whose text starts at the line's start).
        let in_string = open_string.is_some();
        open_string = triple_quote_open_after(line, open_string);
        let starts_statement = !in_string && !line.starts_with([' ', '\t']) && !line.trim().is_empty();
        if starts_statement {
            // A closing bracket continues the statement it closes.
            if !line.starts_with([')', ']', '}']) {
                keeping = defines_something(line);
            }
        }
        if keeping || (!starts_statement && line.trim().is_empty() && !kept.is_empty()) {
            kept.push_str(line);
        }
    }
    if !kept.ends_with('\n') {
        kept.push('\n');
    }
    kept
}

/// The triple quote a string is still open with after `line`, given the one open before it.
fn triple_quote_open_after(line: &str, mut open: Option<&'static str>) -> Option<&'static str> {
    let mut rest = line;
    loop {
        match open {
            Some(quote) => match rest.find(quote) {
                Some(at) => {
                    rest = &rest[at + quote.len()..];
                    open = None;
                }
                None => return open,
            },
            None => {
                let first = ["\"\"\"", "'''"].into_iter().filter_map(|quote| Some((rest.find(quote)?, quote))).min();
                let (at, quote) = first?;
                rest = &rest[at + quote.len()..];
                open = Some(quote);
            }
        }
    }
}

fn defines_something(line: &str) -> bool {
    const STARTS: [&str; 7] = ["import ", "from ", "def ", "async def ", "class ", "@", "#"];
    if STARTS.iter().any(|start| line.starts_with(start)) {
        return true;
    }
    // `NAME = ...` or `NAME: type = ...`, but not `NAME == ...`.
    let name_end = line.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(line.len());
    let rest = line[name_end..].trim_start();
    // An annotation is short or assigns: "Note: this is slow" is prose.
    let annotated = rest.starts_with(':') && (rest.contains('=') || rest.split_whitespace().count() <= 2);
    name_end > 0
        && !line.starts_with(|c: char| c.is_ascii_digit())
        && ((rest.starts_with('=') && !rest.starts_with("==")) || annotated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{extract, looks_like_chat};

    fn problem() -> ProblemCode {
        ProblemCode {
            prompt: "from typing import List\n\n\ndef helper(x):\n    return x\n\n\ndef total(xs: List[int]) -> int:\n    \"\"\"Sum.\"\"\"\n".into(),
            tests: passk_runner::Tests::check("", "", "", None),
            entry_point: "total".into(),
        }
    }

    fn solution(text: &str) -> String {
        match extract(text, &problem(), false, Language::python()).candidate {
            Candidate::Solution(code) => code,
            Candidate::Completion(code) => panic!("a completion: {code:?}"),
        }
    }

    fn completion(text: &str) -> (String, Rule) {
        let extracted = extract(text, &problem(), false, Language::python());
        match extracted.candidate {
            Candidate::Completion(code) => (code, extracted.rule),
            Candidate::Solution(code) => panic!("a solution: {code:?}"),
        }
    }

    #[test]
    fn the_fence_that_defines_the_entry_point_wins_and_keeps_the_prompts_helpers() {
        let answer = "Here is an example:\n```python\nprint(total([1, 2]))\n```\nAnd the function:\n```python\ndef total(xs):\n    return sum(helper(x) for x in xs)\n\nprint(total([1]))\n```\nIt sums.";
        let code = solution(answer);
        assert!(code.starts_with("from typing import List\n\n\ndef helper(x):\n    return x\n"), "{code}");
        assert!(code.ends_with("def total(xs):\n    return sum(helper(x) for x in xs)\n\n"), "{code}");
        assert!(!code.contains("print"), "{code}");
    }

    #[test]
    fn a_fenced_body_continues_the_prompt() {
        let extracted = extract("Sure!\n```\n    return sum(xs)\n```\n", &problem(), false, Language::python());
        assert_eq!(
            extracted,
            Extracted { candidate: Candidate::Completion("    return sum(xs)\n".into()), rule: Rule::Fence }
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert!(solution("```python\ndef total(xs):\n    return sum(xs)").contains("return sum(xs)"));
    }

    #[test]
    fn a_repeated_prompt_is_taken_off() {
        let raw = format!("{}    return sum(xs)\n\n\ndef unrelated():\n    pass\n", problem().prompt);
        assert_eq!(completion(&raw), ("    return sum(xs)\n\n".into(), Rule::PromptRepeated));
    }

    /// Regression: 142 of HumanEval's 164 prompts start with a blank line, which an
    /// answer that repeats the prompt does not; the rule missed them all.
    #[test]
    fn a_repeated_prompt_is_taken_off_whatever_blank_lines_lead_either() {
        let mut led = problem();
        led.prompt = format!("\n{}", led.prompt);
        let raw = format!("{}    return sum(xs)\n", problem().prompt);
        let extracted = extract(&raw, &led, false, Language::python());
        assert_eq!(
            extracted,
            Extracted { candidate: Candidate::Completion("    return sum(xs)\n".into()), rule: Rule::PromptRepeated }
        );
        let extracted = extract(&format!("\n\n{raw}"), &problem(), false, Language::python());
        assert_eq!(extracted.rule, Rule::PromptRepeated);
    }

    /// Regression: HumanEval/64's prompt starts `FIX = """` with the string's text at the
    /// line's start, and an answer repeating the prompt kept only its first line, which
    /// does not compile.
    #[test]
    fn a_constant_holding_a_multi_line_string_is_kept_whole() {
        let code = "FIX = \"\"\"\nAdd more test cases.\n\"\"\"\n\ndef f(x):\n    return x\n\nprint(f(1))\n";
        assert_eq!(top_level_code(code), "FIX = \"\"\"\nAdd more test cases.\n\"\"\"\n\ndef f(x):\n    return x\n\n");
    }

    #[test]
    fn stop_sequences_end_a_base_models_completion() {
        let (code, rule) = completion("    return sum(xs)\n\n\nif __name__ == '__main__':\n    print(total([1]))\n");
        assert_eq!((code.as_str(), rule), ("    return sum(xs)\n\n", Rule::StopSequence));
        let (code, rule) = completion("    return sum(xs)\n# tests\n");
        assert_eq!((code.as_str(), rule), ("    return sum(xs)", Rule::StopSequence));
        assert_eq!(completion("    return sum(xs)\n"), ("    return sum(xs)\n".into(), Rule::AsIs));
    }

    #[test]
    fn an_unfenced_function_among_prose_is_kept_without_the_prose() {
        let raw =
            "The function below adds them up.\n\ndef total(xs):\n    return sum(xs)\n\nThis runs in linear time.\n";
        let extracted = extract(raw, &problem(), false, Language::python());
        assert_eq!(extracted.rule, Rule::Function);
        let Candidate::Solution(code) = extracted.candidate else { panic!() };
        assert!(!code.contains("linear") && !code.contains("below"), "{code}");
        assert!(code.contains("def total(xs):\n    return sum(xs)\n"), "{code}");
    }

    #[test]
    fn chat_output_is_recognized_and_code_is_not() {
        assert!(looks_like_chat("Here is the solution:\n    return 1\n"));
        assert!(looks_like_chat("```python\ndef f(): pass\n```"));
        assert!(!looks_like_chat("    return sum(xs)\n"));
        assert!(!looks_like_chat("def total(xs):\n    return sum(xs)\n"));
        assert!(!looks_like_chat("Total = sum(xs)\n"));
    }

    #[test]
    fn assignments_and_comparisons_at_the_top_level() {
        assert!(defines_something("LIMIT = 10\n"));
        assert!(defines_something("cache: dict = {}\n"));
        assert!(!defines_something("x == 1\n"));
        assert!(!defines_something("print(total([1]))\n"));
        assert!(!defines_something("Here is how it works:\n"));
        assert!(!defines_something("Note: this is slow\n"));
    }
}
