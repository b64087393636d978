//! The program a sample runs, as `evaluate` and a service both make it: its candidate,
//! taken out of raw model output where asked, in its language, with its problem's code.

use passk_formats::extract;
use passk_formats::problems::{Format, ProblemSet};
use passk_formats::sample::Sample;
use passk_runner::{Candidate, Program, Tests};
use serde_json::json;

use crate::languages::Toolchains;

/// The program `sample` runs. With `extract`, the program is taken out of the sample's
/// text, and what was taken is recorded in the sample's `extracted` field.
pub fn program(sample: &mut Sample, problems: &ProblemSet, toolchains: &Toolchains, extract: bool) -> Program {
    let problem = &problems.problems[sample.problem];
    let language = toolchains.language_of(sample, problems);
    let candidate = if extract {
        // A standard-input problem has no prompt to continue: its program is whole,
        // whichever field holds it, and a base model's stop sequences ("\nif",
        // "\ndef") would cut its main guard and functions off.
        let stdin_problem = matches!(problem.code.tests, Tests::Stdio(_));
        let (raw, whole_program) = match &sample.candidate {
            Candidate::Completion(text) => (text, stdin_problem),
            Candidate::Solution(text) => (text, true),
        };
        let extracted = extract::extract(raw, &problem.code, whole_program, language);
        let (run_as, code) = match &extracted.candidate {
            Candidate::Completion(code) => ("completion", code),
            Candidate::Solution(code) => ("solution", code),
        };
        let record = json!({ "rule": extracted.rule, "run_as": run_as, "code": code });
        sample.fields.insert("extracted".into(), record);
        extracted.candidate
    } else {
        sample.candidate.clone()
    };
    toolchains.program_in(Program::new(&problem.code, &as_its_format_runs_it(problems.format, candidate)), language)
}

/// The candidate as its format runs it. An MBPP sample is a whole program whichever
/// field holds it (its problem has no prompt).
fn as_its_format_runs_it(format: Format, candidate: Candidate) -> Candidate {
    match (format, candidate) {
        (Format::Mbpp | Format::MbppSanitized, Candidate::Solution(text)) => Candidate::Completion(text),
        (_, candidate) => candidate,
    }
}
