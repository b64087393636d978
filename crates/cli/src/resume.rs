//! Picking up an interrupted run where it stopped.
//!
//! A run writes its results under `<results>.partial`, with the settings that decide
//! its verdicts beside it in `<results>.partial.run.json`. Running the same command again
//! keeps every whole line of the partial file up to the first one without a verdict
//! (cut short, or an infrastructure error) and runs the rest. Running it with different
//! settings is refused, since the results would mix two runs.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::output::{partial_path, write_atomically};
use crate::report::Tally;

pub fn settings_path(results: &Path) -> PathBuf {
    let mut name = partial_path(results).into_os_string();
    name.push(".run.json");
    PathBuf::from(name)
}

/// What an interrupted run left.
#[derive(Debug)]
pub struct Leftover {
    /// The settings it ran with.
    pub settings: Map<String, Value>,
    /// How many samples, from the first, have their result.
    pub done: usize,
    /// Where their lines end in the partial file.
    pub end: u64,
    pub tally: Tally,
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("cannot read the interrupted run's {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} has no readable record of its run's settings ({settings}); start over with --restart")]
    NoSettings { path: String, settings: String },
    #[error("cannot record the run's settings in {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Reads what an interrupted run left at `results`, if anything.
pub fn leftover(results: &Path) -> Result<Option<Leftover>, ResumeError> {
    let partial = partial_path(results);
    let file = match std::fs::File::open(&partial) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ResumeError::Read { path: partial.display().to_string(), source }),
    };
    let settings_file = settings_path(results);
    let settings = std::fs::read(&settings_file)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Map<String, Value>>(&bytes).ok())
        .ok_or_else(|| ResumeError::NoSettings {
            path: partial.display().to_string(),
            settings: settings_file.display().to_string(),
        })?;
    let mut reader = BufReader::new(file);
    let (mut done, mut end, mut tally) = (0, 0, Tally::default());
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|source| ResumeError::Read { path: partial.display().to_string(), source })?;
        // A line without its newline was cut short when the run stopped.
        if read == 0 || line.last() != Some(&b'\n') {
            break;
        }
        let Some(result) = judged(&line) else { break };
        tally.add(&result.0, result.1, Some(&result.2));
        done += 1;
        end += read as u64;
    }
    Ok(Some(Leftover { settings, done, end, tally }))
}

/// `(task_id, passed, status)` of a whole results line that has a verdict.
fn judged(line: &[u8]) -> Option<(String, bool, String)> {
    let value: Value = serde_json::from_slice(line).ok()?;
    let status = value.get("status")?.as_str()?;
    if status == "infrastructure" {
        return None;
    }
    Some((value.get("task_id")?.as_str()?.to_owned(), value.get("passed")?.as_bool()?, status.to_owned()))
}

/// The settings in which `recorded` and `current` differ, as `name: was X, now Y`.
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
                format!("{name}: was {}, now {}", show(was), show(now))
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
