//! Pass counts, pass@k, and the two forms a summary takes: a table for people and JSON
//! for programs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;

use passk_scorer::{Counts, Metric, Summary};
use serde_json::{json, Map, Value};

use serde::{Deserialize, Serialize};

use crate::error::CommandError;
use crate::say::say;
use crate::scores::Scores;
use passk_formats::fields::string_field;
use passk_formats::jsonl::JsonlReader;
use passk_formats::sample::looks_like_a_problem;
use passk_formats::write::write_atomically;
use passk_formats::InputError;

const INFRASTRUCTURE: &str = "infrastructure";
const UNJUDGEABLE: &str = "unjudgeable";

/// What one results line says of its sample, as far as the summary counts it.
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    pub passed: bool,
    pub status: Option<&'a str>,
    /// HumanEval+ and MBPP+: whether the base inputs alone passed.
    pub base_passed: Option<bool>,
    /// Problems with tests counted one by one: how many passed, of how many, and
    /// whether every one ran (a sample stops at its first failure unless --all-tests).
    pub tests: Option<TestsPassed>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestsPassed {
    pub passed: u64,
    pub total: u64,
    pub every_test_ran: bool,
}

/// APPS's "test case average": the fraction of its tests a sample passes, averaged over
/// each problem's samples and then over problems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestCaseAverage {
    pub mean: f64,
    /// False where a sample stopped at its first failure, so the mean is a lower bound.
    pub exact: bool,
}

/// Pass counts per problem, in the order problems first appear, and counts per status.
/// Samples with an infrastructure error, or that could not be judged, are counted by
/// status but not in pass@k.
#[derive(Debug, Default)]
pub struct Tally {
    problems: Vec<(String, Counts)>,
    position: HashMap<String, usize>,
    /// Every problem with a sample, those without a verdict to count included.
    seen: BTreeSet<String>,
    statuses: BTreeMap<String, u64>,
    unjudgeable: BTreeSet<String>,
    /// Per problem: samples whose base inputs passed, and the samples that had no word
    /// on them.
    base_passed: Vec<u64>,
    without_base: u64,
    /// Per problem: the sum of its samples' fractions of tests passed, and how many.
    fractions: Vec<(f64, u64)>,
    without_tests: u64,
    stopped_early: bool,
}

impl Tally {
    pub fn add(&mut self, task_id: &str, outcome: &Outcome) {
        let passed = outcome.passed;
        let status = outcome.status.unwrap_or(if passed { "passed" } else { "failed" });
        *self.statuses.entry(status.to_owned()).or_default() += 1;
        if !self.seen.contains(task_id) {
            self.seen.insert(task_id.to_owned());
        }
        // A sample without a verdict says nothing about the model.
        if status == UNJUDGEABLE {
            self.unjudgeable.insert(task_id.to_owned());
        }
        if status == INFRASTRUCTURE || status == UNJUDGEABLE {
            return;
        }
        let at = match self.position.get(task_id) {
            Some(&at) => at,
            None => {
                self.position.insert(task_id.to_owned(), self.problems.len());
                self.problems.push((task_id.to_owned(), Counts::default()));
                self.base_passed.push(0);
                self.fractions.push((0.0, 0));
                self.problems.len() - 1
            }
        };
        let counts = &mut self.problems[at].1;
        counts.n += 1;
        counts.c += u64::from(passed);
        match outcome.base_passed {
            Some(base) => self.base_passed[at] += u64::from(base),
            None => self.without_base += 1,
        }
        match outcome.tests {
            Some(tests) if tests.total > 0 => {
                let fraction = &mut self.fractions[at];
                fraction.0 += tests.passed as f64 / tests.total as f64;
                fraction.1 += 1;
                self.stopped_early |= !tests.every_test_ran;
            }
            _ => self.without_tests += 1,
        }
    }

    /// Each problem's counts of samples whose base inputs passed (HumanEval+ and MBPP+),
    /// if every sample counted says.
    pub fn base_counts(&self) -> Option<Vec<(String, Counts)>> {
        if self.without_base > 0 || self.problems.is_empty() {
            return None;
        }
        let base = self.problems.iter().zip(&self.base_passed);
        Some(base.map(|((task_id, counts), &c)| (task_id.clone(), Counts { n: counts.n, c })).collect())
    }

    /// The test-case average, if every sample counted its tests.
    pub fn test_case_average(&self) -> Option<TestCaseAverage> {
        if self.without_tests > 0 || self.fractions.is_empty() {
            return None;
        }
        let per_problem = self.fractions.iter().map(|(sum, samples)| sum / *samples as f64);
        let mean = per_problem.sum::<f64>() / self.fractions.len() as f64;
        Some(TestCaseAverage { mean, exact: !self.stopped_early })
    }

    /// Samples that got no verdict through a fault of the machine.
    pub fn infrastructure_errors(&self) -> u64 {
        self.statuses.get(INFRASTRUCTURE).copied().unwrap_or(0)
    }

    /// Problems whose tests could not be judged out of process.
    pub fn unjudgeable_problems(&self) -> Vec<String> {
        self.unjudgeable.iter().cloned().collect()
    }

    /// Samples per status.
    pub fn statuses(&self) -> &BTreeMap<String, u64> {
        &self.statuses
    }

    /// Samples counted, those with an infrastructure error included.
    pub fn samples(&self) -> u64 {
        self.statuses.values().sum()
    }

    /// Problems counted in pass@k.
    pub fn problems(&self) -> usize {
        self.problems.len()
    }

    /// Problems with a sample, whether or not any got a verdict pass@k counts.
    pub fn problems_seen(&self) -> usize {
        self.seen.len()
    }

    /// The tally of a results file: `task_id`, `passed` and, if given, `status` per line.
    pub fn read(results: &Path) -> Result<Tally, InputError> {
        let reader = JsonlReader::open(results)?;
        let source = reader.source().to_owned();
        let mut tally = Tally::default();
        for record in reader {
            let (line, object) = record.map_err(|error| settings_record(error, &source))?;
            // Before any field is read: a problem set's ids may be numbers (MBPP's).
            if !object.contains_key("passed") {
                let fields = object.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
                if object.contains_key("completion") || object.contains_key("solution") {
                    return Err(InputError::SamplesAsResults { path: source, line, fields });
                }
                if looks_like_a_problem(&object) {
                    return Err(InputError::ProblemsAsResults { path: source, line, fields });
                }
                // An interrupted run's journal: a line per verdict, the results line inside.
                if object.contains_key("sample") && object.contains_key("result") {
                    let results = source.strip_suffix(".partial").unwrap_or(&source).to_owned();
                    return Err(InputError::InterruptedRun { path: source, results });
                }
            }
            let task_id = string_field(&source, line, &object, "task_id")?;
            let passed = optional_bool(&source, line, &object, "passed")?.ok_or_else(|| InputError::Missing {
                path: source.clone(),
                line,
                field: "passed",
            })?;
            let status = match object.get("status") {
                None => None,
                Some(Value::String(status)) => Some(status.as_str()),
                Some(_) => {
                    return Err(InputError::WrongType { path: source, line, field: "status", expected: "a string" })
                }
            };
            let base_passed = optional_bool(&source, line, &object, "base_passed")?;
            let tests = match object.get("tests") {
                None => None,
                Some(tests) => Some(tests_passed(tests).ok_or_else(|| InputError::WrongType {
                    path: source.clone(),
                    line,
                    field: "tests",
                    expected: "an object of counts `passed`, `run` and `total`",
                })?),
            };
            tally.add(&task_id, &Outcome { passed, status, base_passed, tests });
        }
        if tally.samples() == 0 {
            return Err(InputError::Empty { path: source, what: "results" });
        }
        Ok(tally)
    }

    /// Each problem's task id and counts, in the order problems first appear.
    pub fn counts(&self) -> &[(String, Counts)] {
        &self.problems
    }
}

/// A results line's field that is true or false, if it has one.
fn optional_bool(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<bool>, InputError> {
    match object.get(field) {
        None => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(*value)),
        Some(_) => Err(InputError::WrongType { path: source.to_owned(), line, field, expected: "true or false" }),
    }
}

/// A results line's `tests`: `{"passed", "run", "total"}`.
pub fn tests_passed(tests: &Value) -> Option<TestsPassed> {
    let count = |name: &str| tests.get(name).and_then(Value::as_u64);
    let (passed, run, total) = (count("passed")?, count("run")?, count("total")?);
    Some(TestsPassed { passed, total, every_test_ran: run >= total })
}

/// A results file's record of its run's settings, given in its place, is one JSON object
/// over several lines: name the results file it belongs to rather than ask for JSON Lines.
fn settings_record(error: InputError, source: &str) -> InputError {
    let InputError::NotJsonLines { .. } = error else { return error };
    let path = source.to_owned();
    if let Some(results) = source.strip_suffix(".partial.run.json") {
        return InputError::InterruptedRun { path, results: results.to_owned() };
    }
    match source.strip_suffix(".run.json") {
        Some(results) => InputError::SettingsRecord { path, results: results.to_owned() },
        None => error,
    }
}

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
            writeln!(out, "  {status:<14}{count:>8}")?;
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
            let (Some(split), Metric::PassAt) = (scored.variance, scored.summary.metric()) else { continue };
            let name = scored.name();
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

    /// Warns of what pass@k leaves out, prints the table, and writes the JSON summary to
    /// `summary` if asked.
    pub fn publish(&self, summary: Option<&Path>) -> Result<(), CommandError> {
        for warning in self.warnings() {
            say!("warning: {warning}");
        }
        self.print()?;
        match summary {
            Some(path) => {
                self.write_json(path).map_err(|source| CommandError::Write { path: path.display().to_string(), source })
            }
            None => Ok(()),
        }
    }

    /// Prints the table on standard output.
    pub fn print(&self) -> Result<(), CommandError> {
        let mut table = Vec::new();
        self.print_table(&mut table).expect("writing to memory succeeds");
        crate::say::print(&table)
    }

    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_vec_pretty(&self.to_json()).map_err(std::io::Error::other)?;
        text.push(b'\n');
        write_atomically(path, &text)
    }
}

/// "1 problem", "2 problems".
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The verb form that agrees with `count`: `agree(1, "has", "have")` is "has".
pub fn agree<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// The first `shown` of `items`, then how many more: "a, b, c and 4 more".
pub fn first_few<S: AsRef<str>>(items: &[S], shown: usize) -> String {
    let named: Vec<&str> = items.iter().take(shown).map(AsRef::as_ref).collect();
    let mut text = named.join(", ");
    if items.len() > shown {
        text.push_str(&format!(" and {} more", items.len() - shown));
    }
    text
}
