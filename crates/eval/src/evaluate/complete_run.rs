//! Same command, same answer. A complete run leaves `<results>.run.json` beside its
//! results: the settings that decided the verdicts, the results' hash, and what its
//! report said about the run. The same command run again finds them matching, runs
//! nothing, and reports the same numbers (for any `--k`, and to any new `--summary`).
//! Other settings, or results changed since, mean a new run; `--restart` forces one.
//!
//! But a run can be complete and still hold samples that were `unjudgeable` for want of
//! EvalPlus's expected outputs: their canonical solution failed or timed out, which may
//! be the machine's doing, and failed outputs are not cached. The same command runs
//! exactly those samples again (`reopen`), keeping every other line, as a resume does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::{EvalError, UnjudgeableBecause};
use crate::expected::NO_EXPECTED_OUTPUTS;
use crate::resume;
use passk_formats::results::ResultsFile;
use passk_formats::run::VerdictSettings;
use passk_formats::write::write_atomically;
use passk_formats::InputError;
use passk_report::document::ReportPath;
use passk_report::gather::Gathered;
use passk_report::summary::{Report, Subset};

use super::EvaluateOptions;
use crate::events::{info, EventSink};
use crate::journal::Journal;

/// What a complete run recorded about itself.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompleteRun {
    /// The settings that decided its verdicts, the sandbox level reached among them.
    pub verdict_settings: Map<String, Value>,
    pub results_sha256: String,
    /// Its report's settings, run facts, footer and subset.
    pub settings: Map<String, Value>,
    pub run: Map<String, Value>,
    pub footer: Vec<(String, String)>,
    pub subset: Option<Subset>,
}

pub fn record_path(results: &Path) -> PathBuf {
    passk_formats::write::sibling(results, ".run.json")
}

impl CompleteRun {
    /// Records the run beside its results.
    pub fn save(&self, results: &Path) -> Result<(), EvalError> {
        let path = record_path(results);
        let mut text = serde_json::to_vec_pretty(self).expect("a run record serializes");
        text.push(b'\n');
        write_atomically(&path, &text).map_err(|source| EvalError::Write { path: path.display().to_string(), source })
    }

    /// The record beside `results`, if there is one that reads.
    pub(crate) fn read(results: &Path) -> Option<CompleteRun> {
        serde_json::from_slice(&std::fs::read(record_path(results)).ok()?).ok()
    }

    /// Which of its set's problems the run at `results` covered, where a complete run
    /// recorded it and the results are as it left them: None for a whole set, or where
    /// nothing says.
    pub fn subset_of(results: &Path) -> Option<Subset> {
        let record = CompleteRun::read(results)?;
        if passk_formats::provenance::sha256_file(results).ok()? != record.results_sha256 {
            return None;
        }
        record.subset
    }

    /// The complete run of these settings at `results`, if there is one and its results
    /// are as it left them.
    pub fn find(results: &Path, settings: &VerdictSettings, events: &EventSink) -> Option<CompleteRun> {
        let record = CompleteRun::read(results)?;
        let differences = resume::differences_from(&record.verdict_settings, settings);
        if !differences.is_empty() {
            info!(
                events,
                "{} holds a complete run with other settings ({}); running again",
                results.display(),
                differences.describe()
            );
            return None;
        }
        if passk_formats::provenance::sha256_file(results).ok()? != record.results_sha256 {
            info!(events, "{} changed since its run; running again", results.display());
            return None;
        }
        Some(record)
    }

    /// Makes the run's results an interrupted run's journal if some of its samples were
    /// unjudgeable for want of expected outputs, leaving those to run again, and says so;
    /// returns whether it did. Resumed with the run's own settings, it runs only those.
    pub fn reopen(&self, results: &Path, events: &EventSink) -> Result<bool, EvalError> {
        let unjudged = Unjudged::read(results)?;
        if unjudged.samples.is_empty() {
            return Ok(false);
        }
        resume::record(results, &self.verdict_settings)?;
        Journal::reopen(results, &unjudged.samples)?;
        let rerun = unjudged.samples.len();
        info!(
            events,
            "running again the {} of {} left unjudgeable for want of expected outputs ({}); the other {} keep \
             their results",
            passk_report::words::plural(rerun, "sample"),
            passk_report::words::plural(unjudged.task_ids.len(), "problem"),
            passk_report::words::first_few(&unjudged.task_ids, 5),
            unjudged.total - rerun
        );
        Ok(true)
    }

    /// Reports the run again, for the `ks` asked now, executing nothing.
    pub fn report(
        mut self,
        options: &EvaluateOptions,
        document: Option<&ReportPath>,
        events: &EventSink,
    ) -> Result<(), EvalError> {
        let (results, ks) = (options.results.as_path(), &options.ks[..]);
        let finished = self.run.get("finished_at").and_then(Value::as_str).unwrap_or("earlier").to_owned();
        info!(
            events,
            "nothing to run: {} holds this command's complete results (finished {finished}); add --restart to run \
             again",
            results.display()
        );
        let cluster_by = options.uncertainty.cluster_by.as_deref();
        let gathered = match options.shard {
            Some(_) => Gathered::read_even_empty(results, cluster_by)?,
            None => Gathered::read(results, cluster_by)?,
        };
        let tally = &gathered.tally;
        let unjudgeable = tally.unjudgeable_problems();
        let groups = gathered.groups(&super::task_ids(tally));
        let scores = super::scores_of(tally, true, groups.as_ref(), options)?;
        self.settings.insert("k".into(), json!(ks));
        self.run.insert("from_earlier_run".into(), json!(true));
        let report = Report {
            subset: self.subset,
            tally,
            scores: &scores,
            complete: true,
            settings: self.settings,
            run: self.run,
            footer: self.footer,
            covers: None,
        };
        super::publish(&report, &gathered, options, document, events)?;
        if unjudgeable.is_empty() {
            Ok(())
        } else {
            let why = options.set.format.map_or(UnjudgeableBecause::Unknown, UnjudgeableBecause::of);
            Err(EvalError::Unjudgeable { problems: unjudgeable, why })
        }
    }
}

/// The samples of a complete run that were unjudgeable for want of expected outputs.
struct Unjudged {
    /// By their position in the results, which is the samples'.
    samples: BTreeSet<usize>,
    /// Their problems, each once, in the order of their first sample.
    task_ids: Vec<String>,
    /// How many samples the results hold.
    total: usize,
}

impl Unjudged {
    fn read(results: &Path) -> Result<Unjudged, InputError> {
        let mut unjudged = Unjudged { samples: BTreeSet::new(), task_ids: Vec::new(), total: 0 };
        let mut named = BTreeSet::new();
        for (sample, read) in ResultsFile::open(results)?.enumerate() {
            let (_, line) = read?;
            unjudged.total += 1;
            let verdict = &line.verdict;
            let detail = verdict.detail.as_deref().unwrap_or_default();
            if verdict.status.as_deref() == Some("unjudgeable") && detail.starts_with(NO_EXPECTED_OUTPUTS) {
                unjudged.samples.insert(sample);
                let task_id = line.task_id().unwrap_or_default();
                if named.insert(task_id.to_owned()) {
                    unjudged.task_ids.push(task_id.to_owned());
                }
            }
        }
        Ok(unjudged)
    }
}
