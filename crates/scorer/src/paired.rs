//! Is model A really better than model B? Two runs over the same problems are compared
//! problem by problem: the difference of their means is the mean of the per-problem
//! differences, and since a hard problem is hard for both, the paired standard error of
//! that mean is far smaller than the two runs' standard errors combined would suggest.

use crate::uncertainty::{self, Z95};

/// The difference `A - B` of two runs' means over the same problems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    pub mean: f64,
    /// The standard error of the mean difference; None for a single problem.
    pub stderr: Option<f64>,
    /// `mean ± 1.96 stderr`, within [-1, 1].
    pub ci95: Option<(f64, f64)>,
    /// The two-sided p-value of "no difference", from the normal approximation to the
    /// mean difference (`2 (1 - Phi(|mean| / stderr))`).
    pub p: Option<f64>,
}

/// Compares per-problem estimates `a` and `b`, given in the same problem order; with
/// `groups`, problem `i` belongs to group `groups[i]` and the standard error is clustered
/// by group.
pub fn difference(a: &[f64], b: &[f64], groups: Option<&[usize]>) -> Difference {
    assert_eq!(a.len(), b.len(), "the same problems on both sides");
    let differences: Vec<f64> = a.iter().zip(b).map(|(a, b)| a - b).collect();
    let mean = differences.iter().sum::<f64>() / differences.len() as f64;
    let stderr = match groups {
        Some(groups) => uncertainty::clustered_standard_error(&differences, groups),
        None => uncertainty::standard_error(&differences),
    };
    let ci95 = stderr.map(|se| uncertainty::normal_interval(mean, se, (-1.0, 1.0)));
    let p = stderr.map(|se| two_sided_p(mean, se));
    Difference { mean, stderr, ci95, p }
}

/// `P(|Z| >= |mean| / se)` for a standard normal `Z`. A difference with no spread at
/// all is certain when it is not zero, and no evidence when it is.
pub fn two_sided_p(mean: f64, se: f64) -> f64 {
    if se == 0.0 {
        return if mean == 0.0 { 1.0 } else { 0.0 };
    }
    libm::erfc((mean / se).abs() / std::f64::consts::SQRT_2)
}

/// Whether a difference is significant at the 5% level: its interval leaves out zero.
pub fn significant(difference: &Difference) -> bool {
    difference.stderr.is_some_and(|se| difference.mean.abs() > Z95 * se)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_of_the_normal_distribution() {
        // Known values: z = 1.96 gives 0.05, z = 1 gives 0.3173, z = 0 gives 1.
        assert!((two_sided_p(1.959_963_984_540_054, 1.0) - 0.05).abs() < 1e-12);
        assert!((two_sided_p(-1.0, 1.0) - 0.317_310_507_862_914_2).abs() < 1e-12);
        assert_eq!(two_sided_p(0.0, 1.0), 1.0);
        assert_eq!(two_sided_p(0.2, 0.0), 0.0);
    }

    #[test]
    fn pairing_removes_what_the_problems_share() {
        // B is A minus 0.1 on every problem, across problems of very different difficulty.
        let a = [0.1, 0.9, 0.5, 0.3, 0.8, 0.2];
        let b: Vec<f64> = a.iter().map(|x| x - 0.1).collect();
        let d = difference(&a, &b, None);
        assert!((d.mean - 0.1).abs() < 1e-12);
        assert!(d.stderr.unwrap() < 1e-12, "{d:?}");
        assert!(significant(&d));
        assert!(d.p.unwrap() < 1e-6);
    }

    #[test]
    fn a_difference_within_the_noise_is_not_significant() {
        let a = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
        let b = [0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let d = difference(&a, &b, None);
        assert_eq!(d.mean, 0.0);
        assert!(!significant(&d));
        assert_eq!(d.p, Some(1.0));
        let (low, high) = d.ci95.unwrap();
        assert!(low < 0.0 && high > 0.0);
    }

    #[test]
    fn clustered_differences_count_groups_as_the_units() {
        // Two groups whose differences move together: in effect two observations.
        let a = [1.0, 1.0, 1.0, 0.5, 0.5, 0.5];
        let b = [0.0; 6];
        let plain = difference(&a, &b, None).stderr.unwrap();
        let clustered = difference(&a, &b, Some(&[0, 0, 0, 1, 1, 1])).stderr.unwrap();
        assert!((clustered - 0.25).abs() < 1e-15, "the SE of the two values 1 and 0.5: {clustered}");
        assert!(clustered > plain);
    }
}
