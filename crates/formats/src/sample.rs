//! A samples-file record, checked against its problem set.

use passk_runner::{Candidate, Language};
use serde_json::{Map, Value};

use crate::error::InputError;
use crate::fields::string_field;
use crate::jsonl::Record;
use crate::problems::{Format, ProblemSet};

/// A validated sample: which problem it answers, its candidate, and all its fields.
#[derive(Debug)]
pub struct Sample {
    pub line: usize,
    pub problem: usize,
    pub candidate: Candidate,
    /// The language its `language` field names, where it has one.
    pub language: Option<&'static Language>,
    pub fields: Map<String, Value>,
}

/// Checks one samples-file record against the problem set.
pub fn sample(source: &str, problems: &ProblemSet, record: Record) -> Result<Sample, InputError> {
    let (line, mut fields) = record;
    let task_id = match fields.get("task_id") {
        // MBPP's and APPS's own ids are numbers; the results name the problem as the set does.
        Some(Value::Number(number)) if problems.numeric_ids() && (number.is_u64() || number.is_i64()) => {
            let id = number.to_string();
            fields.insert("task_id".into(), Value::String(id.clone()));
            id
        }
        Some(Value::Number(number)) => {
            return Err(InputError::ForeignNumericTask {
                path: source.to_owned(),
                line,
                task_id: number.to_string(),
                problems: problems.name.clone(),
                example: problems.problems[0].task_id.clone(),
            })
        }
        _ => string_field(source, line, &fields, "task_id")?,
    };
    let problem = problems.position(&task_id).ok_or_else(|| InputError::UnknownTask {
        path: source.to_owned(),
        line,
        hint: foreign_task_hint(&task_id, problems),
        task_id,
        problems: problems.name.clone(),
    })?;
    if !fields.contains_key("completion") && !fields.contains_key("solution") && looks_like_a_problem(&fields) {
        let names: Vec<&str> = fields.keys().map(String::as_str).collect();
        return Err(InputError::ProblemsAsSamples { path: source.to_owned(), line, fields: names.join(", ") });
    }
    let candidate = match (fields.contains_key("completion"), fields.contains_key("solution")) {
        (true, true) => return Err(InputError::BothCandidates { path: source.to_owned(), line }),
        (true, false) => Candidate::Completion(string_field(source, line, &fields, "completion")?),
        (false, true) => Candidate::Solution(string_field(source, line, &fields, "solution")?),
        (false, false) => {
            let fields = fields.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
            return Err(InputError::NoCandidate { path: source.to_owned(), line, fields });
        }
    };
    let language = match fields.get("language") {
        None | Some(Value::Null) => None,
        Some(_) => {
            let name = string_field(source, line, &fields, "language")?;
            Some(Language::named(&name).ok_or_else(|| InputError::UnknownLanguage {
                path: source.to_owned(),
                line,
                language: name,
                known: Language::names().join(", "),
            })?)
        }
    };
    Ok(Sample { line, problem, candidate, language, fields })
}

/// Whether a record has the fields of a problem rather than of a sample.
pub fn looks_like_a_problem(fields: &Map<String, Value>) -> bool {
    ["prompt", "test", "test_list", "entry_point", "canonical_solution"].iter().any(|field| fields.contains_key(*field))
}

/// A task id of the set's own family that the set lacks is most often a typo or a case
/// slip (`humaneval/0`, `HumanEval/12x`): name the set's id it is closest to, where one
/// is close.
fn closest_task_hint(task_id: &str, problems: &ProblemSet) -> String {
    let lowered = task_id.to_lowercase();
    let mut by_distance: Vec<(usize, &str)> = problems
        .problems
        .iter()
        .map(|problem| (strsim::levenshtein(&lowered, &problem.task_id.to_lowercase()), problem.task_id.as_str()))
        .collect();
    by_distance.sort_unstable();
    // Where two ids are as close, naming either would be a guess.
    match by_distance.as_slice() {
        [(distance, id), rest @ ..]
            if *distance <= 2
                && *distance < task_id.chars().count() / 2
                && rest.first().map_or(true, |(next, _)| next > distance) =>
        {
            format!(" (did you mean {id:?}?)")
        }
        _ => String::new(),
    }
}

/// Where a task id's family (`Mbpp` of `Mbpp/2`) is none of the set's, the samples were
/// written for another problem set: say so.
fn foreign_task_hint(task_id: &str, problems: &ProblemSet) -> String {
    // A family that differs only in case is a slip of the same set's, not another set.
    let family = |id: &str| id.split_once('/').map(|(family, _)| family.to_lowercase());
    let theirs = family(task_id);
    // Sanitized MBPP keeps some of the original's problems under the same numbers: a
    // number it lacks is most likely a sample of the original MBPP.
    if problems.format == Format::MbppSanitized && task_id.parse::<u64>().is_ok() {
        return format!(
            ": sanitized MBPP holds {} of the original MBPP's problems, and not this one; samples of the original \
             are evaluated against its own file: {}",
            problems.problems.len(),
            crate::problems::fetch_benchmark("mbpp", "mbpp.jsonl")
        );
    }
    if theirs.is_none() || problems.problems.iter().any(|problem| family(&problem.task_id) == theirs) {
        return closest_task_hint(task_id, problems);
    }
    format!(
        ": these samples belong to another problem set (the set's ids are such as {:?})",
        problems.problems[0].task_id
    )
}
