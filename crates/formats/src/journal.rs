//! The journal's format. A run appends each verdict to `<results>.partial` the moment it
//! is decided, one line per verdict, `{"sample": INDEX, "result": {...}}`, whatever the
//! order the workers decide them in; a later line for the same sample replaces an
//! earlier one, and a last line without its newline was cut short by a kill. Only a
//! complete run writes the results file, in the samples' order. `passk-eval` writes and
//! reads journals; this is what is in them and where they are.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::results::ResultLine;
use crate::write::sibling;

/// One journal line: sample `sample`'s results line.
#[derive(Debug, Serialize, Deserialize)]
pub struct JournalLine {
    /// The sample's index in its samples file, from 0.
    pub sample: usize,
    pub result: ResultLine,
}

/// Where the journal of a run writing `results` lives.
pub fn path(results: &Path) -> PathBuf {
    sibling(results, ".partial")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_and_the_journal_sits_beside_its_results() {
        let text = r#"{"sample":3,"result":{"task_id":"basic/0","completion":"x","passed":true,"status":"passed","memory_peak_bytes":null,"cpu_seconds":null}}"#;
        let line: JournalLine = serde_json::from_str(text).unwrap();
        assert_eq!(line.sample, 3);
        assert_eq!(line.result.task_id(), Some("basic/0"));
        assert_eq!(line.result.verdict.passed, Some(true));
        assert_eq!(serde_json::to_string(&line).unwrap(), text, "written as read");
        assert_eq!(path(Path::new("/runs/results.jsonl")), Path::new("/runs/results.jsonl.partial"));
    }
}
