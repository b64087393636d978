//! Picking up an interrupted run where it stopped.
//!
//! A run records its verdicts in `<results>.partial` as they are decided (see
//! `evaluate::journal`), with the settings that decide them beside it in
//! `<results>.partial.run.json`. Running the same command again keeps every verdict and
//! runs the rest. Running it with different settings is refused, since the results would
//! mix two runs.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use passk_formats::write::{sibling, write_atomically};

use passk_formats::run::VerdictSettings;

use crate::journal::Journal;

pub fn settings_path(results: &Path) -> PathBuf {
    sibling(&Journal::path(results), ".run.json")
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("{path} has no readable record of its run's settings ({settings}); start over with --restart")]
    NoSettings { path: String, settings: String },
    #[error("cannot record the run's settings in {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The settings an interrupted run recorded, if it left results to resume.
pub fn interrupted_settings(results: &Path) -> Result<Option<Map<String, Value>>, ResumeError> {
    let partial = Journal::path(results);
    if !partial.exists() {
        return Ok(None);
    }
    let settings_file = settings_path(results);
    std::fs::read(&settings_file)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Map<String, Value>>(&bytes).ok())
        .map(Some)
        .ok_or_else(|| ResumeError::NoSettings {
            path: partial.display().to_string(),
            settings: settings_file.display().to_string(),
        })
}

/// The options that set a setting whose name does not say it.
fn option_of(setting: &str) -> Option<&'static str> {
    Some(match setting {
        "fallback" => "--no-fallback",
        "retry_timeouts" => "--retry-timeouts",
        "allowed_packages" => "--allow-package",
        "sandbox_asked" => "--sandbox",
        "calibrate" => "--calibrate",
        "extract" => "--extract",
        _ => return None,
    })
}

/// How two runs' settings differ.
#[derive(Debug, Default)]
pub struct Differences {
    /// The input files whose contents changed, in words: "the samples file s.jsonl
    /// changed since the run began (SHA-256 ...)".
    pub files: Vec<String>,
    /// The other settings, as `name: was X, now Y`.
    pub settings: Vec<String>,
}

impl Differences {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.settings.is_empty()
    }

    /// All of them, in one phrase.
    pub fn describe(&self) -> String {
        self.files.iter().chain(&self.settings).cloned().collect::<Vec<_>>().join("; ")
    }
}

/// The settings in which an earlier run's `recorded` settings differ from `current`. The
/// sandbox level is compared only once `current` has one: it is known once the workers
/// are up, and a run is refused before they start where anything else differs.
pub fn differences_from(recorded: &Map<String, Value>, current: &VerdictSettings) -> Differences {
    let current = passk_formats::run::to_map(current);
    let mut recorded = recorded.clone();
    if !current.contains_key("sandbox") {
        recorded.remove("sandbox");
    }
    differences(&recorded, &current)
}

/// The settings in which `recorded` and `current` differ: a changed file named in words,
/// its digests only beside them; any other setting as `name: was X, now Y`, with the
/// option that sets it where its name does not say (`fallback (--no-fallback): ...`).
pub fn differences(recorded: &Map<String, Value>, current: &Map<String, Value>) -> Differences {
    let mut names: Vec<&String> = recorded.keys().chain(current.keys()).collect();
    names.sort();
    names.dedup();
    let mut found = Differences::default();
    for name in names {
        let (was, now) = (recorded.get(name), current.get(name));
        if was == now {
            continue;
        }
        if let Some(file) = file_of(name, current) {
            found.files.push(changed(&file, was, now));
        } else if let (Some(Value::Object(was)), Some(Value::Object(now))) = (was, now) {
            // The options of how tests run, one by one; the checker is a file.
            let inner = differences(was, now);
            found.files.extend(inner.files);
            found.settings.extend(inner.settings.into_iter().map(|setting| format!("{name}.{setting}")));
        } else {
            let option = option_of(name).map(|option| format!(" ({option})")).unwrap_or_default();
            found.settings.push(format!("{name}{option}: was {}, now {}", show(was), show(now)));
        }
    }
    found
}

fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_owned(), Value::to_string)
}

/// What file the digest `setting` is of, named as a message says it, from `current`.
fn file_of(setting: &str, current: &Map<String, Value>) -> Option<String> {
    let path = |key: &str| current.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    Some(match setting {
        "samples_sha256" => match path("samples").as_str() {
            "-" => "the samples read from standard input".to_owned(),
            samples => format!("the samples file {samples}"),
        },
        "problems_sha256" => format!("the problem set {}", path("problems")),
        "checker_sha256" => "the --checker file".to_owned(),
        "driver_sha256" => "passk's driver and language table (another build of passk)".to_owned(),
        _ => return None,
    })
}

/// A file whose contents changed, with the digests beside its name.
fn changed(file: &str, was: Option<&Value>, now: Option<&Value>) -> String {
    let digest = |value: Option<&Value>| match value.and_then(Value::as_str) {
        Some(digest) => format!("{}...", digest.chars().take(12).collect::<String>()),
        None => "none".to_owned(),
    };
    format!("{file} changed since the run began (SHA-256 {} then, {} now)", digest(was), digest(now))
}

pub fn record(results: &Path, settings: &impl serde::Serialize) -> Result<(), ResumeError> {
    let path = settings_path(results);
    let mut text = serde_json::to_vec_pretty(settings).expect("settings serialize");
    text.push(b'\n');
    write_atomically(&path, &text).map_err(|source| ResumeError::Write { path: path.display().to_string(), source })
}

/// Removes what an interrupted run left, to start over or once a run is complete.
pub fn clear(results: &Path) -> std::io::Result<()> {
    for path in [Journal::path(results), settings_path(results)] {
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn settings(value: Value) -> Map<String, Value> {
        let Value::Object(settings) = value else { unreachable!("an object") };
        settings
    }

    #[test]
    fn equal_settings_differ_in_nothing() {
        let run = settings(json!({"k": [1, 10], "jobs": 2, "set": {"base_only": false}}));
        assert!(differences(&run, &run.clone()).is_empty());
    }

    /// A changed input file is named in words, and apart from settings, which say their
    /// option where its name does not, and what they were and are.
    #[test]
    fn a_changed_file_and_a_changed_setting_are_named_as_a_user_knows_them() {
        let was = settings(json!({
            "samples": "s.jsonl", "samples_sha256": "aa", "problems": "p.jsonl", "problems_sha256": "bb",
            "fallback": true, "timeout": 3.0, "set": {"base_only": false, "checker_sha256": null},
        }));
        let now = settings(json!({
            "samples": "s.jsonl", "samples_sha256": "cc", "problems": "p.jsonl", "problems_sha256": "bb",
            "fallback": false, "timeout": 3.0, "set": {"base_only": true, "checker_sha256": "dd"},
        }));
        let found = differences(&was, &now);
        assert_eq!(found.files.len(), 2, "{found:?}");
        assert!(found.files.iter().any(|file| file.contains("the samples file s.jsonl")), "{found:?}");
        assert!(found.files.iter().any(|file| file.contains("the --checker file")), "{found:?}");
        assert_eq!(
            found.settings,
            ["fallback (--no-fallback): was true, now false", "set.base_only: was false, now true"]
        );
        assert!(found.describe().contains("; "), "{}", found.describe());
    }

    /// Regression: a run interrupted under one build of passk resumed under another of
    /// the same version (another commit, another driver or language table) and mixed
    /// their verdicts in one results file; the driver's digest is a setting, named.
    #[test]
    fn another_build_of_passk_is_a_difference() {
        let was = settings(json!({"passk_version": "0.1.0", "driver_sha256": "aa"}));
        let now = settings(json!({"passk_version": "0.1.0", "driver_sha256": "bb"}));
        let found = differences(&was, &now);
        assert_eq!(found.files.len(), 1, "{found:?}");
        assert!(found.files[0].starts_with("passk's driver and language table"), "{found:?}");
        let current = passk_runner::sandbox::driver_package::judging_digest();
        assert_eq!(current.len(), 64);
        assert_eq!(current, passk_runner::sandbox::driver_package::judging_digest(), "a digest, the same each time");
    }

    /// A setting only one run has is "nothing" in the other.
    #[test]
    fn a_setting_one_run_lacks_is_nothing_there() {
        let was = settings(json!({"jobs": 2}));
        let now = settings(json!({"jobs": 2, "extract": true}));
        assert_eq!(differences(&was, &now).settings, ["extract (--extract): was nothing, now true"]);
    }

    /// The settings a run records are what a resume reads; a journal without them is
    /// refused rather than resumed under unknown settings.
    #[test]
    fn recorded_settings_are_read_back_and_a_journal_without_them_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        assert!(interrupted_settings(&results).unwrap().is_none(), "no journal, nothing to resume");
        std::fs::write(Journal::path(&results), "").unwrap();
        assert!(matches!(interrupted_settings(&results), Err(ResumeError::NoSettings { .. })));
        let run = settings(json!({"jobs": 2}));
        record(&results, &run).unwrap();
        assert_eq!(interrupted_settings(&results).unwrap(), Some(run));
    }
}
