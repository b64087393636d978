//! `passk calc`: pass@k and pass^k from counts typed in, as people check numbers by hand.
//!
//! Each value is computed twice: in the product form the scorer uses, and exactly, as a
//! fraction of big integers through the closed forms `1 - C(n-c, k) / C(n, k)` and
//! `C(c, k) / C(n, k)`. The exact value is what is printed as a fraction, and the two
//! must agree to 12 significant digits, or the command fails rather than print either.

use std::path::Path;

use num_bigint::BigUint;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use passk_scorer::{Counts, Metric};
use serde_json::{json, Map, Value};

use crate::error::CommandError;
use passk_formats::InputError;

/// The largest `k` whose exact value is worked out: beyond it, the product form stands
/// alone (and the cross-check is skipped, saying so).
const EXACT_K: u64 = 5_000;

/// One problem's counts, as given.
#[derive(Debug, Clone, Copy)]
pub struct Problem {
    pub n: u64,
    pub c: u64,
}

/// A value of pass@k or pass^k: the product form, and the exact fraction when worked
/// out.
#[derive(Debug, Clone)]
struct Computed {
    float: f64,
    exact: Option<BigRational>,
}

impl Computed {
    /// The number to show: the exact fraction's nearest float where it is worked out, so
    /// that pass@1 and pass^1 of the same counts read alike (the product form's 1 - 0.7
    /// is 0.30000000000000004), else the product form's.
    fn number(&self) -> f64 {
        self.exact.as_ref().and_then(ToPrimitive::to_f64).unwrap_or(self.float)
    }
}

fn binomial(n: u64, k: u64) -> BigUint {
    (0..k).fold(BigUint::one(), |acc, i| acc * BigUint::from(n - i) / BigUint::from(i + 1))
}

fn exact(metric: Metric, Problem { n, c }: Problem, k: u64) -> BigRational {
    let ratio = |top: BigUint| BigRational::new(top.into(), binomial(n, k).into());
    match metric {
        Metric::PassAt if n - c < k => BigRational::one(),
        Metric::PassAt => BigRational::one() - ratio(binomial(n - c, k)),
        Metric::PassHat if c < k => BigRational::zero(),
        Metric::PassHat => ratio(binomial(c, k)),
    }
}

/// The value for one problem, or None when `n < k`.
fn value(metric: Metric, problem: Problem, k: u64) -> Result<Option<Computed>, CommandError> {
    let counts = Counts { n: problem.n, c: problem.c };
    let float = match metric.estimate(counts, k) {
        Ok(float) => float,
        Err(passk_scorer::EstimateError::KExceedsSamples { .. }) => return Ok(None),
        Err(error) => return Err(CommandError::Calc { message: error.to_string() }),
    };
    if k > EXACT_K {
        return Ok(Some(Computed { float, exact: None }));
    }
    let exact = exact(metric, problem, k);
    let from_exact = exact.to_f64().unwrap_or(f64::NAN);
    if (from_exact - float).abs() > 1e-12 * from_exact.abs().max(f64::MIN_POSITIVE) {
        return Err(CommandError::CalcMismatch {
            message: format!(
                "{} for n = {}, c = {}: the product form gives {float:e}, the exact form {from_exact:e}",
                metric.name(k),
                problem.n,
                problem.c
            ),
        });
    }
    Ok(Some(Computed { float, exact: Some(exact) }))
}

/// The mean over problems, or None when some problem has `n < k`.
fn mean(values: &[Option<Computed>]) -> Option<Computed> {
    let values: Vec<&Computed> = values.iter().map(Option::as_ref).collect::<Option<_>>()?;
    let count = values.len() as f64;
    let float = values.iter().map(|v| v.float).sum::<f64>() / count;
    let exact = values
        .iter()
        .map(|v| v.exact.clone())
        .sum::<Option<BigRational>>()
        .map(|sum| sum / BigRational::from_integer(values.len().into()));
    Some(Computed { float, exact })
}

/// `30.00%`, `100%`, `0%`.
fn percent(value: &Computed) -> String {
    match &value.exact {
        Some(exact) if exact.is_one() => "100%".to_owned(),
        Some(exact) if exact.is_zero() => "0%".to_owned(),
        _ if value.float < 0.0001 => "<0.01%".to_owned(),
        _ if value.float > 0.9999 => ">99.99%".to_owned(),
        _ => format!("{:.2}%", value.float * 100.0),
    }
}

/// `11/12` while the fraction is short, else the value to 12 significant digits.
fn fraction(value: &Computed) -> String {
    match &value.exact {
        Some(exact) if exact.is_integer() => exact.to_string(),
        Some(exact) if exact.numer().to_string().len() + exact.denom().to_string().len() <= 12 => exact.to_string(),
        _ if value.float < 0.001 => format!("{:.11e}", value.float),
        _ => format!("{:.12}", value.float),
    }
}

fn cell(value: Option<&Computed>) -> String {
    match value {
        None => "n < k".to_owned(),
        Some(value) => format!("{} ({})", percent(value), fraction(value)),
    }
}

/// Reads problems from a file: one per line, `n,c` or a JSON object with `n` and `c`.
pub fn read_problems(path: &Path) -> Result<Vec<Problem>, InputError> {
    let source = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|error| InputError::Open { path: source.clone(), source: error })?;
    let mut problems = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        let line_number = number + 1;
        let problem = if line.trim_start().starts_with('{') {
            let object: Value = serde_json::from_str(line).map_err(|error| InputError::Json {
                path: source.clone(),
                line: line_number,
                message: error.to_string(),
            })?;
            let field = |name: &'static str| {
                object.get(name).and_then(Value::as_u64).ok_or(InputError::WrongType {
                    path: source.clone(),
                    line: line_number,
                    field: name,
                    expected: "a whole number",
                })
            };
            Problem { n: field("n")?, c: field("c")? }
        } else {
            parse_problem(line).map_err(|message| InputError::Calc {
                path: source.clone(),
                line: line_number,
                message,
            })?
        };
        problems.push(problem);
    }
    if problems.is_empty() {
        return Err(InputError::Empty { path: source, what: "problems" });
    }
    Ok(problems)
}

/// `n,c`, as `--problem` takes it.
pub fn parse_problem(text: &str) -> Result<Problem, String> {
    let (n, c) = text.trim().split_once(',').ok_or_else(|| format!("{text:?} is not `n,c`"))?;
    let number = |part: &str| part.trim().parse::<u64>().map_err(|_| format!("{part:?} is not a whole number"));
    let problem = Problem { n: number(n)?, c: number(c)? };
    check(problem)?;
    Ok(problem)
}

fn check(Problem { n, c }: Problem) -> Result<(), String> {
    if n == 0 {
        Err("n must be at least 1".into())
    } else if c > n {
        Err(format!("c = {c} passing samples out of n = {n} is impossible"))
    } else {
        Ok(())
    }
}

/// Prints, or writes as JSON, each k's pass@k and pass^k for `problems` and their mean.
pub fn calc(problems: &[Problem], ks: &[u64], json_output: bool) -> Result<(), CommandError> {
    for problem in problems {
        check(*problem).map_err(|message| CommandError::Calc { message })?;
    }
    let metrics = [Metric::PassAt, Metric::PassHat];
    // values[problem][metric][k]
    let mut values = Vec::new();
    for problem in problems {
        let mut per_metric = Vec::new();
        for metric in metrics {
            per_metric.push(ks.iter().map(|&k| value(metric, *problem, k)).collect::<Result<Vec<_>, _>>()?);
        }
        values.push(per_metric);
    }
    let means: Vec<Vec<Option<Computed>>> = (0..metrics.len())
        .map(|m| (0..ks.len()).map(|k| mean(&values.iter().map(|p| p[m][k].clone()).collect::<Vec<_>>())).collect())
        .collect();
    let output = if json_output {
        let mut summary = Map::new();
        for (m, metric) in metrics.iter().enumerate() {
            for (i, k) in ks.iter().enumerate() {
                if let Some(value) = &means[m][i] {
                    summary.insert(metric.name(*k), json!(value.number()));
                }
            }
        }
        let listed: Vec<Value> = problems
            .iter()
            .zip(&values)
            .map(|(problem, per_metric)| {
                let mut entry = Map::new();
                entry.insert("n".into(), json!(problem.n));
                entry.insert("c".into(), json!(problem.c));
                let mut exact = Map::new();
                for (m, metric) in metrics.iter().enumerate() {
                    for (i, k) in ks.iter().enumerate() {
                        if let Some(value) = &per_metric[m][i] {
                            entry.insert(metric.name(*k), json!(value.number()));
                            exact.insert(metric.name(*k), json!(fraction(value)));
                        }
                    }
                }
                entry.insert("exact".into(), Value::Object(exact));
                Value::Object(entry)
            })
            .collect();
        summary.insert("problems".into(), json!(listed));
        format!("{}\n", serde_json::to_string_pretty(&Value::Object(summary)).expect("serializes"))
    } else {
        table(problems, ks, &means)
    };
    crate::say::print(output.as_bytes())
}

fn table(problems: &[Problem], ks: &[u64], means: &[Vec<Option<Computed>>]) -> String {
    let mut out = match problems {
        [Problem { n, c }] => format!("n = {n}, c = {c}\n"),
        _ => format!("mean over {} problems\n", problems.len()),
    };
    let rows: Vec<(String, String, String)> = ks
        .iter()
        .enumerate()
        .map(|(i, k)| (k.to_string(), cell(means[0][i].as_ref()), cell(means[1][i].as_ref())))
        .collect();
    let width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max("pass@k".len());
    out.push_str(&format!("  {:>6}  {:<width$}  pass^k\n", "k", "pass@k"));
    for (k, at, hat) in rows {
        out.push_str(&format!("  {k:>6}  {at:<width$}  {hat}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value computed crosses the product form with the exact closed form, to 12
    /// significant digits: n into the thousands, every c, a spread of k.
    #[test]
    fn the_product_form_agrees_with_the_exact_closed_form() {
        for n in [1, 2, 7, 10, 50, 200, 1000, 3000] {
            for c in (0..=n).step_by((n as usize / 13).max(1)) {
                for k in [1, 2, 5, 10, 100, 1000].into_iter().filter(|&k| k <= n) {
                    for metric in [Metric::PassAt, Metric::PassHat] {
                        value(metric, Problem { n, c }, k).unwrap_or_else(|e| panic!("n={n} c={c} k={k}: {e}"));
                    }
                }
            }
        }
    }

    #[test]
    fn the_worked_examples() {
        let cell_of = |metric, n, c, k| cell(value(metric, Problem { n, c }, k).unwrap().as_ref());
        assert_eq!(cell_of(Metric::PassAt, 10, 3, 1), "30.00% (3/10)");
        assert_eq!(cell_of(Metric::PassAt, 10, 3, 5), "91.67% (11/12)");
        assert_eq!(cell_of(Metric::PassAt, 10, 3, 10), "100% (1)");
        assert_eq!(cell_of(Metric::PassAt, 10, 3, 100), "n < k");
        assert_eq!(cell_of(Metric::PassAt, 5, 0, 1), "0% (0)");
        assert_eq!(cell_of(Metric::PassAt, 200, 10, 10), "40.85% (0.408547866081)");
        assert_eq!(cell_of(Metric::PassHat, 10, 3, 2), "6.67% (1/15)");
        let two: Vec<Option<Computed>> =
            [3, 0].iter().map(|&c| value(Metric::PassAt, Problem { n: 10, c }, 5).unwrap()).collect();
        assert_eq!(cell(mean(&two).as_ref()), "45.83% (11/24)");
    }
}
