//! `passk score`: pass@k from a results file, executing nothing.

use std::path::PathBuf;

use crate::error::CommandError;
use passk_eval::evaluate::CompleteRun;
use passk_formats::run::to_map;
use passk_formats::InputError;
use passk_report::document::{self, ReportPath};
use passk_report::gather::Gathered;
use passk_report::scores::{self, UncertaintyOptions};
use passk_report::summary::Report;
use serde::Serialize;

/// What a summary of `score` records of its settings.
#[derive(Debug, Serialize)]
struct ScoreSettings<'a> {
    passk_version: &'static str,
    results: String,
    k: &'a [u64],
}

#[derive(Debug)]
pub struct ScoreOptions {
    pub results: PathBuf,
    pub ks: Vec<u64>,
    pub summary: Option<PathBuf>,
    pub report: Option<ReportPath>,
    pub uncertainty: UncertaintyOptions,
}

pub fn score(options: ScoreOptions) -> Result<(), CommandError> {
    if let Some(path) = &options.summary {
        passk_formats::write::check_writable(path)
            .map_err(|source| InputError::unwritable("--summary", path, source))?;
    }
    let gathered = Gathered::read(&options.results, options.uncertainty.cluster_by.as_deref())?;
    let tally = &gathered.tally;
    // Samples without a verdict leave pass@k unknown, not lower.
    let complete = tally.infrastructure_errors() == 0;
    let unjudgeable = tally.unjudgeable_problems();
    let task_ids: Vec<String> = tally.counts().iter().map(|(task_id, _)| task_id.clone()).collect();
    let groups = gathered.groups(&task_ids);
    let scores = scores::of_tally(tally, complete, groups.as_ref(), &options.ks, &options.uncertainty)?;
    let settings = to_map(&ScoreSettings {
        passk_version: env!("CARGO_PKG_VERSION"),
        results: options.results.display().to_string(),
        k: &options.ks,
    });
    let report = Report {
        tally,
        scores: &scores,
        complete,
        settings,
        run: serde_json::Map::new(),
        footer: Vec::new(),
        // A results file of a --partial run is still of some of its set's problems.
        subset: CompleteRun::subset_of(&options.results),
        covers: None,
    };
    crate::say::publish(&report, options.summary.as_deref())?;
    if let Some(target) = &options.report {
        crate::say::written(
            document::write_if_complete(
                target,
                "passk score",
                &report,
                &options.results,
                &gathered,
                &options.uncertainty,
            )?,
            target,
        );
    }
    if !complete {
        Err(CommandError::IncompleteResults { errors: tally.infrastructure_errors() })
    } else if !unjudgeable.is_empty() {
        Err(CommandError::Unjudgeable { problems: unjudgeable, why: passk_eval::UnjudgeableBecause::Unknown })
    } else {
        Ok(())
    }
}
