//! Each standard-input suite's own comparison rule, through the real binary: one problem
//! in each suite's schema, and programs whose outputs one suite's harness accepts and
//! another's fails. Where the suite's harness would fail an output, passk fails it.
//!
//! The rules, as `sandbox/passk_driver/stdio.py` re-implements them:
//! - LiveCodeBench: lcb_runner/evaluation/testing_util.py, `grade_stdio`: lines stripped,
//!   each the same or equal token by token as `Decimal`.
//! - CodeContests: SandboxFusion's sandbox/datasets/common.py, `check_stdio_test_case`
//!   (`lower_cmp=True`): lines lower-cased and stripped, each the same or both one float
//!   within a relative 1e-5.
//! - APPS: eval/testing_util.py, `run_test`: the same text once stripped, or lines, or
//!   lines of one number each within numpy's `allclose`, or the same set of lines' token
//!   sets, as text or as numbers rounded to 3 places.

use std::path::Path;

use passk_tests::{finish, passk, read_jsonl, write_jsonl};
use serde_json::{json, Value};

const EXPECTED: &str = "YES\n1 2\n10\n";

/// What a program prints, and whether LiveCodeBench's, CodeContests' and APPS's harnesses
/// accept it for `EXPECTED`.
const OUTPUTS: [(&str, [bool; 3]); 9] = [
    ("YES\n1 2\n10\n", [true, true, true]),
    // Blank lines and spaces at the ends.
    ("YES\n1 2\n10  \n\n\n", [true, true, true]),
    // Case: only SandboxFusion lower-cases.
    ("yes\n1 2\n10\n", [false, true, false]),
    // Several numbers on a line, equal as decimals (LiveCodeBench); a line of several
    // tokens is text to SandboxFusion, and APPS rounds numbers only where every token is
    // one.
    ("YES\n1.0 2.0\n10\n", [true, false, false]),
    // Within SandboxFusion's relative 1e-5, not equal as decimals; APPS's number checks
    // need every line a number.
    ("YES\n1 2\n10.000001\n", [false, true, false]),
    // Python's number syntax: Decimal and float read 1_0 as 10.
    ("YES\n1 2\n1_0\n", [true, true, false]),
    // Lines and tokens in another order: APPS compares sets.
    ("1 2\nYES\n10\n", [false, false, true]),
    ("YES\n2 1\n10\n", [false, false, true]),
    ("YES\n1 2\n11\n", [false, false, false]),
];

/// The problem, in each suite's schema, with `EXPECTED` as its one test's output.
fn problem_files(dir: &Path) -> [std::path::PathBuf; 3] {
    let livecodebench = dir.join("livecodebench.jsonl");
    let cases = json!([{"input": "", "output": EXPECTED, "testtype": "stdin"}]).to_string();
    write_jsonl(&livecodebench, &[json!({"question_id": "p", "public_test_cases": cases, "private_test_cases": null})]);
    let code_contests = dir.join("code-contests.jsonl");
    write_jsonl(
        &code_contests,
        &[json!({"name": "p", "public_tests": {"input": [""], "output": [EXPECTED]},
                 "private_tests": {"input": [], "output": []}, "generated_tests": {"input": [], "output": []}})],
    );
    let apps = dir.join("apps.jsonl");
    let input_output = json!({"inputs": [""], "outputs": [EXPECTED]}).to_string();
    write_jsonl(&apps, &[json!({"problem_id": "p", "input_output": input_output})]);
    [livecodebench, code_contests, apps]
}

/// Guards against one rule, LiveCodeBench's, judging every standard-input suite: it
/// passed outputs that CodeContests' and APPS's harnesses fail, and failed ones they pass.
#[test]
fn each_suite_compares_outputs_as_its_own_harness_does() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Value> = OUTPUTS
        .iter()
        .map(|(printed, _)| json!({"task_id": "p", "solution": format!("import sys\nsys.stdout.write({printed:?})\n")}))
        .collect();
    let path = dir.path().join("samples.jsonl");
    write_jsonl(&path, &samples);
    for (suite, problems) in ["livecodebench", "code-contests", "apps"].into_iter().zip(problem_files(dir.path())) {
        let results = dir.path().join(format!("{suite}-results.jsonl"));
        let finished = finish(
            passk(["evaluate"])
                .arg(&path)
                .arg("--problems")
                .arg(&problems)
                .args(["--k", "1", "--no-dedup", "--results"])
                .arg(&results),
        );
        assert_eq!(finished.code, Some(0), "{suite}: {}", finished.stderr);
        let column = ["livecodebench", "code-contests", "apps"].iter().position(|name| *name == suite).unwrap();
        for ((printed, accepted), result) in OUTPUTS.iter().zip(read_jsonl(&results)) {
            let expected = if accepted[column] { "passed" } else { "failed" };
            assert_eq!(result["status"], expected, "{suite}: {printed:?}: {}", result["detail"]);
        }
    }
}

/// Guards against programs that print the right answer and then end by `sys.exit` with
/// a nonzero code failing as runtime errors where LiveCodeBench and APPS pass them: both
/// harnesses run the program in their own process, catch SystemExit and compare what it
/// printed (`call_method`, lcb_runner/evaluation/testing_util.py and APPS's
/// eval/testing_util.py). SandboxFusion runs CodeContests' programs as processes, and a
/// nonzero exit fails there. An exception other than SystemExit fails everywhere.
#[test]
fn an_exit_after_the_answer_is_compared_where_the_suite_compares_it() {
    let dir = tempfile::tempdir().unwrap();
    let print = format!("import sys\nsys.stdout.write({EXPECTED:?})\n");
    let endings: [(&str, [bool; 3]); 4] = [
        ("sys.exit(1)\n", [true, false, true]),
        ("sys.exit('bye')\n", [true, false, true]),
        ("exit(3)\n", [true, false, true]),
        ("raise ValueError('after the answer')\n", [false, false, false]),
    ];
    let samples: Vec<Value> =
        endings.iter().map(|(ending, _)| json!({"task_id": "p", "solution": format!("{print}{ending}")})).collect();
    let path = dir.path().join("samples.jsonl");
    write_jsonl(&path, &samples);
    for (column, problems) in problem_files(dir.path()).iter().enumerate() {
        let results = dir.path().join(format!("{column}-results.jsonl"));
        let finished = finish(
            passk(["evaluate"])
                .arg(&path)
                .arg("--problems")
                .arg(problems)
                .args(["--k", "1", "--no-dedup", "--results"])
                .arg(&results),
        );
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        for ((ending, passes), result) in endings.iter().zip(read_jsonl(&results)) {
            let expected = if passes[column] { "passed" } else { "failed" };
            assert_eq!(result["status"], expected, "{}: {ending:?}: {}", problems.display(), result["detail"]);
        }
    }
}
