//! The per-problem rows of a report, read from a results file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use passk_formats::fields::string_field;
use passk_formats::jsonl::JsonlReader;
use passk_formats::InputError;

/// One problem's line of the report's table.
#[derive(Debug, Serialize)]
pub struct ProblemRow {
    pub task_id: String,
    pub n: u64,
    pub c: u64,
    pub pass_at_1: String,
    /// `passed 3, failed 2`.
    pub statuses: String,
    /// The longest a sample took, in seconds, where results say.
    pub slowest: Option<String>,
    /// The status and detail of the problem's first sample that did not pass.
    pub failing: Option<String>,
}

#[derive(Debug, Default)]
struct Gathered {
    n: u64,
    c: u64,
    statuses: BTreeMap<String, u64>,
    slowest: Option<f64>,
    failing: Option<String>,
}

/// The rows of the results at `path`, in the order problems first appear.
pub fn read(path: &Path) -> Result<Vec<ProblemRow>, InputError> {
    let reader = JsonlReader::open(path)?;
    let source = reader.source().to_owned();
    let mut order = Vec::new();
    let mut gathered: BTreeMap<String, Gathered> = BTreeMap::new();
    for record in reader {
        let (line, object) = record?;
        let task_id = string_field(&source, line, &object, "task_id")?;
        let passed = object.get("passed").and_then(Value::as_bool).unwrap_or(false);
        let status = object.get("status").and_then(Value::as_str).unwrap_or(if passed { "passed" } else { "failed" });
        let entry = gathered.entry(task_id.clone()).or_insert_with(|| {
            order.push(task_id.clone());
            Gathered::default()
        });
        entry.n += 1;
        entry.c += u64::from(passed);
        *entry.statuses.entry(status.to_owned()).or_default() += 1;
        if let Some(duration) = object.get("duration").and_then(Value::as_f64) {
            entry.slowest = Some(entry.slowest.map_or(duration, |s| s.max(duration)));
        }
        if !passed && entry.failing.is_none() {
            let detail =
                object.get("detail").and_then(Value::as_str).or_else(|| object.get("result").and_then(Value::as_str));
            entry.failing = Some(match detail {
                Some(detail) if !detail.is_empty() => format!("{status}: {detail}"),
                _ => status.to_owned(),
            });
        }
    }
    Ok(order
        .into_iter()
        .map(|task_id| {
            let g = gathered.remove(&task_id).expect("gathered");
            ProblemRow {
                pass_at_1: format!("{:.4}", g.c as f64 / g.n as f64),
                statuses: g.statuses.iter().map(|(s, n)| format!("{s} {n}")).collect::<Vec<_>>().join(", "),
                slowest: g.slowest.map(|s| format!("{s:.3}")),
                failing: g.failing,
                task_id,
                n: g.n,
                c: g.c,
            }
        })
        .collect())
}
