//! SandboxFusion's sample files of CodeContests and LiveCodeBench, as released
//! (`../shared/benchmarks/stdio`, see its README): passk reads them as they are, with
//! default settings, and judges them as each suite's harness does. Skipped, with a
//! message naming the folder, where the folder is absent.

use std::path::PathBuf;

use passk_tests::{finish, passk, read_jsonl, repo_root, write_jsonl, Finished};
use serde_json::{json, Value};

/// The folder of the released standard-input files, if it is there.
fn stdio_benchmarks() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/benchmarks/stdio");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

/// `passk evaluate` of `samples` on `problems`, with default settings but for `--k 1`
/// and the results file.
fn evaluate(problems: &std::path::Path, samples: &[Value]) -> (Finished, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("samples.jsonl");
    write_jsonl(&path, samples);
    let results = dir.path().join("results.jsonl");
    let finished = finish(
        passk(["evaluate"]).arg(&path).arg("--problems").arg(problems).args(["--k", "1", "--results"]).arg(&results),
    );
    let results = if results.exists() { read_jsonl(&results) } else { Vec::new() };
    (finished, results)
}

/// A program that answers each of `cases`' inputs with its expected output, exactly as
/// the file gives it: what a right program prints, byte for byte.
fn answering(cases: &[(String, String)]) -> String {
    let table: Value =
        cases.iter().map(|(input, output)| (input.clone(), json!(output))).collect::<serde_json::Map<_, _>>().into();
    let literal = serde_json::to_string(&table.to_string()).unwrap();
    format!("import json, sys\nANSWERS = json.loads({literal})\nsys.stdout.write(ANSWERS[sys.stdin.read()])\n")
}

/// Right programs for three of the CodeContests problems, written for these tests (the
/// file has no solutions).
pub(crate) const CODE_CONTESTS_SOLUTIONS: [(&str, &str); 3] = [
    (
        "1000_A. Codehorses T-shirts",
        "from collections import Counter\nn = int(input())\nlast = Counter(input() for _ in range(n))\n\
         now = Counter(input() for _ in range(n))\nprint(n - sum((last & now).values()))\n",
    ),
    (
        "1238_B. Kill 'Em All",
        "import sys\ndata = sys.stdin.read().split()\nq, at = int(data[0]), 1\nfor _ in range(q):\n    \
         n, r = int(data[at]), int(data[at + 1])\n    xs = sorted(set(map(int, data[at + 2:at + 2 + n])), reverse=True)\n    \
         at += 2 + n\n    shots = 0\n    for x in xs:\n        if x - shots * r > 0:\n            shots += 1\n    print(shots)\n",
    ),
    (
        "12_B. Correct Solution?",
        "n, m = input().strip(), input().strip()\ndigits = sorted(n)\nif digits[0] == '0' and len(digits) > 1:\n    \
         first = next(i for i, d in enumerate(digits) if d != '0')\n    digits[0], digits[first] = digits[first], '0'\n\
         print('OK' if ''.join(digits) == m else 'WRONG_ANSWER')\n",
    ),
];

/// Guards the reading of SandboxFusion's CodeContests file, whose `test` and `labels`
/// are JSON text inside JSON and which carries no solutions: for each of its 20
/// problems, a program that prints each test's expected output passes every test,
/// under default settings, and the run exits 0; three programs written to solve their
/// problems pass; a program that prints a line too many on the last test fails. Answers are judged by SandboxFusion's
/// own rule for the suite: case does not matter, a line of several numbers is text.
#[test]
fn sandboxfusion_code_contests_file_is_read_and_judged_as_sandboxfusion_judges_it() {
    let Some(dir) = stdio_benchmarks() else { return };
    let file = dir.join("sandboxfusion_code_contests_sample.jsonl");
    let records = read_jsonl(&file);
    assert_eq!(records.len(), 20);
    let mut samples = Vec::new();
    let mut names = std::collections::HashMap::new();
    for record in &records {
        let id = record["id"].to_string();
        let labels: Value = serde_json::from_str(record["labels"].as_str().unwrap()).unwrap();
        names.insert(labels["name"].as_str().unwrap().to_owned(), id.clone());
        let cases: Vec<Value> = serde_json::from_str(record["test"].as_str().unwrap()).unwrap();
        let cases: Vec<(String, String)> = cases
            .iter()
            .map(|case| {
                (
                    case["input"]["stdin"].as_str().unwrap().to_owned(),
                    case["output"]["stdout"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        samples.push(json!({"task_id": id, "solution": answering(&cases), "kind": "answers"}));
        // A line too many on the last test.
        let mut off = cases.clone();
        let last = off.len() - 1;
        off[last].1 = format!("{}\nmore\n", off[last].1.trim_end());
        samples.push(json!({"task_id": id, "solution": answering(&off), "kind": "one off"}));
    }
    for (name, solution) in CODE_CONTESTS_SOLUTIONS {
        samples.push(json!({"task_id": names[name], "solution": solution, "kind": name}));
    }
    let (finished, results) = evaluate(&file, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results.len(), samples.len());
    for result in &results {
        let expected = if result["kind"] == "one off" { "failed" } else { "passed" };
        assert_eq!(result["status"], expected, "{}: {}", result["kind"], result["detail"]);
    }
}

/// Right programs for the three LiveCodeBench problems, written for these tests: the
/// file's `canonical_solution` is a placeholder, `import sys; sys.exit(0)`.
pub(crate) const LIVECODEBENCH_SOLUTIONS: [(&str, &str); 3] = [
    ("1", "for _ in range(int(input())):\n    s = input().strip()\n    print('YES' if sum(a != b for a, b in zip(s, 'abc')) <= 2 else 'NO')\n"),
    (
        "10",
        "from typing import List\n\nclass Solution:\n    def countSeniors(self, details: List[str]) -> int:\n        \
         return sum(int(d[11:13]) > 60 for d in details)\n",
    ),
    ("191", "input()\ns = input().strip()\nt, a = s.count('T'), s.count('A')\nprint('T' if t > a else 'A' if a > t else 'A' if s[-1] == 'T' else 'T')\n"),
];

/// Guards the reading of SandboxFusion's LiveCodeBench file, whose tests are packed as
/// LiveCodeBench packs its private tests, in APPS's shape, standard input and a
/// LeetCode method: right programs pass every problem with default settings, and the
/// run exits 0; the file's own `canonical_solution`, a placeholder that prints nothing,
/// passes none; a right answer in lower case fails, as LiveCodeBench's
/// rule is case-sensitive.
#[test]
fn sandboxfusion_livecodebench_file_is_read_and_judged_as_livecodebench_judges_it() {
    let Some(dir) = stdio_benchmarks() else { return };
    let file = dir.join("sandboxfusion_live_code_bench_v1_sample.jsonl");
    let mut samples: Vec<Value> = LIVECODEBENCH_SOLUTIONS
        .iter()
        .map(|(id, solution)| json!({"task_id": id, "solution": solution, "kind": "right"}))
        .collect();
    let canonical = finish(passk(["canonical", "--problems"]).arg(&file));
    assert_eq!(canonical.code, Some(0), "{}", canonical.stderr);
    for line in canonical.stdout.lines() {
        let mut sample: Value = serde_json::from_str(line).unwrap();
        assert_eq!(sample["completion"], "import sys; sys.exit(0)", "the file's placeholder");
        sample["kind"] = json!("placeholder");
        samples.push(sample);
    }
    let lower = LIVECODEBENCH_SOLUTIONS[0].1.replace("'YES'", "'yes'");
    samples.push(json!({"task_id": "1", "solution": lower, "kind": "lower case"}));
    let (finished, results) = evaluate(&file, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results.len(), 7);
    for result in &results {
        let what = format!("{} {}: {}", result["kind"], result["task_id"], result["detail"]);
        if result["kind"] == "right" {
            assert_eq!(result["status"], "passed", "{what}");
        } else {
            assert_ne!(result["status"], "passed", "{what}");
        }
    }
}

/// Honest programs for the three LiveCodeBench problems that use what LiveCodeBench's
/// harness imports before every program (`import_string` in
/// lcb_runner/evaluation/testing_util.py) without importing it: `List` of `typing` in a
/// method's annotation, `stdin` of `sys`, `Counter` of `collections`.
const PREAMBLE_SOLUTIONS: [(&str, &str); 3] = [
    (
        "1",
        "data = stdin.read().split()\nt = int(data[0])\nfor s in data[1:1 + t]:\n    \
         print('YES' if sum(a != b for a, b in zip(s, 'abc')) in (0, 2) else 'NO')\n",
    ),
    (
        "10",
        "class Solution:\n    def countSeniors(self, details: List[str]) -> int:\n        \
         return sum(int(d[11:13]) > 60 for d in details)\n",
    ),
    (
        "191",
        "n = int(input())\ns = input().strip()\nc = Counter(s)\nif c['T'] != c['A']:\n    \
         print('T' if c['T'] > c['A'] else 'A')\nelse:\n    print('A' if s[-1] == 'T' else 'T')\n",
    ),
];

/// Guards against honest programs that LiveCodeBench passes failing with a NameError:
/// its harness runs every program, called or on standard input, after its own imports,
/// and so does passk, on the released file's standard-input and functional problems.
#[test]
fn livecodebench_programs_run_after_livecodebench_s_own_imports() {
    let Some(dir) = stdio_benchmarks() else { return };
    let file = dir.join("sandboxfusion_live_code_bench_v1_sample.jsonl");
    let samples: Vec<Value> =
        PREAMBLE_SOLUTIONS.iter().map(|(id, solution)| json!({"task_id": id, "solution": solution})).collect();
    let (finished, results) = evaluate(&file, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let statuses: Vec<&Value> = results.iter().map(|result| &result["status"]).collect();
    assert_eq!(statuses, ["passed", "passed", "passed"], "{results:#?}");
}
