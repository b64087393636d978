//! Pass counts per problem and per status, added line by line as a run decides them or
//! as its results are read (`gather`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use passk_formats::results::VerdictFields;
use passk_scorer::Counts;

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
    pub(crate) problems: Vec<(String, Counts)>,
    position: HashMap<String, usize>,
    /// Every problem with a sample, those without a verdict to count included.
    seen: BTreeSet<String>,
    pub(crate) statuses: BTreeMap<String, u64>,
    pub(crate) unjudgeable: BTreeSet<String>,
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

    /// Each problem's task id and counts, in the order problems first appear.
    pub fn counts(&self) -> &[(String, Counts)] {
        &self.problems
    }
}

impl TestsPassed {
    /// Of tests `passed` of `total`, `run` of them run.
    pub fn new(passed: u64, run: u64, total: u64) -> TestsPassed {
        TestsPassed { passed, total, every_test_ran: run >= total }
    }
}

impl<'a> Outcome<'a> {
    /// What a results line's verdict counts as.
    pub fn of(verdict: &'a VerdictFields) -> Outcome<'a> {
        Outcome {
            passed: verdict.passed.unwrap_or(false),
            status: verdict.status.as_deref(),
            base_passed: verdict.base_passed,
            tests: verdict.tests.map(|tests| TestsPassed::new(tests.passed, tests.run, tests.total)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: &str) -> Outcome<'_> {
        Outcome { passed: status == "passed", status: Some(status), base_passed: None, tests: None }
    }

    /// Samples without a verdict (a fault of the machine, or unjudgeable) are counted by
    /// status but not in pass@k: they say nothing about the model.
    #[test]
    fn samples_without_a_verdict_are_counted_but_not_scored() {
        let mut tally = Tally::default();
        for (task_id, status) in
            [("a", "passed"), ("a", "failed"), ("b", "infrastructure"), ("b", "passed"), ("c", "unjudgeable")]
        {
            tally.add(task_id, &outcome(status));
        }
        assert_eq!(tally.counts(), [("a".to_owned(), Counts { n: 2, c: 1 }), ("b".to_owned(), Counts { n: 1, c: 1 })]);
        assert_eq!(tally.samples(), 5);
        assert_eq!(tally.infrastructure_errors(), 1);
        assert_eq!(tally.unjudgeable_problems(), ["c"]);
        assert_eq!((tally.problems(), tally.problems_seen()), (2, 3));
        assert_eq!(tally.statuses().get("failed"), Some(&1));
    }

    /// A line without a status (the reference harness's) counts by `passed`.
    #[test]
    fn a_line_without_a_status_counts_by_passed() {
        let mut tally = Tally::default();
        tally.add("a", &Outcome { passed: true, status: None, base_passed: None, tests: None });
        tally.add("a", &Outcome { passed: false, status: None, base_passed: None, tests: None });
        assert_eq!(tally.counts(), [("a".to_owned(), Counts { n: 2, c: 1 })]);
        assert_eq!(tally.statuses().keys().collect::<Vec<_>>(), ["failed", "passed"]);
    }

    /// Base counts (EvalPlus's base_pass@k) exist only where every sample says.
    #[test]
    fn base_counts_need_every_sample_to_say() {
        let mut tally = Tally::default();
        tally.add("a", &Outcome { base_passed: Some(true), ..outcome("failed") });
        tally.add("a", &Outcome { base_passed: Some(false), ..outcome("failed") });
        assert_eq!(tally.base_counts(), Some(vec![("a".to_owned(), Counts { n: 2, c: 1 })]));
        tally.add("b", &outcome("passed"));
        assert_eq!(tally.base_counts(), None);
    }

    /// APPS's test-case average: per problem, then over problems; a lower bound where a
    /// sample stopped at its first failure.
    #[test]
    fn the_test_case_average_is_per_problem_then_over_problems() {
        let tests = |passed, run, total| Some(TestsPassed { passed, total, every_test_ran: run >= total });
        let mut tally = Tally::default();
        tally.add("a", &Outcome { tests: tests(1, 2, 2), ..outcome("failed") });
        tally.add("a", &Outcome { tests: tests(2, 2, 2), ..outcome("passed") });
        tally.add("b", &Outcome { tests: tests(0, 4, 4), ..outcome("failed") });
        let average = tally.test_case_average().unwrap();
        assert!((average.mean - 0.375).abs() < 1e-12, "{average:?}");
        assert!(average.exact);
        tally.add("b", &Outcome { tests: tests(1, 2, 4), ..outcome("failed") });
        assert!(!tally.test_case_average().unwrap().exact);
    }
}
