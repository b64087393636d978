//! `passk merge`: the shards of a run (`passk evaluate --shard K/N`) joined into the
//! results a single run of the same command gives, line for line, and the record of a
//! complete run beside them, so that its summary is the single run's too.
//!
//! Each shard's results hold its problems' samples in the samples file's order, so the
//! merge reads the samples file again and takes, for each sample, the next line of the
//! shard that holds its problem. Only a whole set of complete shards of one run merges:
//! a shard missing, interrupted, changed since, run twice, or run with other settings
//! would make results that no single run gives, and is refused by name.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::evaluate::{describe, CompleteRun};
use crate::journal::Journal;
use crate::resume;
use passk_formats::jsonl::JsonlReader;
use passk_formats::provenance::sha256_file;
use passk_formats::shard::Shard;
use passk_formats::write::write_atomically;
use passk_formats::InputError;
use passk_report::summary::Subset;

/// What to merge, and where the merged results go.
#[derive(Debug)]
pub struct MergeOptions {
    /// Every shard's results, in any order.
    pub shards: Vec<PathBuf>,
    pub output: PathBuf,
    /// The samples file the shards ran, where it is no longer where they read it.
    pub samples: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(
        "{path} is not the results of a complete run: {record} is missing; run its shard's command until it completes"
    )]
    NotComplete { path: String, record: String },
    #[error(
        "{path}: its shard's run was interrupted ({journal} holds its progress); run its command again to finish it"
    )]
    Interrupted { path: String, journal: String },
    #[error("{path} changed since its run: its SHA-256 is not the one recorded in {record}; run its shard again")]
    Changed { path: String, record: String },
    #[error("{path} holds a whole run's results, not a shard's: its run had no --shard")]
    NotAShard { path: String },
    #[error("{path} is a shard of another run than {first}: {differences}")]
    OtherRun { path: String, first: String, differences: String },
    #[error("{path} is shard {shard}, and {first} is shard {first_shard}: shards of one run share their N")]
    OtherCount { path: String, shard: String, first: String, first_shard: String },
    #[error("{path} and {first} are both shard {shard}")]
    Duplicate { path: String, first: String, shard: String },
    #[error("no results given for {}; give every shard's results", describe_missing(.missing, *.count))]
    Missing { missing: Vec<usize>, count: usize },
    #[error("the samples file the shards ran, {path}, cannot be read; give it with --samples")]
    Samples { path: String },
    #[error("the samples file {path} changed since the shards ran (SHA-256 {then} then, {now} now)")]
    SamplesChanged { path: String, then: String, now: String },
    #[error("{samples}:{line}: task {task_id} is in no shard's results")]
    Unplaced { samples: String, line: usize, task_id: String },
    #[error("task {task_id} is in both {first} and {second}: shards split by problem")]
    Overlap { task_id: String, first: String, second: String },
    #[error("{path} holds {} samples of task {task_id} than the samples file", if *.more { "more" } else { "fewer" })]
    Uneven { path: String, task_id: String, more: bool },
    #[error("{path}:{line}: cannot read a results line")]
    Line { path: String, line: usize },
    #[error("--output {path} is one of the shards' results, which the merge would replace; give another file")]
    OutputIsAShard { path: String },
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn describe_missing(missing: &[usize], count: usize) -> String {
    let named: Vec<String> = missing.iter().map(|index| format!("{index}/{count}")).collect();
    format!("{} {}", if missing.len() == 1 { "shard" } else { "shards" }, named.join(", "))
}

/// One shard's complete run: its record and its results' lines, by problem.
struct ShardRun {
    path: PathBuf,
    shard: Shard,
    record: CompleteRun,
    lines: HashMap<String, VecDeque<String>>,
    total: usize,
}

impl ShardRun {
    fn read(path: &Path) -> Result<ShardRun, MergeError> {
        let name = path.display().to_string();
        let journal = Journal::path(path);
        if journal.exists() {
            return Err(MergeError::Interrupted { path: name, journal: journal.display().to_string() });
        }
        let record_path = crate::evaluate::complete_run::record_path(path);
        let record = CompleteRun::read(path)
            .ok_or_else(|| MergeError::NotComplete { path: name.clone(), record: record_path.display().to_string() })?;
        let sha256 = sha256_file(path).map_err(|source| InputError::Open { path: name.clone(), source })?;
        if sha256 != record.results_sha256 {
            return Err(MergeError::Changed { path: name, record: record_path.display().to_string() });
        }
        let shard = record
            .verdict_settings
            .get("shard")
            .and_then(Value::as_str)
            .and_then(|shard| shard.parse().ok())
            .ok_or_else(|| MergeError::NotAShard { path: name.clone() })?;
        let file = std::fs::File::open(path).map_err(|source| InputError::Open { path: name.clone(), source })?;
        let mut lines: HashMap<String, VecDeque<String>> = HashMap::new();
        let mut total = 0;
        for (number, text) in BufReader::new(file).lines().enumerate() {
            let line = number + 1;
            let text = text.map_err(|source| InputError::Read { path: name.clone(), line, source })?;
            let task_id = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|value| value.get("task_id").and_then(Value::as_str).map(str::to_owned))
                .ok_or_else(|| MergeError::Line { path: name.clone(), line })?;
            lines.entry(task_id).or_default().push_back(text);
            total += 1;
        }
        Ok(ShardRun { path: path.to_owned(), shard, record, lines, total })
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// The settings that decide verdicts, but for the shard.
fn without_shard(settings: &Map<String, Value>) -> Map<String, Value> {
    let mut settings = settings.clone();
    settings.shift_remove("shard");
    settings
}

/// The settings that decide verdicts, but for the shard, and for the paths the samples
/// and problems were named by: their SHA-256s say whether they are the same files, where
/// one shard named them relative to its directory and another absolutely.
fn comparable(settings: &Map<String, Value>) -> Map<String, Value> {
    let mut settings = settings.clone();
    for name in ["shard", "samples", "problems"] {
        settings.shift_remove(name);
    }
    settings
}

/// The shards, in order, once they are known to be every shard of one run.
fn whole_set(mut shards: Vec<ShardRun>) -> Result<Vec<ShardRun>, MergeError> {
    shards.sort_by_key(|run| run.shard.index);
    let first = &shards[0];
    let first_settings = comparable(&first.record.verdict_settings);
    for run in &shards[1..] {
        if run.shard.count != first.shard.count {
            return Err(MergeError::OtherCount {
                path: run.name(),
                shard: run.shard.to_string(),
                first: first.name(),
                first_shard: first.shard.to_string(),
            });
        }
        let differences = resume::differences(&first_settings, &comparable(&run.record.verdict_settings));
        if !differences.is_empty() {
            return Err(MergeError::OtherRun {
                path: run.name(),
                first: first.name(),
                differences: differences.describe(),
            });
        }
    }
    for pair in shards.windows(2) {
        if pair[0].shard == pair[1].shard {
            return Err(MergeError::Duplicate {
                path: pair[1].name(),
                first: pair[0].name(),
                shard: pair[1].shard.to_string(),
            });
        }
    }
    let count = first.shard.count;
    let missing: Vec<usize> = (1..=count).filter(|index| !shards.iter().any(|run| run.shard.index == *index)).collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing { missing, count });
    }
    Ok(shards)
}

/// The merged results' lines, in the samples file's order.
fn in_samples_order(shards: &mut [ShardRun], samples: &Path) -> Result<Vec<String>, MergeError> {
    let mut holder: HashMap<String, usize> = HashMap::new();
    for (index, run) in shards.iter().enumerate() {
        for task_id in run.lines.keys() {
            if let Some(first) = holder.insert(task_id.clone(), index) {
                return Err(MergeError::Overlap {
                    task_id: task_id.clone(),
                    first: shards[first].name(),
                    second: run.name(),
                });
            }
        }
    }
    let name = samples.display().to_string();
    let mut merged = Vec::with_capacity(shards.iter().map(|run| run.total).sum());
    for record in JsonlReader::open_as(samples, &name)? {
        let (line, fields) = record?;
        // The results name a problem as its set does: a number's digits.
        let task_id = match fields.get("task_id") {
            Some(Value::String(id)) => id.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let unplaced = || MergeError::Unplaced { samples: name.clone(), line, task_id: task_id.clone() };
        let run = &mut shards[*holder.get(&task_id).ok_or_else(unplaced)?];
        let next = run.lines.get_mut(&task_id).and_then(VecDeque::pop_front);
        let uneven = MergeError::Uneven { path: run.name(), task_id: task_id.clone(), more: false };
        merged.push(next.ok_or(uneven)?);
    }
    for run in shards.iter() {
        if let Some((task_id, _)) = run.lines.iter().find(|(_, left)| !left.is_empty()) {
            return Err(MergeError::Uneven { path: run.name(), task_id: task_id.clone(), more: true });
        }
    }
    Ok(merged)
}

/// Where the samples the shards ran are, checked against their recorded hash: `given`,
/// else the path the shards recorded, which where relative was relative to where they
/// ran: here, or (as shards often run where their results are written) beside a shard's
/// results.
fn samples_file(shards: &[ShardRun], given: Option<&Path>) -> Result<PathBuf, MergeError> {
    let first = &shards[0].record;
    let then = first.verdict_settings.get("samples_sha256").and_then(Value::as_str).unwrap_or_default();
    let recorded = PathBuf::from(first.verdict_settings.get("samples").and_then(Value::as_str).unwrap_or_default());
    let candidates: Vec<PathBuf> = match given {
        Some(given) => vec![given.to_owned()],
        None if recorded.is_absolute() => vec![recorded.clone()],
        None => std::iter::once(recorded.clone())
            .chain(shards.iter().filter_map(|shard| Some(shard.path.parent()?.join(&recorded))))
            .collect(),
    };
    let mut changed = None;
    for path in candidates {
        let Ok(now) = sha256_file(&path) else { continue };
        if now == then {
            return Ok(path);
        }
        changed.get_or_insert(MergeError::SamplesChanged {
            path: path.display().to_string(),
            then: then.to_owned(),
            now,
        });
    }
    Err(changed.unwrap_or_else(|| MergeError::Samples { path: given.unwrap_or(&recorded).display().to_string() }))
}

/// Joins the shards of `options` into `options.output` and the record of a complete run
/// beside it, which it returns: the single run's, but for times and the machines'
/// facts, which are the first shard's.
pub fn merge(options: &MergeOptions) -> Result<CompleteRun, MergeError> {
    let same_file = |shard: &PathBuf| match (std::fs::canonicalize(shard), std::fs::canonicalize(&options.output)) {
        (Ok(shard), Ok(output)) => shard == output,
        _ => false,
    };
    if let Some(shard) = options.shards.iter().find(|shard| same_file(shard)) {
        return Err(MergeError::OutputIsAShard { path: shard.display().to_string() });
    }
    let shards = options.shards.iter().map(|path| ShardRun::read(path)).collect::<Result<Vec<_>, _>>()?;
    let mut shards = whole_set(shards)?;
    let samples = samples_file(&shards, options.samples.as_deref())?;
    let lines = in_samples_order(&mut shards, &samples)?;
    let mut text = Vec::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for line in &lines {
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
    }
    let output = options.output.display().to_string();
    write_atomically(&options.output, &text).map_err(|source| MergeError::Write { path: output.clone(), source })?;
    let record = merged_record(&shards, &options.output, &text);
    record.save(&options.output).map_err(|error| match error {
        crate::EvalError::Write { path, source } => MergeError::Write { path, source },
        other => MergeError::Write { path: output, source: std::io::Error::other(other.to_string()) },
    })?;
    Ok(record)
}

/// The record a single run would have left: the shards' settings without the shard, the
/// counts summed, the span of their times, and what they covered together.
fn merged_record(shards: &[ShardRun], output: &Path, text: &[u8]) -> CompleteRun {
    let first = &shards[0].record;
    let mut settings = without_shard(&first.settings);
    settings.insert("results".into(), json!(output.display().to_string()));
    let runs: Vec<&Map<String, Value>> = shards.iter().map(|run| &run.record.run).collect();
    let mut run = first.run.clone();
    let sum = |key: &str| runs.iter().filter_map(|run| run.get(key).and_then(Value::as_u64)).sum::<u64>();
    for key in ["executions", "reused", "resumed_from"] {
        run.insert(key.into(), json!(sum(key)));
    }
    let texts = |key: &str| runs.iter().filter_map(|run| run.get(key).and_then(Value::as_str)).collect::<Vec<_>>();
    if let Some(started) = texts("started_at").into_iter().min() {
        run.insert("started_at".into(), json!(started));
    }
    if let Some(finished) = texts("finished_at").into_iter().max() {
        run.insert("finished_at".into(), json!(finished));
    }
    let seconds: f64 = runs.iter().filter_map(|run| run.get("seconds").and_then(Value::as_f64)).sum();
    run.insert("seconds".into(), json!((seconds * 1000.0).round() / 1000.0));
    if let Some(peak) = runs.iter().filter_map(|run| run.get("harness_peak_rss_kib").and_then(Value::as_u64)).max() {
        run.insert("harness_peak_rss_kib".into(), json!(peak));
    }
    let judged_in_process = merged_list(&runs, "judged_in_process", text);
    run.insert("judged_in_process".into(), json!(judged_in_process));
    for key in ["calibrated_timeouts", "timeout_floors"] {
        let mut joined = Map::new();
        for found in runs.iter().filter_map(|run| run.get(key).and_then(Value::as_object)) {
            joined.extend(found.clone());
        }
        if !joined.is_empty() {
            run.insert(key.into(), Value::Object(joined));
        }
    }
    let retried: Vec<&Map<String, Value>> =
        runs.iter().filter_map(|run| run.get("retried_timeouts").and_then(Value::as_object)).collect();
    if !retried.is_empty() {
        let total = |key: &str| retried.iter().filter_map(|found| found.get(key).and_then(Value::as_u64)).sum::<u64>();
        run.insert("retried_timeouts".into(), json!({"samples": total("samples"), "changed": total("changed")}));
    }
    let executions = sum("executions");
    let reused = sum("reused");
    let resumed_from = usize::try_from(sum("resumed_from")).unwrap_or(usize::MAX);
    let mut footer: Vec<(String, String)> =
        first.footer.iter().filter(|(name, _)| name != describe::FALLBACK_ROW).cloned().collect();
    for (name, value) in &mut footer {
        if name == describe::EXECUTED_ROW {
            *value = describe::executed(executions, reused, resumed_from);
        }
    }
    if let Some(row) = describe::fallback(&judged_in_process) {
        footer.push(row);
    }
    CompleteRun {
        verdict_settings: without_shard(&first.verdict_settings),
        results_sha256: passk_formats::provenance::sha256_bytes(text),
        settings,
        run,
        footer,
        subset: covered_together(shards),
    }
}

/// The entries of a list the runs each record of their own problems, each once, in the
/// order of their problems' first samples in the merged results.
fn merged_list(runs: &[&Map<String, Value>], key: &str, text: &[u8]) -> Vec<String> {
    let listed: Vec<&str> = runs
        .iter()
        .filter_map(|run| run.get(key).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if listed.is_empty() {
        return Vec::new();
    }
    let mut first_seen: BTreeMap<usize, String> = BTreeMap::new();
    for (position, line) in text.split(|byte| *byte == b'\n').enumerate() {
        let task_id = serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|value| value.get("task_id").and_then(Value::as_str).map(str::to_owned));
        if let Some(task_id) = task_id.filter(|id| listed.contains(&id.as_str())) {
            if !first_seen.values().any(|seen| *seen == task_id) {
                first_seen.insert(position, task_id);
            }
        }
    }
    first_seen.into_values().collect()
}

/// The problems no shard covered: those every shard's record leaves out.
fn covered_together(shards: &[ShardRun]) -> Option<Subset> {
    let first = shards[0].record.subset.as_ref()?;
    let missing: Vec<String> = first
        .missing
        .iter()
        .filter(|task_id| {
            shards.iter().all(|run| run.record.subset.as_ref().is_some_and(|subset| subset.missing.contains(task_id)))
        })
        .cloned()
        .collect();
    (!missing.is_empty()).then_some(Subset { of: first.of, missing })
}
