//! How far a mean over problems can be trusted.
//!
//! A benchmark's problems are a sample of the problems a model could be asked, so its
//! score is an estimate with a standard error, however many samples each problem gets.
//! Following "Adding Error Bars to Evals" (Miller, 2024), the standard error is that of a
//! mean over independent problems, `sd / sqrt(P)`; when problems come in groups that
//! are not independent (one problem in several languages, the problems of one contest)
//! the groups are the independent units, and the clustered standard error counts them
//! so. The bootstrap resamples the same units, for an interval that does not lean on the
//! normal approximation.
//!
//! Part of the variance across problems is sampling noise: each problem's estimate
//! comes from only `n` samples. `variance_split` separates it from the differences
//! between problems, so a user can tell whether more samples per problem would narrow
//! the interval (noise) or only more problems would (differences).

use crate::{Counts, Metric};

/// The 97.5th percentile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The sample variance (with `P - 1`), or None for fewer than two values.
pub fn sample_variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    Some(values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64)
}

/// The standard error of the mean of `values`: their sample standard deviation over
/// `sqrt(P)`. None for fewer than two values.
pub fn standard_error(values: &[f64]) -> Option<f64> {
    Some((sample_variance(values)? / values.len() as f64).sqrt())
}

/// The standard error of the mean of `values` when value `i` belongs to group
/// `groups[i]`: `sqrt(G / (G - 1) * sum_g (sum_{i in g} (x_i - mean))^2) / P`, the
/// cluster-robust estimate with its small-sample correction. With every value a group
/// of its own it equals `standard_error`. None for fewer than two groups.
pub fn clustered_standard_error(values: &[f64], groups: &[usize]) -> Option<f64> {
    assert_eq!(values.len(), groups.len(), "one group per value");
    let m = mean(values);
    let mut sums = std::collections::BTreeMap::<usize, f64>::new();
    for (value, group) in values.iter().zip(groups) {
        *sums.entry(*group).or_default() += value - m;
    }
    let g = sums.len() as f64;
    if sums.len() < 2 {
        return None;
    }
    let spread: f64 = sums.values().map(|s| s * s).sum();
    Some((g / (g - 1.0) * spread).sqrt() / values.len() as f64)
}

/// `mean ± Z95 × se`, kept within `bounds` (a probability cannot leave [0, 1]).
pub fn normal_interval(mean: f64, se: f64, bounds: (f64, f64)) -> (f64, f64) {
    ((mean - Z95 * se).max(bounds.0), (mean + Z95 * se).min(bounds.1))
}

/// A seeded sequence of pseudo-random numbers (SplitMix64): the same seed gives the same
/// bootstrap on every machine and every version of passk.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform choice among `0..bound`, without modulo bias.
    pub fn below(&mut self, bound: usize) -> usize {
        let bound = bound as u64;
        let zone = u64::MAX - u64::MAX % bound;
        loop {
            let draw = self.next_u64();
            if draw < zone {
                return (draw % bound) as usize;
            }
        }
    }
}

/// The percentile bootstrap 95% interval of the mean of `values`: `resamples` times,
/// draw as many units as there are, with replacement, and take the mean of the values
/// drawn; the interval runs from the 2.5th to the 97.5th percentile of those means
/// (linear interpolation between order statistics). The units are the problems, or
/// their groups when `groups` is given. None without values or resamples.
pub fn bootstrap_interval(values: &[f64], groups: Option<&[usize]>, resamples: usize, seed: u64) -> Option<(f64, f64)> {
    if values.is_empty() || resamples == 0 {
        return None;
    }
    // Each unit as (sum of its values, how many).
    let units: Vec<(f64, usize)> = match groups {
        None => values.iter().map(|v| (*v, 1)).collect(),
        Some(groups) => {
            let mut by_group = std::collections::BTreeMap::<usize, (f64, usize)>::new();
            for (value, group) in values.iter().zip(groups) {
                let unit = by_group.entry(*group).or_default();
                unit.0 += value;
                unit.1 += 1;
            }
            by_group.into_values().collect()
        }
    };
    let mut rng = SplitMix64::new(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let (mut sum, mut count) = (0.0, 0);
            for _ in 0..units.len() {
                let (s, c) = units[rng.below(units.len())];
                sum += s;
                count += c;
            }
            sum / count as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    Some((percentile(&means, 0.025), percentile(&means, 0.975)))
}

/// The `q` quantile of sorted `values`, interpolating linearly between order statistics.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (low, high) = (at.floor() as usize, at.ceil() as usize);
    sorted[low] + (sorted[high] - sorted[low]) * (at - low as f64)
}

/// The variance of one problem's estimate that comes from its having only `n` samples:
/// the jackknife over its samples. Leaving out a passing sample gives the estimate from
/// `(n - 1, c - 1)`, leaving out a failing one that from `(n - 1, c)`; the jackknife
/// variance is `(n - 1) / n` times the sum of their squared deviations from their mean.
/// For pass@1 it is `p(1 - p) / (n - 1)`, the unbiased estimate of the binomial variance
/// of `c / n`. None when `n <= k`, where no sample can be left out.
pub fn sampling_variance(counts: Counts, k: u64, metric: Metric) -> Option<f64> {
    let Counts { n, c } = counts;
    if n <= k || c > n {
        return None;
    }
    let without_pass = if c > 0 { metric.estimate(Counts { n: n - 1, c: c - 1 }, k).ok()? } else { 0.0 };
    let without_fail = if c < n { metric.estimate(Counts { n: n - 1, c }, k).ok()? } else { 0.0 };
    let (passes, fails, n) = (c as f64, (n - c) as f64, n as f64);
    let centre = (passes * without_pass + fails * without_fail) / n;
    let spread = passes * (without_pass - centre).powi(2) + fails * (without_fail - centre).powi(2);
    Some((n - 1.0) / n * spread)
}

/// The variance of per-problem estimates, split into sampling noise within problems and
/// differences between them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VarianceSplit {
    /// The sample variance of the per-problem estimates.
    pub total: f64,
    /// The mean sampling variance of a problem's estimate: what more samples per problem
    /// would shrink.
    pub within: f64,
    /// What remains, `total - within` (never below 0): what only more problems would
    /// average out.
    pub between: f64,
}

impl VarianceSplit {
    /// The share of the variance that is sampling noise, in [0, 1].
    pub fn within_share(&self) -> f64 {
        if self.total > 0.0 {
            (self.within / self.total).min(1.0)
        } else {
            0.0
        }
    }
}

/// The split of the variance of `values`, each problem's estimate of `metric` at `k`
/// from `counts`. None for fewer than two problems, or a problem with `n <= k`.
pub fn variance_split(counts: &[Counts], values: &[f64], k: u64, metric: Metric) -> Option<VarianceSplit> {
    let total = sample_variance(values)?;
    let within = counts.iter().map(|c| sampling_variance(*c, k, metric)).sum::<Option<f64>>()? / counts.len() as f64;
    Some(VarianceSplit { total, within, between: (total - within).max(0.0) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_rational::BigRational;
    use num_traits::{ToPrimitive, Zero};

    fn rational(value: f64) -> BigRational {
        BigRational::from_float(value).expect("finite")
    }

    /// The squared standard error in exact arithmetic: sum (x - mean)^2 / ((P - 1) P).
    fn exact_squared_se(values: &[f64]) -> f64 {
        let p = BigRational::from_integer(values.len().into());
        let sum = values.iter().fold(BigRational::zero(), |acc, v| acc + rational(*v));
        let mean = sum / &p;
        let squares = values.iter().fold(BigRational::zero(), |acc, v| {
            let d = rational(*v) - &mean;
            acc + &d * &d
        });
        let one = BigRational::from_integer(1.into());
        (squares / ((&p - one) * p)).to_f64().unwrap()
    }

    #[test]
    fn the_standard_error_matches_exact_arithmetic() {
        let values = [0.0, 0.25, 1.0, 0.5, 0.125, 1.0, 0.0, 0.75];
        let se = standard_error(&values).unwrap();
        assert!((se * se - exact_squared_se(&values)).abs() < 1e-15, "{se}");
        assert_eq!(standard_error(&[0.5]), None);
        assert_eq!(standard_error(&[0.3, 0.3, 0.3]), Some(0.0));
    }

    #[test]
    fn clustered_with_singletons_is_the_plain_standard_error() {
        let values = [0.1, 0.9, 0.4, 0.4, 0.7];
        let plain = standard_error(&values).unwrap();
        let clustered = clustered_standard_error(&values, &[0, 1, 2, 3, 4]).unwrap();
        assert!((plain - clustered).abs() < 1e-15, "{plain} vs {clustered}");
    }

    #[test]
    fn clustered_counts_groups_that_move_together() {
        // Two groups of identical values: in effect two observations, not six.
        let values = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let plain = standard_error(&values).unwrap();
        let clustered = clustered_standard_error(&values, &[0, 0, 0, 1, 1, 1]).unwrap();
        assert!((clustered - 0.5).abs() < 1e-15, "the SE of two values 0 and 1: {clustered}");
        assert!(clustered > plain);
        assert_eq!(clustered_standard_error(&values, &[7; 6]), None);
    }

    /// Every one of the P^P equally likely resamples, for a reference distribution.
    fn every_resample_mean(values: &[f64]) -> Vec<f64> {
        let p = values.len();
        let mut means = Vec::new();
        for mut code in 0..p.pow(p as u32) {
            let mut sum = 0.0;
            for _ in 0..p {
                sum += values[code % p];
                code /= p;
            }
            means.push(sum / p as f64);
        }
        means.sort_by(f64::total_cmp);
        means
    }

    #[test]
    fn the_bootstrap_converges_on_the_exact_resampling_distribution() {
        let values = [0.0, 0.2, 0.5, 0.9, 1.0];
        let exact = every_resample_mean(&values);
        let (low, high) = bootstrap_interval(&values, None, 200_000, 7).unwrap();
        assert!((low - percentile(&exact, 0.025)).abs() < 0.011, "{low} vs {}", percentile(&exact, 0.025));
        assert!((high - percentile(&exact, 0.975)).abs() < 0.011, "{high} vs {}", percentile(&exact, 0.975));
    }

    #[test]
    fn the_bootstrap_is_reproducible_from_its_seed() {
        let values: Vec<f64> = (0..50).map(|i| f64::from(i % 7) / 6.0).collect();
        let first = bootstrap_interval(&values, None, 1000, 42);
        assert_eq!(first, bootstrap_interval(&values, None, 1000, 42));
        assert_ne!(first, bootstrap_interval(&values, None, 1000, 43));
        // For many problems it agrees with the normal interval.
        let (low, high) = first.unwrap();
        let m = mean(&values);
        let (n_low, n_high) = normal_interval(m, standard_error(&values).unwrap(), (0.0, 1.0));
        assert!((low - n_low).abs() < 0.03 && (high - n_high).abs() < 0.03, "{low}..{high} vs {n_low}..{n_high}");
    }

    #[test]
    fn the_sampling_variance_of_pass_at_1_is_the_binomial_one() {
        for (n, c) in [(10, 3), (200, 17), (5, 0), (5, 5), (2, 1)] {
            let p = c as f64 / n as f64;
            let got = sampling_variance(Counts { n, c }, 1, Metric::PassAt).unwrap();
            assert!((got - p * (1.0 - p) / (n - 1) as f64).abs() < 1e-15, "n={n} c={c}: {got}");
        }
        assert_eq!(sampling_variance(Counts { n: 5, c: 2 }, 5, Metric::PassAt), None);
    }

    #[test]
    fn noise_and_differences_are_told_apart() {
        // Every problem equally hard (p = 0.5) with few samples: nearly all noise.
        let noisy: Vec<Counts> = [2, 3, 1, 2, 3, 2, 1, 2].iter().map(|&c| Counts { n: 4, c }).collect();
        let values: Vec<f64> = noisy.iter().map(|c| c.c as f64 / 4.0).collect();
        let split = variance_split(&noisy, &values, 1, Metric::PassAt).unwrap();
        assert!(split.within_share() > 0.9, "{split:?}");
        // Problems all passed or all failed with many samples: all difference.
        let settled: Vec<Counts> = [0, 100, 0, 100].iter().map(|&c| Counts { n: 100, c }).collect();
        let values: Vec<f64> = settled.iter().map(|c| c.c as f64 / 100.0).collect();
        let split = variance_split(&settled, &values, 1, Metric::PassAt).unwrap();
        assert_eq!((split.within, split.within_share()), (0.0, 0.0), "{split:?}");
        assert!((split.between - split.total).abs() < 1e-15);
    }
}
