//! pass@k from pass/fail counts.
//!
//! With `n` samples of a problem of which `c` pass, the unbiased estimator of the
//! probability that at least one of `k` samples drawn without replacement passes is
//! `1 - C(n-c, k) / C(n, k)` (Chen et al. 2021). The binomials overflow long before `n`
//! reaches the thousands that RL and large evals use, so it is computed as the product
//! `1 - prod_{i=n-c+1..=n} (1 - k/i)`, which never leaves `[0, 1]` and is exactly 1 when
//! `n - c < k` (every draw of `k` must contain a passing sample).
//!
//! pass^k, the reliability metric for agents, is the chance that all `k` of `k` tries
//! pass; its unbiased estimate is `C(c, k) / C(n, k)`, computed as the product
//! `prod_{i=0..k} (c - i) / (n - i)` for the same reason.
//!
//! A mean over problems is only half of what a comparison needs: `uncertainty` gives its
//! standard error, intervals, and the split of its variance between sampling noise
//! within problems and differences between them; `paired` compares two runs problem by
//! problem.
//!
//! Problems may have different `n`. A `k` larger than some problem's `n` has no estimate
//! for that problem; rather than averaging over a subset (which would silently change
//! what the number means), such a `k` is left out of the summary, and the summary says
//! how many problems fell short so the caller can warn.

use thiserror::Error;

pub mod paired;
pub mod uncertainty;

/// What is estimated per problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// At least one of `k` samples passes.
    PassAt,
    /// All of `k` samples pass.
    PassHat,
}

impl Metric {
    pub fn estimate(self, counts: Counts, k: u64) -> Result<f64, EstimateError> {
        match self {
            Metric::PassAt => pass_at_k(counts, k),
            Metric::PassHat => pass_hat_k(counts, k),
        }
    }

    /// `pass@5`, `pass^5`.
    pub fn name(self, k: u64) -> String {
        match self {
            Metric::PassAt => format!("pass@{k}"),
            Metric::PassHat => format!("pass^{k}"),
        }
    }
}

/// The pass/fail tally of one problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Samples evaluated.
    pub n: u64,
    /// Samples that passed.
    pub c: u64,
}

/// Why an estimate cannot be made.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EstimateError {
    #[error("k must be at least 1")]
    ZeroK,
    #[error("{c} passing samples out of {n} is impossible")]
    MorePassesThanSamples { n: u64, c: u64 },
    #[error("k = {k} exceeds the {n} samples of the problem")]
    KExceedsSamples { n: u64, k: u64 },
}

/// The estimate of pass@k for one problem.
pub fn pass_at_k(counts: Counts, k: u64) -> Result<f64, EstimateError> {
    let Counts { n, c } = counts;
    check(counts, k)?;
    if n - c < k {
        return Ok(1.0);
    }
    let k = k as f64;
    let product: f64 = ((n - c + 1)..=n).map(|i| 1.0 - k / i as f64).product();
    Ok(1.0 - product)
}

/// The estimate of pass^k for one problem: the chance that `k` samples drawn without
/// replacement all pass.
pub fn pass_hat_k(counts: Counts, k: u64) -> Result<f64, EstimateError> {
    let Counts { n, c } = counts;
    check(counts, k)?;
    if c < k {
        return Ok(0.0);
    }
    Ok((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

fn check(Counts { n, c }: Counts, k: u64) -> Result<(), EstimateError> {
    if k == 0 {
        Err(EstimateError::ZeroK)
    } else if c > n {
        Err(EstimateError::MorePassesThanSamples { n, c })
    } else if k > n {
        Err(EstimateError::KExceedsSamples { n, k })
    } else {
        Ok(())
    }
}

/// The outcome for one `k` over a whole problem set.
#[derive(Debug, Clone, PartialEq)]
pub enum Summary {
    /// Every problem has at least `k` samples.
    Estimated {
        metric: Metric,
        k: u64,
        /// The mean of `per_problem`.
        mean: f64,
        /// One value per problem, in the order the counts were given.
        per_problem: Vec<f64>,
    },
    /// Some problems have fewer than `k` samples, so no mean is reported.
    LeftOut {
        metric: Metric,
        k: u64,
        /// How many problems have fewer than `k` samples.
        short: usize,
        /// How many problems there are.
        problems: usize,
    },
}

impl Summary {
    pub fn k(&self) -> u64 {
        match self {
            Summary::Estimated { k, .. } | Summary::LeftOut { k, .. } => *k,
        }
    }

    pub fn metric(&self) -> Metric {
        match self {
            Summary::Estimated { metric, .. } | Summary::LeftOut { metric, .. } => *metric,
        }
    }

    /// `pass@5`, `pass^5`.
    pub fn name(&self) -> String {
        self.metric().name(self.k())
    }
}

/// Why a problem set cannot be summarised.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SummaryError {
    #[error("there are no problems to score")]
    NoProblems,
    #[error("k must be at least 1")]
    ZeroK,
    #[error("problem {index} has no samples")]
    EmptyProblem { index: usize },
    #[error("problem {index}: {source}")]
    Problem {
        index: usize,
        #[source]
        source: EstimateError,
    },
}

/// `metric` for each requested `k` over problems given as their counts.
pub fn summarize(problems: &[Counts], ks: &[u64], metric: Metric) -> Result<Vec<Summary>, SummaryError> {
    if problems.is_empty() {
        return Err(SummaryError::NoProblems);
    }
    if let Some(index) = problems.iter().position(|p| p.n == 0) {
        return Err(SummaryError::EmptyProblem { index });
    }
    ks.iter()
        .map(|&k| {
            if k == 0 {
                return Err(SummaryError::ZeroK);
            }
            let short = problems.iter().filter(|p| p.n < k).count();
            if short > 0 {
                return Ok(Summary::LeftOut { metric, k, short, problems: problems.len() });
            }
            let per_problem = problems
                .iter()
                .enumerate()
                .map(|(index, &p)| metric.estimate(p, k).map_err(|source| SummaryError::Problem { index, source }))
                .collect::<Result<Vec<_>, _>>()?;
            let mean = per_problem.iter().sum::<f64>() / per_problem.len() as f64;
            Ok(Summary::Estimated { metric, k, mean, per_problem })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use num_rational::BigRational;
    use num_traits::{One, ToPrimitive};
    use proptest::prelude::*;

    fn binomial(n: u64, k: u64) -> BigUint {
        (0..k).fold(BigUint::one(), |acc, i| acc * BigUint::from(n - i) / BigUint::from(i + 1))
    }

    /// `1 - C(n-c, k) / C(n, k)` in exact arithmetic, rounded once at the end.
    fn exact(n: u64, c: u64, k: u64) -> f64 {
        if n - c < k {
            return 1.0;
        }
        let ratio = BigRational::new(binomial(n - c, k).into(), binomial(n, k).into());
        (BigRational::one() - ratio).to_f64().expect("a ratio in [0, 1] converts")
    }

    fn counts_and_k(max_n: u64) -> impl Strategy<Value = (u64, u64, u64)> {
        (1..=max_n).prop_flat_map(|n| (Just(n), 0..=n, 1..=n))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn matches_exact_arithmetic_for_small_n((n, c, k) in counts_and_k(60)) {
            let got = pass_at_k(Counts { n, c }, k).unwrap();
            prop_assert!((got - exact(n, c, k)).abs() <= 1e-12, "n={n} c={c} k={k}: {got} vs {}", exact(n, c, k));
        }

        #[test]
        fn matches_exact_arithmetic_for_n_in_the_thousands((n, c, k) in counts_and_k(3000)) {
            let got = pass_at_k(Counts { n, c }, k).unwrap();
            prop_assert!((got - exact(n, c, k)).abs() <= 1e-12, "n={n} c={c} k={k}: {got} vs {}", exact(n, c, k));
        }

        #[test]
        fn stays_a_probability_and_grows_with_k((n, c, k) in counts_and_k(500)) {
            let here = pass_at_k(Counts { n, c }, k).unwrap();
            prop_assert!((0.0..=1.0).contains(&here));
            if k < n {
                let next = pass_at_k(Counts { n, c }, k + 1).unwrap();
                prop_assert!(next >= here - 1e-15);
            }
        }
    }

    /// `C(c, k) / C(n, k)` in exact arithmetic, rounded once at the end.
    fn exact_hat(n: u64, c: u64, k: u64) -> f64 {
        if c < k {
            return 0.0;
        }
        BigRational::new(binomial(c, k).into(), binomial(n, k).into()).to_f64().expect("a ratio in [0, 1]")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn pass_hat_matches_exact_arithmetic((n, c, k) in counts_and_k(400)) {
            let got = pass_hat_k(Counts { n, c }, k).unwrap();
            let exact = exact_hat(n, c, k);
            prop_assert!((got - exact).abs() <= 1e-12 * exact.max(1e-300) || (got - exact).abs() < 1e-300,
                "n={n} c={c} k={k}: {got} vs {exact}");
            prop_assert!(got <= pass_at_k(Counts { n, c }, k).unwrap() + 1e-15, "all pass implies one passes");
        }
    }

    #[test]
    fn pass_hat_identities() {
        assert_eq!(pass_hat_k(Counts { n: 10, c: 3 }, 4), Ok(0.0));
        assert_eq!(pass_hat_k(Counts { n: 10, c: 10 }, 7), Ok(1.0));
        assert!((pass_hat_k(Counts { n: 10, c: 3 }, 1).unwrap() - 0.3).abs() < 1e-15);
        // C(3,2)/C(10,2) = 3/45.
        assert!((pass_hat_k(Counts { n: 10, c: 3 }, 2).unwrap() - 3.0 / 45.0).abs() < 1e-15);
    }

    #[test]
    fn pass_at_1_is_the_pass_rate() {
        for (n, c) in [(1, 0), (1, 1), (10, 3), (200, 17), (200, 200)] {
            let got = pass_at_k(Counts { n, c }, 1).unwrap();
            assert!((got - c as f64 / n as f64).abs() < 1e-15, "n={n} c={c}: {got}");
        }
    }

    #[test]
    fn is_one_when_every_draw_must_contain_a_pass() {
        assert_eq!(pass_at_k(Counts { n: 10, c: 8 }, 3), Ok(1.0));
        assert_eq!(pass_at_k(Counts { n: 5, c: 5 }, 5), Ok(1.0));
    }

    #[test]
    fn rejects_impossible_inputs() {
        assert_eq!(pass_at_k(Counts { n: 3, c: 1 }, 0), Err(EstimateError::ZeroK));
        assert_eq!(pass_at_k(Counts { n: 3, c: 4 }, 1), Err(EstimateError::MorePassesThanSamples { n: 3, c: 4 }));
        assert_eq!(pass_at_k(Counts { n: 3, c: 1 }, 4), Err(EstimateError::KExceedsSamples { n: 3, k: 4 }));
    }

    #[test]
    fn summary_leaves_out_k_beyond_some_problems_n() {
        let problems = [Counts { n: 10, c: 2 }, Counts { n: 5, c: 0 }, Counts { n: 20, c: 20 }];
        let summary = summarize(&problems, &[1, 10], Metric::PassAt).unwrap();
        let Summary::Estimated { mean, per_problem, .. } = &summary[0] else { panic!("pass@1 has an estimate") };
        for (got, expected) in per_problem.iter().zip([0.2, 0.0, 1.0]) {
            assert!((got - expected).abs() < 1e-15, "{per_problem:?}");
        }
        assert!((mean - 0.4).abs() < 1e-15);
        assert_eq!(summary[1], Summary::LeftOut { metric: Metric::PassAt, k: 10, short: 1, problems: 3 });
    }

    #[test]
    fn summary_rejects_empty_input_and_zero_k() {
        let pass_at = Metric::PassAt;
        assert_eq!(summarize(&[], &[1], pass_at), Err(SummaryError::NoProblems));
        assert_eq!(summarize(&[Counts { n: 1, c: 0 }], &[0], pass_at), Err(SummaryError::ZeroK));
        assert_eq!(summarize(&[Counts { n: 0, c: 0 }], &[1], pass_at), Err(SummaryError::EmptyProblem { index: 0 }));
    }
}
