//! The numbers a run reports: pass@k and pass^k for each k, each with its standard
//! error, 95% interval, bootstrap interval if asked, and the split of its variance.

use passk_scorer::uncertainty::{self, VarianceSplit};
use passk_scorer::{Counts, Metric, Summary};
use serde_json::{json, Map, Value};

use crate::error::ReportError;
use crate::tally::Tally;

/// How uncertainty is measured, as asked on the command line.
#[derive(Debug, Clone, Default)]
pub struct UncertaintyOptions {
    /// A results-line field whose value groups problems that are not independent.
    pub cluster_by: Option<String>,
    /// Bootstrap resamples, if a bootstrap interval is asked for.
    pub bootstrap: Option<usize>,
    pub seed: u64,
}

/// One metric at one k, with its uncertainty.
#[derive(Debug, Clone)]
pub struct Scored {
    pub summary: Summary,
    /// Counted on the base inputs alone (HumanEval+ and MBPP+'s `base_pass@k`).
    pub base: bool,
    pub stderr: Option<f64>,
    pub ci95: Option<(f64, f64)>,
    pub bootstrap: Option<(f64, f64)>,
    pub variance: Option<VarianceSplit>,
}

impl Scored {
    /// `pass@5`, `pass^5`, `base_pass@5`.
    pub fn name(&self) -> String {
        let name = self.summary.name();
        if self.base {
            format!("base_{name}")
        } else {
            name
        }
    }
}

/// Everything scored, and how the uncertainty was measured.
#[derive(Debug, Clone, Default)]
pub struct Scores {
    pub scored: Vec<Scored>,
    /// How each figure was computed, for the summary JSON.
    pub method: Map<String, Value>,
}

/// Which group each problem belongs to, by the field `--cluster-by` names (see
/// `gather::Clusters`, which reads them).
#[derive(Debug, Clone)]
pub struct Groups {
    pub field: String,
    /// Each problem's group, in the order of the problems scored.
    pub of_problem: Vec<usize>,
    /// How many groups the results hold.
    pub count: usize,
}

/// The scores of `tally`, or none where pass@k is withheld: a run with samples that
/// have no verdict (`complete` false), or problems that could not be judged.
pub fn of_tally(
    tally: &Tally,
    complete: bool,
    groups: Option<&Groups>,
    ks: &[u64],
    options: &UncertaintyOptions,
) -> Result<Scores, ReportError> {
    if !complete || !tally.unjudgeable_problems().is_empty() {
        return Ok(Scores::default());
    }
    let mut scores = score(tally.counts(), groups, ks, options)?;
    if let Some(base) = tally.base_counts() {
        let base_scores = score(&base, groups, ks, options)?;
        let pass_at = base_scores.scored.into_iter().filter(|scored| scored.summary.metric() == Metric::PassAt);
        scores.scored.extend(pass_at.map(|scored| Scored { base: true, ..scored }));
    }
    Ok(scores)
}

/// Scores problems given as `(task_id, counts)`, with the uncertainty `options` ask for:
/// clustered by `groups` (the groups of `--cluster-by`, in the same order) where given.
pub fn score(
    problems: &[(String, Counts)],
    groups: Option<&Groups>,
    ks: &[u64],
    options: &UncertaintyOptions,
) -> Result<Scores, ReportError> {
    let counts: Vec<Counts> = problems.iter().map(|(_, c)| *c).collect();
    let mut scores = Scores { scored: Vec::new(), method: method(options, groups, counts.len()) };
    for metric in [Metric::PassAt, Metric::PassHat] {
        for summary in passk_scorer::summarize(&counts, ks, metric)? {
            scores.scored.push(with_uncertainty(summary, &counts, groups, options));
        }
    }
    Ok(scores)
}

fn with_uncertainty(
    summary: Summary,
    counts: &[Counts],
    groups: Option<&Groups>,
    options: &UncertaintyOptions,
) -> Scored {
    let Summary::Estimated { metric, k, mean, per_problem } = &summary else {
        return Scored { summary, base: false, stderr: None, ci95: None, bootstrap: None, variance: None };
    };
    let stderr = match groups {
        Some(groups) => uncertainty::clustered_standard_error(per_problem, &groups.of_problem),
        None => uncertainty::standard_error(per_problem),
    };
    let ci95 = stderr.map(|se| uncertainty::normal_interval(*mean, se, (0.0, 1.0)));
    let bootstrap = options.bootstrap.and_then(|resamples| {
        uncertainty::bootstrap_interval(per_problem, groups.map(|g| &g.of_problem[..]), resamples, options.seed)
    });
    let variance = uncertainty::variance_split(counts, per_problem, *k, *metric);
    Scored { summary, base: false, stderr, ci95, bootstrap, variance }
}

/// How each figure was computed, in words, for the summary JSON.
fn method(options: &UncertaintyOptions, groups: Option<&Groups>, problems: usize) -> Map<String, Value> {
    let mut method = Map::new();
    let stderr = match groups {
        Some(groups) => format!(
            "clustered standard error over the {} groups of `{}` (cluster-robust, with the G/(G-1) correction)",
            groups.count, groups.field
        ),
        None => format!(
            "standard deviation of the {problems} per-problem estimates over sqrt({problems}) (Miller 2024, \
             \"Adding Error Bars to Evals\")"
        ),
    };
    method.insert("stderr".into(), json!(stderr));
    method.insert("ci95".into(), json!("mean ± 1.96 stderr (normal approximation), kept within [0, 1]"));
    if let Some(resamples) = options.bootstrap {
        let units = groups.map_or_else(|| "problems".to_owned(), |g| format!("groups of `{}`", g.field));
        method.insert(
            "bootstrap_ci95".into(),
            json!({ "resamples": resamples, "seed": options.seed, "units": units, "interval": "2.5th to 97.5th percentile" }),
        );
    }
    method.insert(
        "variance".into(),
        json!("total: sample variance of the per-problem estimates; within: their mean jackknife variance over samples (sampling noise); between: total - within"),
    );
    method
}
