//! The samples file, appended to as samples arrive, and the record of the request
//! beside it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Map, Value};

use crate::error::GenerateError;

/// Where the request's settings are recorded: `<samples>.request.json`.
pub fn request_record_path(samples: &Path) -> PathBuf {
    passk_formats::write::sibling(samples, ".request.json")
}

/// Settings a samples file may be asked again with, and still be one file: more
/// samples, what the server was found to take, where it is served, and the path the
/// problems were given by (their SHA-256 decides).
const MAY_DIFFER: [&str; 5] = ["n", "learned", "passk_version", "endpoint", "problems"];

#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    /// Held until the run ends: two runs appending to one file would mix two models.
    _lock: passk_formats::lock::FileLock,
    /// Where a restart moved the earlier samples and their record, until this run has
    /// samples of its own.
    set_aside: Option<[(PathBuf, PathBuf); 2]>,
    file: Mutex<std::fs::File>,
    /// The indices each task already has.
    pub have: BTreeMap<String, BTreeSet<u32>>,
    /// Whether a line cut short by a crash was dropped from the end.
    pub dropped_torn_line: bool,
}

impl Store {
    /// Opens the samples file at `path` for `request`, reading the samples an earlier
    /// run of the same request wrote; `restart` starts it over. `defaulted` names the
    /// settings the user left to a default, with the option that sets them, so that a
    /// refusal can say how to ask as the file was asked.
    pub fn open(
        path: &Path,
        request: &Map<String, Value>,
        restart: bool,
        defaulted: &[(&str, &str)],
    ) -> Result<Store, GenerateError> {
        let lock = passk_formats::lock::FileLock::acquire(path, "--output")?;
        let record = request_record_path(path);
        fn write_error(at: &Path) -> impl Fn(std::io::Error) -> GenerateError + '_ {
            move |source| GenerateError::Write { path: at.display().to_string(), source }
        }
        // A restart keeps the earlier samples aside, not deleted: a run that fails before
        // its first sample (a mistyped model) puts them back.
        let mut set_aside = None;
        if restart && path.exists() {
            let moves = [path, record.as_path()].map(|from| (from.to_owned(), before_restart(from)));
            for (from, to) in &moves {
                match std::fs::rename(from, to) {
                    Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(write_error(to)(error)),
                    _ => {}
                }
            }
            set_aside = Some(moves);
        }
        // A file without a sample yet (a run that stopped at its first request, such as
        // one with a mistyped model) binds no settings.
        let holds_samples = std::fs::metadata(path).is_ok_and(|metadata| metadata.len() > 0);
        if holds_samples {
            let recorded: Option<Map<String, Value>> =
                std::fs::read(&record).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok());
            let Some(recorded) = recorded else {
                return Err(GenerateError::OtherRequest {
                    path: path.display().to_string(),
                    differences: format!("it has no record of its request at {}", record.display()),
                });
            };
            let mut differences = differences(&recorded, request);
            let (then, now) = (recorded.get("n").and_then(Value::as_u64), request.get("n").and_then(Value::as_u64));
            if let (Some(then), Some(now)) = (then, now) {
                if now < then {
                    let fewer = format!("n: {then} then, {now} now (a larger n asks for more samples; a smaller one cannot take any back)");
                    differences = if differences.is_empty() { fewer } else { format!("{differences}; {fewer}") };
                }
            }
            for (setting, option) in defaulted {
                if let Some(then) = recorded.get(*setting).filter(|then| Some(*then) != request.get(*setting)) {
                    differences.push_str(&format!(
                        "; {option} was left to its default: give {option} {then} to ask as the file was asked"
                    ));
                }
            }
            if !differences.is_empty() {
                return Err(GenerateError::OtherRequest { path: path.display().to_string(), differences });
            }
        }
        let (have, dropped_torn_line) = read_existing(path)?;
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(write_error(path))?;
        let bytes = serde_json::to_vec_pretty(request).map_err(|error| write_error(&record)(error.into()))?;
        passk_formats::write::write_atomically(&record, &bytes).map_err(write_error(&record))?;
        Ok(Store { path: path.to_owned(), _lock: lock, set_aside, file: Mutex::new(file), have, dropped_torn_line })
    }

    /// Ends a restart: the earlier samples are dropped once this run is complete, and put
    /// back where it stopped before its first sample, which it says by returning true.
    /// Otherwise they stay aside, named `<samples>.before-restart`.
    pub fn end_restart(&self, complete: bool, written: usize) -> Result<bool, GenerateError> {
        let Some(moves) = &self.set_aside else { return Ok(false) };
        let restore = !complete && written == 0;
        for (from, to) in moves {
            if complete {
                std::fs::remove_file(to).or_else(|error| match error.kind() {
                    std::io::ErrorKind::NotFound => Ok(()),
                    _ => Err(error),
                })
            } else if restore && to.exists() {
                std::fs::rename(to, from)
            } else {
                Ok(())
            }
            .map_err(|source| GenerateError::Write { path: to.display().to_string(), source })?;
        }
        Ok(restore)
    }

    /// Updates the record with what the server was found to take.
    pub fn record(&self, request: &Map<String, Value>) -> Result<(), GenerateError> {
        let record = request_record_path(&self.path);
        let bytes = serde_json::to_vec_pretty(request).map_err(std::io::Error::from);
        bytes
            .and_then(|bytes| passk_formats::write::write_atomically(&record, &bytes))
            .map_err(|source| GenerateError::Write { path: record.display().to_string(), source })
    }

    /// Appends one sample, in one write, so that a crash leaves whole lines but the last.
    pub fn append(
        &self,
        task_id: &str,
        index: u32,
        completion: &str,
        finish_reason: Option<&str>,
    ) -> Result<(), GenerateError> {
        let mut line = json!({"task_id": task_id, "index": index, "completion": completion});
        if let Some(reason) = finish_reason {
            line["finish_reason"] = json!(reason);
        }
        let mut text = line.to_string();
        text.push('\n');
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        file.write_all(text.as_bytes())
            .map_err(|source| GenerateError::Write { path: self.path.display().to_string(), source })
    }
}

/// Where a restart keeps `path` until it has samples of its own.
fn before_restart(path: &Path) -> PathBuf {
    passk_formats::write::sibling(path, ".before-restart")
}

/// The samples already in `path`, by task; a last line cut short is dropped from the file.
fn read_existing(path: &Path) -> Result<(BTreeMap<String, BTreeSet<u32>>, bool), GenerateError> {
    let mut have: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok((have, false)),
        Err(source) => return Err(GenerateError::Write { path: path.display().to_string(), source }),
    };
    let whole = text.iter().rposition(|&byte| byte == b'\n').map_or(0, |at| at + 1);
    let torn = whole < text.len();
    if torn {
        let file = std::fs::OpenOptions::new().write(true).open(path);
        file.and_then(|file| file.set_len(whole as u64))
            .map_err(|source| GenerateError::Write { path: path.display().to_string(), source })?;
    }
    let error = |line: usize, message: &str| GenerateError::Samples {
        path: path.display().to_string(),
        line,
        message: message.to_owned(),
    };
    for (number, line) in text[..whole].split(|&byte| byte == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let value: Value = serde_json::from_slice(line).map_err(|_| error(number + 1, "not a JSON object"))?;
        let task_id = value["task_id"].as_str().ok_or_else(|| error(number + 1, "no `task_id`"))?;
        let index = value["index"].as_u64().and_then(|index| u32::try_from(index).ok());
        let index = index.ok_or_else(|| error(number + 1, "no `index`: not a file passk generate wrote"))?;
        if !have.entry(task_id.to_owned()).or_default().insert(index) {
            return Err(error(number + 1, &format!("sample {index} of {task_id} is here twice")));
        }
    }
    Ok((have, torn))
}

/// The settings that differ, as `name: recorded, now asked`.
fn differences(recorded: &Map<String, Value>, asked: &Map<String, Value>) -> String {
    let names: BTreeSet<&String> = recorded.keys().chain(asked.keys()).collect();
    names
        .into_iter()
        .filter(|name| !MAY_DIFFER.contains(&name.as_str()))
        .filter(|name| recorded.get(*name) != asked.get(*name))
        .map(|name| {
            let show = |value: Option<&Value>| value.map_or("none".to_owned(), Value::to_string);
            format!("{name}: {} then, {} now", show(recorded.get(name)), show(asked.get(name)))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_cut_short_by_a_crash_is_dropped_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("samples.jsonl");
        std::fs::write(&path, "{\"task_id\": \"a\", \"index\": 0, \"completion\": \"x\"}\n{\"task_id\": \"a\", \"ind")
            .unwrap();
        let (have, torn) = read_existing(&path).unwrap();
        assert!(torn);
        assert_eq!(have["a"], BTreeSet::from([0]));
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
    }

    #[test]
    fn other_settings_are_named_and_more_samples_are_not_other_settings() {
        let then = json!({"model": "a", "n": 1, "temperature": 0.2}).as_object().unwrap().clone();
        let now = json!({"model": "b", "n": 5, "temperature": 0.2}).as_object().unwrap().clone();
        assert_eq!(differences(&then, &now), "model: \"a\" then, \"b\" now");
    }
}
