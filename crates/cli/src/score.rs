//! `passk score`: pass@k from a results file, executing nothing.

use std::path::PathBuf;

use serde_json::Value;

use crate::input::{string_field, InputError};
use crate::jsonl::JsonlReader;
use crate::report::{Report, Tally};
use crate::CommandError;

#[derive(Debug)]
pub struct ScoreOptions {
    pub results: PathBuf,
    pub ks: Vec<u64>,
    pub summary: Option<PathBuf>,
}

pub fn score(options: ScoreOptions) -> Result<(), CommandError> {
    let reader = JsonlReader::open(&options.results)?;
    let source = reader.source().to_owned();
    let mut tally = Tally::default();
    for record in reader {
        let (line, object) = record?;
        let task_id = string_field(&source, line, &object, "task_id")?;
        let passed = match object.get("passed") {
            Some(Value::Bool(passed)) => *passed,
            Some(_) => {
                return Err(
                    InputError::WrongType { path: source, line, field: "passed", expected: "true or false" }.into()
                )
            }
            None => return Err(InputError::Missing { path: source, line, field: "passed" }.into()),
        };
        let status = match object.get("status") {
            None => None,
            Some(Value::String(status)) => Some(status.as_str()),
            Some(_) => {
                return Err(InputError::WrongType { path: source, line, field: "status", expected: "a string" }.into())
            }
        };
        tally.add(&task_id, passed, status);
    }
    if tally.samples() == 0 {
        return Err(InputError::Empty { path: source, what: "results" }.into());
    }
    // Samples without a verdict leave pass@k unknown, not lower.
    let complete = tally.infrastructure_errors() == 0;
    let unjudgeable = tally.unjudgeable_problems();
    let scores = if complete && unjudgeable.is_empty() { tally.score(&options.ks)? } else { Vec::new() };
    let mut settings = serde_json::Map::new();
    settings.insert("passk_version".into(), env!("CARGO_PKG_VERSION").into());
    settings.insert("results".into(), source.into());
    settings.insert("k".into(), options.ks.clone().into());
    let report = Report {
        tally: &tally,
        scores: &scores,
        complete,
        settings,
        run: serde_json::Map::new(),
        footer: Vec::new(),
        subset: None,
    };
    for warning in report.warnings() {
        eprintln!("warning: {warning}");
    }
    crate::print_report(&report)?;
    if let Some(path) = &options.summary {
        report.write_json(path).map_err(|source| CommandError::Write { path: path.display().to_string(), source })?;
    }
    if !complete {
        Err(CommandError::IncompleteResults { errors: tally.infrastructure_errors() })
    } else if !unjudgeable.is_empty() {
        Err(CommandError::Unjudgeable { problems: unjudgeable })
    } else {
        Ok(())
    }
}
