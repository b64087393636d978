//! The two forms a run's summary takes: a table for people and JSON for programs.

use std::io::Write;
use std::path::Path;

use passk_formats::write::write_atomically;
use passk_scorer::{Metric, Summary};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::scores::Scores;
use crate::tally::Tally;
use crate::words::{agree, plural};

/// Everything a finished run reports.
#[derive(Debug)]
pub struct Report<'a> {
    pub tally: &'a Tally,
    pub scores: &'a Scores,
    /// Whether every sample has a verdict; pass@k is reported only then.
    pub complete: bool,
    /// Every setting the numbers depend on, recorded in the JSON summary.
    pub settings: Map<String, Value>,
    /// Facts of the run itself, recorded in the JSON summary.
    pub run: Map<String, Value>,
    /// Rows the table ends with: the conditions the numbers were measured under.
    pub footer: Vec<(String, String)>,
    /// The problems left out of the set, when the samples cover only some (--partial).
    pub subset: Option<Subset>,
    /// What the run covers, where that is known beyond the verdicts tallied: an
    /// interrupted run has verdicts for only some of its samples.
    pub covers: Option<Coverage>,
}

/// The samples a run was given, and the problems they answer.
#[derive(Debug, Clone, Copy)]
pub struct Coverage {
    pub samples: usize,
    pub problems: usize,
}

/// Samples that cover only some of a problem set.
#[derive(Debug, Serialize, Deserialize)]
pub struct Subset {
    /// How many problems the set holds.
    pub of: usize,
    /// The task ids of the problems without samples.
    pub missing: Vec<String>,
}

impl Report<'_> {
    /// One line per `k` that could not be estimated.
    pub fn warnings(&self) -> Vec<String> {
        self.scores
            .scored
            .iter()
            .filter_map(|scored| match &scored.summary {
                Summary::LeftOut { k, short, problems, metric: Metric::PassAt } if !scored.base => Some(format!(
                    "{} left out: {short} of {problems} problems have fewer than {k} samples",
                    scored.name()
                )),
                _ => None,
            })
            .collect()
    }

    pub fn print_table(&self, out: &mut impl Write) -> std::io::Result<()> {
        let decided = self.tally.samples() as usize;
        match self.covers {
            Some(covers) if covers.samples != decided => writeln!(
                out,
                "{} of {}; {decided} decided so far",
                plural(covers.samples, "sample"),
                plural(covers.problems, "problem")
            )?,
            _ => writeln!(out, "{} of {}", plural(decided, "sample"), plural(self.tally.problems_seen(), "problem"))?,
        }
        for (status, count) in &self.tally.statuses {
            // The count ends where the scores' columns end, however long the status's
            // name (`compile-timeout` is longer than the column before the numbers).
            let width = 22usize.saturating_sub(status.len()).max(1);
            writeln!(out, "  {status}{count:>width$}")?;
        }
        if !self.complete {
            writeln!(out, "  {:<14}not reported: the run is incomplete", "pass@k")?;
        } else if !self.tally.unjudgeable.is_empty() {
            let problems = plural(self.tally.unjudgeable.len(), "problem");
            writeln!(out, "  {:<14}not reported: {problems} cannot be judged out of process", "pass@k")?;
        }
        for scored in &self.scores.scored {
            // pass^1 is pass@1.
            if scored.summary.metric() == Metric::PassHat && scored.summary.k() == 1 {
                continue;
            }
            let name = scored.name();
            let Summary::Estimated { mean, .. } = &scored.summary else {
                writeln!(out, "  {name:<14}{:>8}", "n/a")?;
                continue;
            };
            write!(out, "  {name:<14}{mean:>8.4}")?;
            if let (Some(se), Some((low, high))) = (scored.stderr, scored.ci95) {
                write!(out, " ± {se:.4}  95% CI [{low:.4}, {high:.4}]")?;
            }
            if let Some((low, high)) = scored.bootstrap {
                write!(out, "  bootstrap [{low:.4}, {high:.4}]")?;
            }
            if let Some(subset) = &self.subset {
                write!(out, "  over {} of {} problems", self.tally.problems(), subset.of)?;
            }
            writeln!(out)?;
        }
        if let Some(average) = self.tally.test_case_average() {
            let bound = if average.exact { "" } else { "; a lower bound: samples stop at their first failed test" };
            writeln!(out, "  {:<14}{:>8.4}  test-case average{bound}", "tests passed", average.mean)?;
        }
        for scored in &self.scores.scored {
            if scored.summary.metric() != Metric::PassAt || !matches!(scored.summary, Summary::Estimated { .. }) {
                continue;
            }
            let name = scored.name();
            let Some(split) = scored.variance else {
                // The jackknife over a problem's samples leaves one out: it needs k of
                // the n - 1 left.
                let k = scored.summary.k();
                let short = self.tally.counts().iter().filter(|(_, counts)| counts.n <= k).count();
                if short > 0 {
                    let reason = format!(
                        "not split: that needs more than {} per problem, and {} {} {k} or fewer",
                        plural(usize::try_from(k).unwrap_or(usize::MAX), "sample"),
                        plural(short, "problem"),
                        agree(short, "has", "have")
                    );
                    writeln!(out, "  {:<14}{name}: {reason}", "variance")?;
                }
                continue;
            };
            if split.total > 0.0 {
                let noise = (split.within_share() * 100.0).round();
                let between = 100.0 - noise;
                let shares = format!("{noise}% sampling noise within problems, {between}% differences between them");
                writeln!(out, "  {:<14}{name}: {shares}", "variance")?;
            } else {
                // No variance has no shares to split into.
                writeln!(out, "  {:<14}{name}: none: every problem has the same estimate", "variance")?;
            }
        }
        for (name, value) in &self.footer {
            writeln!(out, "  {name:<14}{value}")?;
        }
        Ok(())
    }

    pub fn to_json(&self) -> Value {
        let mut summary = Map::new();
        let mut left_out = Map::new();
        let mut per_problem: Vec<Map<String, Value>> = self
            .tally
            .problems
            .iter()
            .map(|(task_id, c)| {
                let mut entry = Map::new();
                entry.insert("task_id".into(), json!(task_id));
                entry.insert("n".into(), json!(c.n));
                entry.insert("c".into(), json!(c.c));
                entry
            })
            .collect();
        let (mut stderr, mut ci95, mut bootstrap, mut variance) = (Map::new(), Map::new(), Map::new(), Map::new());
        for scored in &self.scores.scored {
            let name = scored.name();
            match &scored.summary {
                Summary::Estimated { mean, per_problem: values, .. } => {
                    summary.insert(name.clone(), json!(mean));
                    for (entry, value) in per_problem.iter_mut().zip(values) {
                        entry.insert(name.clone(), json!(value));
                    }
                }
                Summary::LeftOut { short, problems, .. } => {
                    left_out.insert(name.clone(), json!({ "short": short, "problems": problems }));
                }
            }
            if let Some(se) = scored.stderr {
                stderr.insert(name.clone(), json!(se));
            }
            if let Some((low, high)) = scored.ci95 {
                ci95.insert(name.clone(), json!([low, high]));
            }
            if let Some((low, high)) = scored.bootstrap {
                bootstrap.insert(name.clone(), json!([low, high]));
            }
            if let Some(split) = scored.variance {
                // A variance of 0 has no shares: within_share is then null.
                let within_share = (split.total > 0.0).then(|| split.within_share());
                let entry = json!({ "total": split.total, "within": split.within, "between": split.between,
                                    "within_share": within_share });
                variance.insert(name, entry);
            }
        }
        if !self.scores.scored.is_empty() {
            summary.insert("stderr".into(), Value::Object(stderr));
            summary.insert("ci95".into(), Value::Object(ci95));
            if !bootstrap.is_empty() {
                summary.insert("bootstrap_ci95".into(), Value::Object(bootstrap));
            }
            summary.insert("variance".into(), Value::Object(variance));
            summary.insert("uncertainty".into(), Value::Object(self.scores.method.clone()));
        }
        summary.insert("complete".into(), json!(self.complete));
        summary.insert("left_out".into(), Value::Object(left_out));
        summary.insert("problems".into(), json!(self.tally.problems()));
        if let Some(subset) = &self.subset {
            summary.insert("subset".into(), json!({ "of": subset.of, "missing": subset.missing }));
        }
        summary.insert("samples".into(), json!(self.tally.samples()));
        if let Some(average) = self.tally.test_case_average() {
            summary.insert("test_case_average".into(), json!({"mean": average.mean, "exact": average.exact}));
        }
        summary.insert("counts".into(), json!(self.tally.statuses));
        if !self.tally.unjudgeable.is_empty() {
            summary.insert("unjudgeable".into(), json!(self.tally.unjudgeable));
        }
        summary.insert("settings".into(), Value::Object(self.settings.clone()));
        if !self.run.is_empty() {
            summary.insert("run".into(), Value::Object(self.run.clone()));
        }
        summary.insert("per_problem".into(), json!(per_problem));
        Value::Object(summary)
    }

    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_vec_pretty(&self.to_json()).map_err(std::io::Error::other)?;
        text.push(b'\n');
        write_atomically(path, &text)
    }
}
