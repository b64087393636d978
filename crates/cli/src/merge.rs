//! `passk merge`: the shards of a run joined into a single run's results, then reported
//! as that run would be.

use serde_json::json;

use crate::args::MergeArgs;
use crate::error::CommandError;
use crate::say::say;
use passk_eval::merge::MergeOptions;
use passk_formats::InputError;
use passk_report::document::{self, ReportPath};
use passk_report::gather::Gathered;
use passk_report::scores;
use passk_report::summary::Report;

pub fn merge(args: MergeArgs) -> Result<(), CommandError> {
    // Every output is tried before anything is written.
    let outputs =
        std::iter::once(("--output", &args.output)).chain(args.scoring.summary.iter().map(|s| ("--summary", s)));
    for (option, path) in outputs {
        passk_formats::write::check_writable(path).map_err(|source| InputError::unwritable(option, path, source))?;
    }
    let document = args.scoring.report.as_deref().map(ReportPath::new).transpose()?;
    let shards = args.shards.len();
    let options = MergeOptions { shards: args.shards, output: args.output, samples: args.samples };
    let record = passk_eval::merge::merge(&options)?;
    let uncertainty = args.scoring.uncertainty.options();
    let gathered = Gathered::read(&options.output, uncertainty.cluster_by.as_deref())?;
    let tally = &gathered.tally;
    let unjudgeable = tally.unjudgeable_problems();
    let task_ids: Vec<String> = tally.counts().iter().map(|(task_id, _)| task_id.clone()).collect();
    let groups = gathered.groups(&task_ids);
    let scores = scores::of_tally(tally, true, groups.as_ref(), &args.scoring.k, &uncertainty)?;
    let mut settings = record.settings;
    settings.insert("k".into(), json!(args.scoring.k));
    let report = Report {
        subset: record.subset,
        tally,
        scores: &scores,
        complete: true,
        settings,
        run: record.run,
        footer: record.footer,
        covers: None,
    };
    crate::say::publish(&report, args.scoring.summary.as_deref())?;
    if let Some(target) = &document {
        let written =
            document::write_if_complete(target, "passk merge", &report, &options.output, &gathered, &uncertainty)?;
        crate::say::written(written, target);
    }
    say!("merged the {shards} shards' results: {}", options.output.display());
    if unjudgeable.is_empty() {
        Ok(())
    } else {
        Err(CommandError::Unjudgeable { problems: unjudgeable, why: passk_eval::UnjudgeableBecause::Unknown })
    }
}
