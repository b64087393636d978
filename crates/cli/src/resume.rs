//! Picking up an interrupted run where it stopped.
//!
//! A run records its verdicts in `<results>.partial` as they are decided (see
//! `evaluate::journal`), with the settings that decide them beside it in
//! `<results>.partial.run.json`. Running the same command again keeps every verdict and
//! runs the rest. Running it with different settings is refused, since the results would
//! mix two runs.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::output::{partial_path, write_atomically};

pub fn settings_path(results: &Path) -> PathBuf {
    let mut name = partial_path(results).into_os_string();
    name.push(".run.json");
    PathBuf::from(name)
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
    let partial = partial_path(results);
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

/// The settings in which `recorded` and `current` differ, as `name: was X, now Y`, and
/// the option that sets it where its name does not say (`fallback (--no-fallback): ...`).
pub fn differences(recorded: &Map<String, Value>, current: &Map<String, Value>) -> Vec<String> {
    let mut names: Vec<&String> = recorded.keys().chain(current.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let (was, now) = (recorded.get(name), current.get(name));
            (was != now).then(|| {
                let show = |value: Option<&Value>| value.map_or_else(|| "nothing".to_owned(), Value::to_string);
                let option = option_of(name).map(|option| format!(" ({option})")).unwrap_or_default();
                format!("{name}{option}: was {}, now {}", show(was), show(now))
            })
        })
        .collect()
}

pub fn record(results: &Path, settings: &Map<String, Value>) -> Result<(), ResumeError> {
    let path = settings_path(results);
    let mut text = serde_json::to_vec_pretty(settings).expect("settings serialize");
    text.push(b'\n');
    write_atomically(&path, &text).map_err(|source| ResumeError::Write { path: path.display().to_string(), source })
}

/// Removes what an interrupted run left, to start over or once a run is complete.
pub fn clear(results: &Path) -> std::io::Result<()> {
    for path in [partial_path(results), settings_path(results)] {
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
    }
    Ok(())
}
