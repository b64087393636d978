//! The run's journal: every verdict reaches the disk the moment it is decided.
//!
//! Samples finish in whatever order the workers get through them, and one slow sample
//! must not hold back the thousands decided after it: a run killed with SIGKILL at any
//! moment loses only the programs that were running. So each verdict is appended to the
//! journal (its format: `passk_formats::journal`), and only a complete run writes the
//! results file, in the samples' order. A later line for the same sample (a retried
//! time-out) replaces an earlier one. A resume reads the journal back, keeps every
//! sample that has a verdict and runs the rest; a line cut short by the kill is dropped.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use passk_runner::{Status, Verdict};
use serde_json::{Map, Value};

use passk_formats::journal::{self, JournalLine as Line};
use passk_formats::results::{ResultLine, VerdictFields};
use passk_formats::write::{sibling, LineWriter};
use passk_formats::InputError;
use passk_report::gather::Gathered;
use passk_report::tally::{Outcome, Tally, TestsPassed};

/// The last line the journal holds for a sample, in 48 bytes: a run of a million
/// samples keeps its index in 48 MB.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    offset: u64,
    /// 0 for a sample without a line.
    len: u32,
    /// Its task id and status, as indices into `Recorded::names`.
    task_id: u32,
    status: u32,
    passed: bool,
    retried: bool,
    /// Judged in process by the fallback (`"verdicts": "in-process"`).
    in_process: bool,
    base_passed: Option<bool>,
    tests: Option<TestsPassed>,
}

const _: () = assert!(size_of::<Entry>() == 48);

impl Entry {
    fn is_present(&self) -> bool {
        self.len > 0
    }
}

/// Task ids and statuses, each kept once.
#[derive(Debug, Default)]
struct Names {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Names {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 2^32 distinct names");
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}:{line}: not a line passk wrote ({problem}); the journal of the interrupted run is damaged, so start \
         over with --restart",
        .path.display()
    )]
    Damaged { path: PathBuf, line: usize, problem: String },
    /// Its lines cannot be reported as asked (a `--cluster-by` field a line lacks).
    #[error(transparent)]
    Gathering(#[from] InputError),
}

/// What the journal holds, by sample index.
#[derive(Debug, Default)]
pub struct Recorded {
    entries: Vec<Entry>,
    names: Names,
    /// Where its last whole line ends.
    end: u64,
}

impl Recorded {
    /// Reads the journal at `path`, which was written for `total` samples.
    fn read(path: &Path, total: usize) -> Result<Recorded, JournalError> {
        let read_error = |source| JournalError::Read { path: path.to_owned(), source };
        let mut reader = BufReader::new(File::open(path).map_err(read_error)?);
        let mut recorded = Recorded { entries: vec![Entry::default(); total], names: Names::default(), end: 0 };
        let mut text = Vec::new();
        for number in 1.. {
            text.clear();
            let read = reader.read_until(b'\n', &mut text).map_err(read_error)?;
            // A line without its newline was cut short when the run was killed.
            if read == 0 || text.last() != Some(&b'\n') {
                break;
            }
            let damaged = |problem: String| JournalError::Damaged { path: path.to_owned(), line: number, problem };
            let line: Line = serde_json::from_slice(&text).map_err(|error| damaged(error.to_string()))?;
            if line.sample >= total {
                return Err(damaged(format!("sample {} of {total}", line.sample)));
            }
            let verdict = &line.result.verdict;
            recorded.entries[line.sample] = Entry {
                offset: recorded.end,
                len: u32::try_from(read).map_err(|_| damaged(format!("a line of {read} bytes")))?,
                task_id: recorded.names.id(line.result.task_id().unwrap_or_default()),
                status: recorded.names.id(verdict.status.as_deref().unwrap_or_default()),
                passed: verdict.passed.unwrap_or(false),
                retried: verdict.retried.unwrap_or(false),
                in_process: verdict.verdicts.as_deref() == Some("in-process"),
                base_passed: verdict.base_passed,
                tests: verdict.tests.map(|tests| TestsPassed::new(tests.passed, tests.run, tests.total)),
            };
            recorded.end += read as u64;
        }
        Ok(recorded)
    }

    fn status(&self, index: usize) -> Option<&str> {
        let entry = self.entries.get(index).filter(|entry| entry.is_present())?;
        Some(self.names.name(entry.status))
    }

    /// Sample `index`'s status, if it has a line.
    pub fn status_of(&self, index: usize) -> Option<&str> {
        self.status(index)
    }

    /// The samples, in order, whose lines answer one of `task_ids`.
    pub fn samples_of(&self, task_ids: &std::collections::BTreeSet<String>) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&index| {
                let entry = &self.entries[index];
                entry.is_present() && task_ids.contains(self.names.name(entry.task_id))
            })
            .collect()
    }

    /// Whether sample `index`'s line says the fallback judged it in process.
    pub fn is_in_process(&self, index: usize) -> bool {
        self.entries.get(index).is_some_and(|entry| entry.is_present() && entry.in_process)
    }

    /// The task ids of the problems with a sample judged in process: those the fallback
    /// decided on.
    pub fn judged_in_process(&self) -> std::collections::BTreeSet<String> {
        self.entries
            .iter()
            .filter(|entry| entry.is_present() && entry.in_process)
            .map(|entry| self.names.name(entry.task_id).to_owned())
            .collect()
    }

    /// Whether sample `index` has its verdict: a line marking a fault of the machine
    /// leaves it to be run again.
    pub fn is_decided(&self, index: usize) -> bool {
        self.status(index).is_some_and(|status| status != Status::Infrastructure.as_str())
    }

    /// How many samples have their verdict.
    pub fn decided(&self) -> usize {
        (0..self.entries.len()).filter(|&index| self.is_decided(index)).count()
    }

    /// Samples that timed out and were not run again, for `--retry-timeouts`. A retry
    /// runs in judge mode, so a sample the fallback judged in process is not among them:
    /// its verdict would be judge mode's under a line that says in process.
    pub fn unretried_timeouts(&self) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&index| {
                let entry = &self.entries[index];
                self.status(index) == Some(Status::Timeout.as_str()) && !entry.retried && !entry.in_process
            })
            .collect()
    }

    /// The tally of every sample the journal has a line for, in the samples' order.
    pub fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for entry in self.entries.iter().filter(|entry| entry.is_present()) {
            let outcome = Outcome {
                passed: entry.passed,
                status: Some(self.names.name(entry.status)),
                base_passed: entry.base_passed,
                tests: entry.tests,
            };
            tally.add(self.names.name(entry.task_id), &outcome);
        }
        tally
    }
}

/// The journal of a run under way.
#[derive(Debug)]
pub struct Journal {
    results: PathBuf,
    writer: LineWriter,
}

impl Journal {
    /// Where the journal of a run writing `results` lives.
    pub fn path(results: &Path) -> PathBuf {
        journal::path(results)
    }

    /// Starts a new journal.
    pub fn create(results: &Path) -> std::io::Result<Journal> {
        Ok(Journal { results: results.to_owned(), writer: LineWriter::create(&Journal::path(results))? })
    }

    /// Reads what an interrupted run recorded, if it left a journal.
    pub fn recorded(results: &Path, total: usize) -> Result<Option<Recorded>, JournalError> {
        let path = Journal::path(results);
        if !path.exists() {
            return Ok(None);
        }
        Recorded::read(&path, total).map(Some)
    }

    /// Makes a complete run's results the journal of a run to resume, with every sample's
    /// line but those of `rerun`, which the resume runs again. The journal is written
    /// whole under another name and moved into place, and the results are left as they
    /// are until the resumed run's replace them: a run killed at any moment leaves every
    /// line it had, in one file or the other.
    pub fn reopen(results: &Path, rerun: &std::collections::BTreeSet<usize>) -> Result<(), JournalError> {
        let journal = Journal::path(results);
        let reopened = sibling(&journal, ".reopened");
        let read_error = |source| JournalError::Read { path: results.to_owned(), source };
        let write_error = |source| JournalError::Write { path: reopened.clone(), source };
        let lines = BufReader::new(File::open(results).map_err(read_error)?);
        let mut out = BufWriter::new(File::create(&reopened).map_err(write_error)?);
        for (sample, text) in lines.lines().enumerate() {
            if rerun.contains(&sample) {
                continue;
            }
            let result: ResultLine =
                serde_json::from_str(&text.map_err(read_error)?).map_err(|error| read_error(error.into()))?;
            serde_json::to_writer(&mut out, &Line { sample, result }).map_err(|error| write_error(error.into()))?;
            out.write_all(b"\n").map_err(write_error)?;
        }
        let file = out.into_inner().map_err(|error| write_error(error.into_error()))?;
        file.sync_all().map_err(write_error)?;
        std::fs::rename(&reopened, &journal).map_err(write_error)
    }

    /// Goes on with an interrupted run's journal, after its last whole line.
    pub fn resume(results: &Path, recorded: &Recorded) -> std::io::Result<Journal> {
        let writer = LineWriter::append(&Journal::path(results), recorded.end)?;
        Ok(Journal { results: results.to_owned(), writer })
    }

    pub fn file(&self) -> &Path {
        self.writer.path()
    }

    /// Records sample `index`'s verdict, on its own fields. The marks of how a verdict
    /// was reached are passk's to write: a samples file made from earlier results may
    /// carry them, and a `"verdicts": "in-process"` there would pass for the fallback's
    /// (`ResultLine::new` drops them).
    pub fn record(&mut self, index: usize, fields: Map<String, Value>, verdict: &Verdict) -> std::io::Result<()> {
        self.write(index, ResultLine::new(fields, verdict))
    }

    fn write(&mut self, index: usize, result: ResultLine) -> std::io::Result<()> {
        self.writer.write(&Line { sample: index, result })?;
        Ok(())
    }

    /// Reads back what the journal holds now.
    pub fn read(&self, total: usize) -> Result<Recorded, JournalError> {
        Recorded::read(self.writer.path(), total)
    }

    /// Records a new verdict for sample `index`, which the journal already holds, with
    /// the marks of how it was reached (`retried` after a retry) set by `mark`.
    pub fn amend(
        &mut self,
        recorded: &Recorded,
        index: usize,
        verdict: &Verdict,
        mark: impl FnOnce(&mut VerdictFields),
    ) -> Result<(), JournalError> {
        let path = self.writer.path().to_owned();
        let mut line = self.line(recorded, index)?;
        line.result.decided_again(verdict);
        mark(&mut line.result.verdict);
        self.write(index, line.result).map_err(|source| JournalError::Write { path, source })
    }

    /// The `detail` of sample `index`'s line.
    pub fn detail(&self, recorded: &Recorded, index: usize) -> Result<String, JournalError> {
        let line = self.line(recorded, index)?;
        Ok(line.result.verdict.detail.unwrap_or_default())
    }

    fn line(&self, recorded: &Recorded, index: usize) -> Result<Line, JournalError> {
        let path = self.writer.path().to_owned();
        let file = File::open(&path).map_err(|source| JournalError::Read { path: path.clone(), source })?;
        read_line(&file, &path, &recorded.entries[index])
    }

    /// Writes the results file: every sample's line, in the samples' order, synced and
    /// moved into place, each gathered into `gathered` on its way; then removes the
    /// journal.
    pub fn finish(self, recorded: &Recorded, gathered: &mut Gathered) -> Result<(), JournalError> {
        let results = self.results.display().to_string();
        let journal = self.writer.path().to_owned();
        let sorted = sibling(&journal, ".sorted");
        let write_error = |source| JournalError::Write { path: sorted.clone(), source };
        let lines = File::open(&journal).map_err(|source| JournalError::Read { path: journal.clone(), source })?;
        let mut out = BufWriter::new(File::create(&sorted).map_err(write_error)?);
        for (number, entry) in (1..).zip(&recorded.entries) {
            let line = read_line(&lines, &journal, entry)?;
            gathered.add(&results, number, &line.result)?;
            serde_json::to_writer(&mut out, &line.result).map_err(|error| write_error(error.into()))?;
            out.write_all(b"\n").map_err(write_error)?;
        }
        let file = out.into_inner().map_err(|error| write_error(error.into_error()))?;
        file.sync_all().map_err(write_error)?;
        std::fs::rename(&sorted, &self.results).map_err(write_error)?;
        std::fs::remove_file(&journal).map_err(|source| JournalError::Write { path: journal, source })
    }
}

/// The line `entry` points to in the journal `file`, at `path`.
fn read_line(file: &File, path: &Path, entry: &Entry) -> Result<Line, JournalError> {
    let read_error = |source| JournalError::Read { path: path.to_owned(), source };
    let mut text = vec![0; entry.len as usize];
    file.read_exact_at(&mut text, entry.offset).map_err(read_error)?;
    serde_json::from_slice(&text).map_err(|error| read_error(std::io::Error::other(error)))
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::io::Write as _;

    use serde_json::json;

    use super::*;

    fn verdict(status: Status) -> Verdict {
        Verdict { status, result: status.as_str().to_owned(), ..Verdict::infrastructure(String::new()) }
    }

    fn fields(task_id: &str) -> Map<String, Value> {
        let Value::Object(fields) = json!({"task_id": task_id, "completion": "    return 1\n"}) else {
            unreachable!("an object")
        };
        fields
    }

    fn results_lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    /// A run killed mid-line keeps every whole line; the resumed run writes the results
    /// in the samples' order, whatever order the verdicts came in.
    #[test]
    fn verdicts_survive_a_kill_and_come_back_in_the_samples_order() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        let mut journal = Journal::create(&results).unwrap();
        journal.record(2, fields("t/1"), &verdict(Status::Passed)).unwrap();
        journal.record(0, fields("t/0"), &verdict(Status::Failed)).unwrap();
        drop(journal);
        // The kill: half a line, without its newline.
        let mut file = OpenOptions::new().append(true).open(Journal::path(&results)).unwrap();
        file.write_all(br#"{"sample": 1, "result": {"task_id": "t/0", "pas"#).unwrap();
        drop(file);

        let recorded = Journal::recorded(&results, 3).unwrap().expect("the journal is there");
        assert_eq!(recorded.decided(), 2);
        assert!(recorded.is_decided(0) && !recorded.is_decided(1) && recorded.is_decided(2));
        let counts = recorded.tally().counts().to_vec();
        assert_eq!(counts.len(), 2, "{counts:?}");

        let mut journal = Journal::resume(&results, &recorded).unwrap();
        journal.record(1, fields("t/0"), &verdict(Status::Passed)).unwrap();
        let recorded = journal.read(3).unwrap();
        assert_eq!(recorded.decided(), 3);
        journal.finish(&recorded, &mut Gathered::default()).unwrap();
        let lines = results_lines(&results);
        let seen: Vec<(&str, bool)> =
            lines.iter().map(|line| (line["task_id"].as_str().unwrap(), line["passed"].as_bool().unwrap())).collect();
        assert_eq!(seen, [("t/0", false), ("t/0", true), ("t/1", true)]);
        assert!(!Journal::path(&results).exists(), "the journal is removed once the results are in place");
    }

    /// The marks of how a verdict was reached are passk's: a sample that carries them is
    /// recorded without, and `amend` adds its own, the later line replacing the earlier.
    #[test]
    fn marks_come_only_from_passk_and_an_amended_line_replaces_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        let mut journal = Journal::create(&results).unwrap();
        let mut forged = fields("t/0");
        forged.insert("verdicts".into(), json!("in-process"));
        forged.insert("retried".into(), json!(true));
        journal.record(0, forged, &verdict(Status::Timeout)).unwrap();
        let recorded = journal.read(1).unwrap();
        assert!(!recorded.is_in_process(0), "a sample's own `verdicts` field is not the fallback's");
        assert_eq!(recorded.unretried_timeouts(), [0], "a sample's own `retried` field is not a retry");

        journal.amend(&recorded, 0, &verdict(Status::Passed), |marks| marks.retried = Some(true)).unwrap();
        let recorded = journal.read(1).unwrap();
        assert_eq!(recorded.status_of(0), Some("passed"));
        assert!(recorded.unretried_timeouts().is_empty());
        journal.finish(&recorded, &mut Gathered::default()).unwrap();
        let lines = results_lines(&results);
        assert_eq!(lines.len(), 1);
        assert_eq!((lines[0]["status"].as_str(), lines[0]["retried"].as_bool()), (Some("passed"), Some(true)));
    }

    /// A fault of the machine is recorded, counted, and leaves the sample to run again.
    #[test]
    fn an_infrastructure_fault_leaves_the_sample_undecided() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        let mut journal = Journal::create(&results).unwrap();
        journal.record(0, fields("t/0"), &Verdict::infrastructure("the worker died".into())).unwrap();
        let recorded = journal.read(1).unwrap();
        assert_eq!(recorded.decided(), 0);
        assert_eq!(recorded.tally().infrastructure_errors(), 1);
    }

    /// A whole line passk did not write is refused with its line number, not skipped.
    #[test]
    fn a_line_passk_did_not_write_is_damage_with_its_line_number() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        let mut journal = Journal::create(&results).unwrap();
        journal.record(0, fields("t/0"), &verdict(Status::Passed)).unwrap();
        drop(journal);
        let mut file = OpenOptions::new().append(true).open(Journal::path(&results)).unwrap();
        file.write_all(b"{\"sample\": 7, \"result\": {}}\n").unwrap();
        drop(file);
        match Journal::recorded(&results, 2) {
            Err(JournalError::Damaged { line, problem, .. }) => {
                assert_eq!(line, 2);
                assert!(problem.contains("sample 7 of 2"), "{problem}");
            }
            other => panic!("not refused as damaged: {other:?}"),
        }
    }
}
