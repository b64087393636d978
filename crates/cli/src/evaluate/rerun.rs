//! Same command, same answer. A complete run leaves `<results>.run.json` beside its
//! results: the settings that decided the verdicts, the results' hash, and what its
//! report said about the run. The same command run again finds them matching, runs
//! nothing, and reports the same numbers (for any `--k`, and to any new `--summary`).
//! Other settings, or results changed since, mean a new run; `--restart` forces one.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::document::ReportPath;
use crate::error::{CommandError, UnjudgeableBecause};
use crate::output::write_atomically;
use crate::report::{Report, Subset, Tally};
use crate::resume;
use crate::scores;

use super::EvaluateOptions;
use crate::say::say;

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
    let mut name = results.as_os_str().to_owned();
    name.push(".run.json");
    PathBuf::from(name)
}

impl CompleteRun {
    /// Records the run beside its results.
    pub fn save(&self, results: &Path) -> Result<(), CommandError> {
        let path = record_path(results);
        let mut text = serde_json::to_vec_pretty(self).expect("a run record serializes");
        text.push(b'\n');
        write_atomically(&path, &text)
            .map_err(|source| CommandError::Write { path: path.display().to_string(), source })
    }

    /// The complete run of these settings at `results`, if there is one and its results
    /// are as it left them.
    pub fn find(results: &Path, settings: &Map<String, Value>) -> Option<CompleteRun> {
        let record: CompleteRun = serde_json::from_slice(&std::fs::read(record_path(results)).ok()?).ok()?;
        let mut recorded = record.verdict_settings.clone();
        recorded.remove("sandbox");
        let differences = resume::differences(&recorded, settings);
        if !differences.is_empty() {
            say!(
                "{} holds a complete run with other settings ({}); running again",
                results.display(),
                differences.join("; ")
            );
            return None;
        }
        if crate::provenance::sha256_file(results).ok()? != record.results_sha256 {
            say!("{} changed since its run; running again", results.display());
            return None;
        }
        Some(record)
    }

    /// Reports the run again, for the `ks` asked now, executing nothing.
    pub fn report(mut self, options: &EvaluateOptions, document: Option<&ReportPath>) -> Result<(), CommandError> {
        let (results, ks) = (options.results.as_path(), &options.ks[..]);
        let finished = self.run.get("finished_at").and_then(Value::as_str).unwrap_or("earlier").to_owned();
        say!(
            "nothing to run: {} holds this command's complete results (finished {finished}); add --restart to run \
             again",
            results.display()
        );
        let tally = Tally::read(results)?;
        let unjudgeable = tally.unjudgeable_problems();
        let scores = scores::of_tally(&tally, true, results, ks, &options.uncertainty)?;
        self.settings.insert("k".into(), json!(ks));
        self.run.insert("from_earlier_run".into(), json!(true));
        let report = Report {
            subset: self.subset,
            tally: &tally,
            scores: &scores,
            complete: true,
            settings: self.settings,
            run: self.run,
            footer: self.footer,
            covers: None,
        };
        report.publish(options.summary.as_deref())?;
        if let Some(target) = document {
            crate::document::write_if_complete(target, "passk evaluate", &report, results, &options.uncertainty)?;
        }
        if unjudgeable.is_empty() {
            Ok(())
        } else {
            let why = options.set.format.map_or(UnjudgeableBecause::Unknown, UnjudgeableBecause::of);
            Err(CommandError::Unjudgeable { problems: unjudgeable, why })
        }
    }
}
