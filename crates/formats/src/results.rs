//! The results file: one line per sample, its own fields followed by its verdict's.

use passk_runner::{Status, Verdict};
use serde_json::{json, Map, Value};

/// Puts a verdict's fields on a sample's results line.
pub fn record_verdict(line: &mut Map<String, Value>, verdict: &Verdict) {
    line.insert("passed".into(), json!(verdict.passed()));
    line.insert("result".into(), json!(verdict.result));
    line.insert("status".into(), json!(verdict.status));
    line.insert("detail".into(), json!(verdict.detail));
    line.insert("duration".into(), json!(verdict.duration));
    line.insert("memory_peak_bytes".into(), json!(verdict.memory_peak_bytes));
    line.insert("cpu_seconds".into(), json!(verdict.cpu_seconds));
    if !verdict.phases.is_empty() {
        // EvalPlus's base_status, as a flag: the base inputs alone passed.
        if let Some(base) = verdict.phases.iter().find(|phase| phase.phase == "base") {
            line.insert("base_passed".into(), json!(base.status == Status::Passed));
        }
        let phases: Vec<Value> = verdict
            .phases
            .iter()
            .map(|phase| {
                let mut shown = json!({
                    "phase": phase.phase,
                    "status": phase.status,
                    "passed": phase.passed,
                    "run": phase.run,
                    "total": phase.total,
                    "failure": phase.failure,
                });
                if phase.one_at_a_time {
                    shown["one_at_a_time"] = json!(true);
                }
                shown
            })
            .collect();
        line.insert("phases".into(), Value::Array(phases));
    }
    if let Some(tests) = verdict.tests {
        line.insert("tests".into(), json!(tests));
    }
    if let Some(failure) = &verdict.failure {
        line.insert("failure".into(), failure.clone());
    }
}
