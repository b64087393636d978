//! Each problem's row in a report: its counts, statuses, slowest sample and first failure.

use std::collections::BTreeMap;

use passk_formats::results::VerdictFields;
use serde::Serialize;

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

/// Each problem's row, gathered a results line at a time.
#[derive(Debug, Default)]
pub struct Rows {
    order: Vec<String>,
    gathered: BTreeMap<String, Gathered>,
}

impl Rows {
    /// Counts one sample of `task_id`.
    pub fn add(&mut self, task_id: &str, verdict: &VerdictFields) {
        let passed = verdict.passed.unwrap_or(false);
        let status = verdict.status_or_passed();
        let entry = match self.gathered.get_mut(task_id) {
            Some(entry) => entry,
            None => {
                self.order.push(task_id.to_owned());
                self.gathered.entry(task_id.to_owned()).or_default()
            }
        };
        entry.n += 1;
        entry.c += u64::from(passed);
        *entry.statuses.entry(status.to_owned()).or_default() += 1;
        if let Some(duration) = verdict.duration {
            entry.slowest = Some(entry.slowest.map_or(duration, |s| s.max(duration)));
        }
        if !passed && entry.failing.is_none() {
            let detail = verdict.detail.as_deref().or(verdict.result.as_deref());
            entry.failing = Some(match detail {
                Some(detail) if !detail.is_empty() => format!("{status}: {detail}"),
                _ => status.to_owned(),
            });
        }
    }

    /// The rows, in the order problems first appeared.
    pub fn rows(&self) -> Vec<ProblemRow> {
        self.order
            .iter()
            .filter_map(|task_id| {
                let g = self.gathered.get(task_id)?;
                Some(ProblemRow {
                    pass_at_1: format!("{:.4}", g.c as f64 / g.n as f64),
                    statuses: g.statuses.iter().map(|(s, n)| format!("{s} {n}")).collect::<Vec<_>>().join(", "),
                    slowest: g.slowest.map(|s| format!("{s:.3}")),
                    failing: g.failing.clone(),
                    task_id: task_id.clone(),
                    n: g.n,
                    c: g.c,
                })
            })
            .collect()
    }
}
