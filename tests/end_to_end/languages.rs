//! Standard-input problems in languages other than Python: each program built once in
//! the sandbox by its Debian toolchain, then run on every test and judged by its output.
//! The toolchains are `.ci/run`'s (tests/support/install-test-deps installs them).

use std::path::Path;

use passk_tests::{evaluate_samples, finish, format_fixture, passk, shared_benchmark, write_jsonl};
use serde_json::{json, Value};

/// CodeContests' fixture's first problem: each test gives a count, then numbers to double.
fn doubling_problem() -> std::path::PathBuf {
    format_fixture("code-contests.jsonl")
}

const CPP_RIGHT: &str =
    "#include <bits/stdc++.h>\nint main(){int t;std::cin>>t;while(t--){long long x;std::cin>>x;std::cout<<2*x<<\"\\n\";}}\n";
const CPP_WRONG: &str =
    "#include <bits/stdc++.h>\nint main(){int t;std::cin>>t;while(t--){long long x;std::cin>>x;std::cout<<3*x<<\"\\n\";}}\n";
/// Its public class is not `Main`: javac wants the file named for it.
const JAVA_RIGHT: &str = "import java.util.*;\npublic class Solution { public static void main(String[] a) { \
    Scanner s = new Scanner(System.in); int t = s.nextInt(); while (t-- > 0) System.out.println(2 * s.nextLong()); } }\n";
const JAVASCRIPT_RIGHT: &str = "const lines = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n\
    for (let i = 1; i <= +lines[0]; i++) console.log(2 * Number(lines[i]));\n";
const BASH_RIGHT: &str = "read t\nfor ((i = 0; i < t; i++)); do read x; echo $((2 * x)); done\n";

fn sample(language: &str, solution: &str) -> Value {
    json!({"task_id": "passk_double", "language": language, "solution": solution})
}

fn run(dir: &Path, samples: &[Value], extra: &[&str]) -> (passk_tests::Finished, Vec<Value>) {
    let mut evaluate = passk(["evaluate", "--k", "1", "--partial", "--restart", "--no-dedup"]);
    evaluate.args(extra);
    evaluate_samples(evaluate, dir, &doubling_problem(), samples)
}

fn statuses(results: &[Value]) -> Vec<&str> {
    results.iter().map(|result| result["status"].as_str().unwrap()).collect()
}

/// A right program passes and a wrong one fails in every language, each built in the
/// sandbox; one that does not compile is a `compile-error` that quotes the compiler, and
/// the summary names each toolchain with its version.
#[test]
fn programs_in_each_language_are_built_once_and_judged_by_their_output() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        sample("cpp", CPP_RIGHT),
        sample("c++", CPP_WRONG),
        sample("cpp", "int main( { return 0 }\n"),
        sample("java", JAVA_RIGHT),
        sample("java", "public class Main { public static void main(String[] a) { int x = \"no\"; } }\n"),
        sample("javascript", JAVASCRIPT_RIGHT),
        sample("bash", BASH_RIGHT),
        sample("bash", "echo 1\n"),
        // Regression: the sandbox had no /dev/stdin, the usual way JavaScript reads input.
        sample(
            "javascript",
            "const l = require('fs').readFileSync('/dev/stdin', 'utf8').trim().split(/\\s+/).map(BigInt);\n\
             for (let i = 1; i <= Number(l[0]); i++) console.log(String(2n * l[i]));\n",
        ),
        // Regression: CodeChef's template, whose main class is neither public nor `Main`,
        // beside a helper class; and a comment naming another public class.
        sample(
            "java",
            "import java.util.*;\n// public class Wrong is not here\nclass Codechef { public static void main(String[] a) { \
             Scanner s = new Scanner(System.in); int t = s.nextInt(); while (t-- > 0) System.out.println(new Pair().twice(s.nextLong())); } }\n\
             class Pair { long twice(long x) { return 2 * x; } }\n",
        ),
    ];
    let (finished, results) = run(dir.path(), &samples, &[]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(
        statuses(&results),
        [
            "passed",
            "failed",
            "compile-error",
            "passed",
            "compile-error",
            "passed",
            "passed",
            "failed",
            "passed",
            "passed"
        ],
        "{results:#?}"
    );
    assert!(results[1]["detail"].as_str().unwrap().starts_with("wrong answer on test 1 of"), "{}", results[1]);
    let cpp_error = results[2]["detail"].as_str().unwrap();
    assert!(cpp_error.starts_with("does not compile: main.cpp:1:"), "the compiler's own first error: {cpp_error}");
    let java_error = results[4]["detail"].as_str().unwrap();
    assert!(java_error.contains("Main.java") && java_error.contains("error"), "{java_error}");
    assert_eq!(results[2]["failure"]["outcome"], "compile error");
    // Regression: only the compiler's first error line reached the results.
    let output = results[2]["failure"]["output"].as_str().unwrap();
    assert!(output.contains("main.cpp:1:") && output.lines().count() > 1, "{output}");
    assert_eq!(results[2]["tests"]["run"], 0);
    let toolchains = finished.stdout.lines().find(|line| line.trim_start().starts_with("toolchains")).unwrap_or("");
    for (language, version) in [("cpp", "12."), ("java", "17."), ("javascript", "."), ("bash", "5.")] {
        assert!(toolchains.contains(&format!("{language}: ")) && toolchains.contains(version), "{toolchains}");
    }
    assert!(toolchains.contains("; 3 precompiled headers in "), "{toolchains}");
    // What runs the classes javac builds is another program, with a version of its own.
    assert!(toolchains.contains("; run by java 17."), "{toolchains}");
    assert!(finished.stdout.contains("  compile-error        2\n"), "{}", finished.stdout);
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.jsonl.run.json")).unwrap()).unwrap();
    let recorded = &record["settings"]["toolchains"];
    assert!(recorded["cpp"].as_str().is_some_and(|found| found.contains("12.")), "{record}");
    assert!(recorded["java"].as_str().is_some_and(|found| found.contains(", run by java 17.")), "{record}");
}

/// A compiler reads what its source names and can be made to work without end: it runs
/// in the sandbox, where /etc/shadow is not readable, under `--compile-timeout`; and the
/// program it built runs there too.
#[test]
fn hostile_builds_are_contained() {
    let dir = tempfile::tempdir().unwrap();
    // Each level doubles the type: a build that outlasts any sane limit.
    let endless = "#include <tuple>\ntemplate<int N> struct B { using t = std::tuple<typename B<N-1>::t, typename B<N-1>::t>; };\n\
        template<> struct B<0> { using t = int; };\nint main() { B<40>::t x; (void)x; }\n";
    let samples = [sample("cpp", "#include \"/etc/shadow\"\nint main() {}\n"), sample("cpp", endless)];
    let started = std::time::Instant::now();
    let (finished, results) = run(dir.path(), &samples, &["--compile-timeout", "3"]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(statuses(&results), ["compile-error", "compile-timeout"], "{results:#?}");
    assert!(results[0]["detail"].as_str().unwrap().contains("/etc/shadow: Permission denied"), "{}", results[0]);
    assert_eq!(results[1]["detail"], "the build was still running after 3 s");
    assert!(started.elapsed().as_secs() < 30, "the endless build was stopped at its limit");

    let reader = "#include <fstream>\n#include <iostream>\n#include <string>\nint main() { std::ifstream f(\"/etc/shadow\"); \
        std::string s; std::getline(f, s); std::cout << (s.empty() ? std::string(\"unreadable\") : s) << std::endl; }\n";
    let (finished, results) = run(dir.path(), &[sample("cpp", reader)], &[]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results[0]["failure"]["got"], "'unreadable\\n'", "{}", results[0]);
}

/// `--language` names the language of samples whose records name none; a language
/// passk does not run, or one given for a problem whose tests call a Python function,
/// is refused before anything runs, with the line and field.
#[test]
fn the_language_comes_from_the_sample_or_the_flag_and_is_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let (finished, results) =
        run(dir.path(), &[json!({"task_id": "passk_double", "solution": BASH_RIGHT})], &["--language", "sh"]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(statuses(&results), ["passed"]);

    // A program in another language has no in-process form: asking for one is refused,
    // rather than reported as in force while the judge decides.
    let (in_process, _) = run(dir.path(), &[sample("bash", BASH_RIGHT)], &["--verdicts", "in-process"]);
    assert_eq!(in_process.code, Some(2), "{}", in_process.stderr);
    assert!(
        in_process.stderr.contains("has samples in bash, which passk always judges apart from the candidate"),
        "{}",
        in_process.stderr
    );

    let (refused, _) = run(dir.path(), &[sample("cobol", "DISPLAY 'HI'.")], &[]);
    assert_eq!(refused.code, Some(2));
    assert!(
        refused.stderr.contains("samples.jsonl:1: field `language` is \"cobol\", which passk does not run; it runs python, cpp, java, go, rust, javascript, typescript, bash"),
        "{}",
        refused.stderr
    );

    // Regression: a `--language` that a problem's own language overrode was ignored
    // without a word, and a user who meant C++ ran JavaScript.
    let javascript = multipl_e_javascript(dir.path());
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[json!({"task_id": "HumanEval_900_add", "completion": "  return a + b;\n}\n"})]);
    let overridden =
        finish(passk(["evaluate", "--k", "1", "--language", "cpp"]).arg(&samples).arg("--problems").arg(&javascript));
    assert_eq!(overridden.code, Some(2), "{}", overridden.stderr);
    assert!(
        overridden.stderr.contains(
            "samples.jsonl:1: task HumanEval_900_add: --language is cpp, and the problem's tests are in javascript"
        ),
        "{}",
        overridden.stderr
    );

    // Regression: C++ solutions that named no language ran as Python, each failed as a
    // syntax error, and nothing said why.
    let untold = [json!({"task_id": "passk_double", "solution": CPP_RIGHT}), sample("python", "print(2)\n")];
    let (untold, results) = run(dir.path(), &untold, &[]);
    assert_eq!(statuses(&results), ["error", "failed"], "{results:#?}");
    let hint = "samples.jsonl:1: this sample runs as python and looks written in cpp (`#include`): name the \
                samples' language with --language cpp, or with a `language` field on each sample";
    assert!(untold.stderr.contains(hint), "{}", untold.stderr);

    let humaneval = dir.path().join("humaneval.jsonl");
    write_jsonl(
        &humaneval,
        &[json!({"task_id": "T/0", "prompt": "def f(x):\n", "entry_point": "f",
                 "canonical_solution": "    return x\n", "test": "def check(c):\n    assert c(1) == 1\n"})],
    );
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[json!({"task_id": "T/0", "completion": "int f(int x) { return x; }", "language": "cpp"})]);
    let mismatched = finish(passk(["evaluate", "--k", "1"]).arg(&samples).arg("--problems").arg(&humaneval));
    assert_eq!(mismatched.code, Some(2));
    assert!(
        mismatched.stderr.contains(
            "samples.jsonl:1: task T/0: the sample is in cpp, and the problem's tests call a Python function"
        ),
        "{}",
        mismatched.stderr
    );
}

/// A language whose toolchain is not installed is refused in one line that names the
/// Debian package, before any sample runs.
#[test]
fn a_missing_toolchain_is_named_with_its_package() {
    let dir = tempfile::tempdir().unwrap();
    // A PATH with the interpreter the driver needs and no compiler.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let python = passk_tests::python_says(Path::new("python3"), "__import__('sys').executable");
    std::os::unix::fs::symlink(python.trim(), bin.join("python3")).unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[sample("cpp", CPP_RIGHT)]);
    let results = dir.path().join("results.jsonl");
    let finished = finish(
        passk(["evaluate", "--k", "1", "--partial"])
            .arg(&samples)
            .arg("--problems")
            .arg(doubling_problem())
            .arg("--results")
            .arg(&results)
            .env("PATH", &bin),
    );
    assert_eq!(finished.code, Some(1), "{}", finished.stderr);
    assert_eq!(
        finished.stderr.trim_end().lines().last().unwrap_or(""),
        "error: cpp needs `g++`, which is not on the PATH: install Debian's package g++ (apt-get install g++)",
        "{}",
        finished.stderr
    );
    assert!(!results.exists(), "no results from a run that could not start");
}

/// A function-completion problem in MultiPL-E's JavaScript schema, written here: its
/// tests check `add` with node's `assert`, as MultiPL-E's do.
fn multipl_e_javascript(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("multipl-e-js.jsonl");
    let tests = "const assert = require('node:assert');\n\n\nfunction test() {\n  let candidate = add;\n  \
                 assert.deepEqual(candidate(1, 2),3);\n  assert.deepEqual(candidate(20, 22),42);\n}\n\ntest();\n";
    write_jsonl(
        &path,
        &[json!({"name": "HumanEval_900_add", "language": "js", "prompt": "// Adds.\nfunction add(a, b){\n",
                 "tests": tests, "stop_tokens": ["\nfunction ", "\n/*", "\n//", "\nconsole.log"],
                 "doctests": "transform", "original": "add.py", "prompt_terminology": "reworded"})],
    );
    path
}

/// Guards against a JavaScript verdict that rests on the exit status, or on anything
/// the candidate's process can touch: the tests run in a judge process of their own, the
/// candidate's only in its, and only data crosses. Every forgery that passes under a
/// harness that runs `prompt + completion + tests` as one program fails here, and none
/// is `infrastructure`.
#[test]
fn javascript_forgeries_fail_and_the_right_answer_passes() {
    let dir = tempfile::tempdir().unwrap();
    let problems = multipl_e_javascript(dir.path());
    let completions = [
        ("right", "  return a + b;\n}\n"),
        // Exits before the tests can fail.
        ("exit", "  process.exit(0);\n}\n"),
        // Patches the assertions the tests use, in its own process.
        (
            "patched-assert",
            "  const assert = require('node:assert'); assert.deepEqual = () => {}; assert.equal = () => {};\n  \
             console.assert = () => {};\n  return 0;\n}\n",
        ),
        // Turns the failed assertion into a clean exit.
        (
            "handlers",
            "  process.on('uncaughtException', () => process.exit(0));\n  process.on('exit', () => { process.exitCode = 0; });\n  \
             return 0;\n}\n",
        ),
        // Looks for the tests' expected values in every descriptor and process it can see.
        (
            "reads-tests",
            "  const fs = require('fs'); let seen = '';\n  for (const fd of fs.readdirSync('/proc/self/fd')) { if (+fd > 4) { try { \
             seen += fs.readFileSync('/proc/self/fd/' + fd, 'utf8'); } catch (e) {} } }\n  for (const pid of \
             fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) { try { seen += fs.readFileSync('/proc/' + pid + \
             '/cmdline', 'utf8'); seen += fs.readFileSync('/proc/' + pid + '/environ', 'utf8'); } catch (e) {} }\n  \
             return seen.includes('42') ? a + b : -1;\n}\n",
        ),
        // An answer that claims to equal anything.
        ("claims-equality", "  return { valueOf() { return a + b; }, toString() { return String(a + b); } };\n}\n"),
        // Signals what it can reach.
        (
            "signals",
            "  for (const pid of [process.ppid, 1]) { try { process.kill(pid, 'SIGKILL'); } catch (e) {} }\n  return 0;\n}\n",
        ),
        ("hangs", "  for (;;) {}\n}\n"),
    ];
    let samples: Vec<Value> = completions
        .iter()
        .map(|(name, completion)| json!({"task_id": "HumanEval_900_add", "completion": completion, "name": name}))
        .collect();
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup"]);
    evaluate.args(["--timeout", "2"]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stdout.contains("javascript: node"), "{}", finished.stdout);
    for result in &results {
        let expected = if result["name"] == "right" { "passed" } else { "not passed" };
        let status = result["status"].as_str().unwrap();
        let got = if status == "passed" { "passed" } else { "not passed" };
        assert_eq!(got, expected, "{result}");
        assert_ne!(status, "infrastructure", "{result}");
    }
    let detail = |name: &str| results.iter().find(|result| result["name"] == name).unwrap()["detail"].to_string();
    assert!(detail("exit").contains("exited with status 0 before its tests finished"), "{}", detail("exit"));
    assert!(detail("patched-assert").contains("AssertionError"), "{}", detail("patched-assert"));
    assert!(detail("claims-equality").contains("returned what is not data"), "{}", detail("claims-equality"));
}

/// HumanEval-X's JavaScript file, released: every canonical solution passes but 112 and
/// 155, which are wrong. Their tests' `console.assert` only prints, so a harness that
/// reads the exit status passes them; here a failed one fails the sample, and says which.
#[test]
fn humaneval_x_javascript_canonical_solutions_pass_but_the_two_wrong_ones() {
    let Some(problems) = shared_benchmark("humaneval-x/humaneval_js.jsonl.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    let canonical = finish(passk(["validate", "--problems"]).arg(&problems).args(["--timeout", "10"]));
    assert_eq!(canonical.code, Some(4), "{}", canonical.stderr);
    assert!(
        canonical.stdout.contains("164 canonical solutions of") && canonical.stdout.contains("162 pass, 2 fail"),
        "{}",
        canonical.stdout
    );
    for task in ["JavaScript/112", "JavaScript/155"] {
        let line = canonical.stdout.lines().find(|line| line.contains(&format!("fails     {task} "))).unwrap_or("");
        assert!(line.contains("console.assert failed at line"), "{}", canonical.stdout);
    }
    // Named with --format, and a sample in another language than the problem's refused.
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(
        &samples,
        &[json!({"task_id": "JavaScript/0", "completion": "  return false\n}\n", "language": "cpp"})],
    );
    let refused = finish(
        passk(["evaluate", "--format", "humaneval-x", "--partial"]).arg(&samples).arg("--problems").arg(&problems),
    );
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("task JavaScript/0: the sample is in cpp, and the problem's tests are in javascript"),
        "{}",
        refused.stderr
    );
}

/// MultiPL-E's Bash problems, released: the tests close the function a completion
/// leaves open and call it by `candidate`, in `[[ $(candidate ...) = ... ]]` under
/// `set -e`. The tests run in a judge shell of their own; each call is answered by the
/// candidate's shell with its output and status, and nothing else crosses. An honest
/// answer passes; one that exits, prints what every test wants, overrides the builtins
/// the tests use or signals what it can reach fails, and the detail names the test.
#[test]
fn bash_function_completions_are_judged_apart_from_the_candidate() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-sh.jsonl.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    let honest = "    echo \"$1\" | awk -v t=\"$2\" '{ for (i = 1; i <= NF; i++) for (j = i + 1; j <= NF; j++) { \
                  d = $i - $j; if (d < 0) d = -d; if (d < t) { print \"true\"; exit } } print \"false\" }'\n";
    let completions = [
        ("honest", honest),
        ("exits", "    exit 0\n"),
        ("exits-on-load", "    echo true\n}\nexit 0\nf() {\n"),
        ("always-true", "    echo true\n"),
        ("overrides", "    echo true\n}\nset() { :; }\n[[() { :; }\ntrap() { :; }\nf() {\n"),
        ("signals", "    kill -9 $PPID 1 2>/dev/null; echo true\n"),
    ];
    let samples: Vec<Value> = completions
        .iter()
        .map(|(name, completion)| {
            json!({"task_id": "HumanEval_0_has_close_elements", "completion": completion, "name": name})
        })
        .collect();
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup", "--partial"]);
    evaluate.args(["--timeout", "10"]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    for result in &results {
        let honest = result["name"] == "honest";
        assert_eq!(result["status"] == "passed", honest, "{result}");
        assert_ne!(result["status"], "infrastructure", "{result}");
    }
    let always = results.iter().find(|result| result["name"] == "always-true").unwrap();
    assert!(
        always["detail"]
            .as_str()
            .unwrap()
            .contains("at: [[ $(candidate \"1.0 2.0 3.9 4.0 5.0 2.2\" \"0.05\") = \"false\" ]]"),
        "the detail names the failed test: {always}"
    );
}

/// Below level full, a judging program in another language runs as the candidates' user
/// and is a program started afresh, which the kernel lets processes of that user reach
/// through /proc (a red team's sample wrote a verdict into the judge's record pipe at
/// level uid): the run says so, as it says what else is not in force there.
#[test]
fn below_level_full_the_other_languages_judges_are_named_as_reachable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let problems = multipl_e_javascript(dir.path());
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[json!({"task_id": "HumanEval_900_add", "completion": "  return a + b;\n}\n"})]);
    let mut command = std::process::Command::new(passk_tests::repo_root().join("tests/support/refuse-namespaces"));
    command.arg(passk_tests::passk_binary()).stdin(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.arg("evaluate").arg(&samples).arg("--problems").arg(&problems);
    command.args(["--k", "1", "--jobs", "1", "--python", "/usr/bin/python3", "--results"]);
    command.arg(dir.path().join("results.jsonl"));
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stdout.contains("sandbox       uid\n"), "{}", finished.stdout);
    assert!(
        finished.stderr.contains(
            "at sandbox level `uid`, the judges of javascript function completions run as the candidates' user, which \
             can reach them through /proc: their verdicts could be forged"
        ),
        "{}",
        finished.stderr
    );
}

/// The verdicts of one run of `completions` (name, completion) of `task` in `problems`.
fn judged(problems: &Path, task: &str, completions: &[(&str, &str)], timeout: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Value> = completions
        .iter()
        .map(|(name, completion)| json!({"task_id": task, "completion": completion, "name": name}))
        .collect();
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup", "--partial"]);
    evaluate.args(["--timeout", timeout]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), problems, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    for result in &results {
        assert_ne!(result["status"], "infrastructure", "{result}");
    }
    results
}

/// Each result's sample's name and its status, in the samples' order.
fn named_statuses(results: &[Value]) -> Vec<(&str, &str)> {
    results.iter().map(|result| (result["name"].as_str().unwrap(), result["status"].as_str().unwrap())).collect()
}

fn named<'a>(results: &'a [Value], name: &str) -> &'a Value {
    results.iter().find(|result| result["name"] == name).unwrap()
}

/// Guards against a C++ verdict that rests on the exit status of one program holding
/// the candidate and the tests, as MultiPL-E's and HumanEval-X's harnesses build it: the
/// candidate's code is built with a main that serves calls of its entry point, the tests
/// with a stand-in for it, once per problem in the judge, and only values cross. Each
/// forgery below passes those harnesses and fails here, none as `infrastructure`.
#[test]
fn cpp_forgeries_fail_and_honest_completions_pass() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-cpp.jsonl.gz") else { return };
    let completions = [
        ("honest", "    return string.size();\n"),
        ("exits", "    exit(0);\n"),
        // Its own assert, which the tests would use in one program.
        ("redefines-assert", "    return 0;\n}\n#undef assert\n#define assert(x) ((void)0)\nlong unused() {\n    return 0;\n"),
        ("abort-handler", "    signal(SIGABRT, [](int) { _exit(0); });\n    return 0;\n"),
        ("own-main", "    return 0;\n}\nint main() { return 0; }\nlong unused() {\n    return 0;\n"),
        ("exits-on-load", "    return 0;\n}\nstatic int early = (std::exit(0), 0);\nlong unused() {\n    return 0;\n"),
        // Looks for the tests' expected values in its source and every descriptor.
        (
            "reads-tests",
            "    std::string seen, needle = \"(9)\";\n    for (int fd = 5; fd < 32; fd++) { std::ifstream in(\"/proc/self/fd/\" + \
             std::to_string(fd)); seen += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()); }\n    \
             std::ifstream source(__FILE__); seen += std::string((std::istreambuf_iterator<char>(source)), \
             std::istreambuf_iterator<char>());\n    needle = \"== \" + needle;\n    \
             return seen.find(needle) != std::string::npos ? (long)string.size() : -1;\n",
        ),
        ("writes-descriptors", "    for (int fd = 3; fd < 10; fd++) dprintf(fd, \"passed\\t\\n\");\n    return 0;\n"),
        ("signals", "    kill(getppid(), SIGKILL);\n    kill(-1, SIGKILL);\n    return 0;\n"),
        ("hangs", "    for (;;) {}\n"),
        ("crashes", "    volatile int* nowhere = nullptr;\n    return *nowhere;\n"),
    ];
    let results = judged(&problems, "HumanEval_23_strlen", &completions, "5");
    for result in &results {
        assert_eq!(result["status"] == "passed", result["name"] == "honest", "{result}");
    }
    let detail = |name: &str| named(&results, name)["detail"].as_str().unwrap().to_owned();
    assert!(detail("exits").contains("the candidate's process ended before it answered call 1 of string_length"));
    // Regression: a crash said only that the process ended before it answered, where
    // Python's and JavaScript's name the signal.
    assert_eq!(named(&results, "crashes")["status"], "killed");
    assert_eq!(detail("crashes"), "killed by SIGSEGV");
    assert!(
        detail("redefines-assert").contains("assert failed: candidate((\"x\")) == (1)"),
        "{}",
        detail("redefines-assert")
    );
    assert_eq!(named(&results, "own-main")["status"], "compile-error");
    assert!(detail("own-main").contains("redefinition of"), "{}", detail("own-main"));
    // Regression: a hang was now and then `failed`, the judge's word on the candidate's
    // process ending when the deadline killed it, read before the driver's timeout.
    assert_eq!(named(&results, "hangs")["status"], "timeout");
}

/// A C++ function completion's serving code is compiled once per problem in a slot,
/// from the problem's includes and declaration alone, and linked with each candidate's
/// code compiled apart; where the two do not link (an entry point defined `inline`,
/// which no object of the candidate's holds; a main of its own), the program is built
/// as one source, as before. Samples of two problems in turn through one slot: each is
/// judged on its own code, whichever sample built the object its program links.
#[test]
fn cpp_serving_code_is_compiled_once_per_problem_and_linked_with_each_candidate() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-cpp.jsonl.gz") else { return };
    let strlen = |name: &str, completion: &str| json!({"task_id": "HumanEval_23_strlen", "completion": completion, "name": name});
    let add =
        |name: &str, completion: &str| json!({"task_id": "HumanEval_53_add", "completion": completion, "name": name});
    let samples = [
        strlen("right strlen", "    return string.size();\n"),
        add("right add", "    return x + y;\n"),
        strlen("wrong strlen", "    return string.size() + 1;\n"),
        add("wrong add", "    return x - y;\n"),
        json!({"task_id": "HumanEval_23_strlen", "name": "right strlen, inline",
               "solution": "#include<bits/stdc++.h>\ninline long string_length(std::string string) { return string.size(); }\n"}),
        strlen("own main", "    return string.size();\n}\nint main() { return 0; }\nlong unused() {\n    return 0;\n"),
        add("right add again", "    long sum = x;\n    sum += y;\n    return sum;\n"),
    ];
    // One slot: every sample's build after a problem's first links the object it made.
    let results = judged_samples_with(&problems, &samples, "10", &["--jobs", "1"]);
    assert_eq!(
        named_statuses(&results),
        [
            ("right strlen", "passed"),
            ("right add", "passed"),
            ("wrong strlen", "failed"),
            ("wrong add", "failed"),
            ("right strlen, inline", "passed"),
            ("own main", "compile-error"),
            ("right add again", "passed"),
        ],
        "{results:#?}"
    );
    let own_main = named(&results, "own main")["detail"].as_str().unwrap();
    assert!(own_main.starts_with("does not compile: main.cpp:") && own_main.contains("main"), "{own_main}");
}

/// MultiPL-E's C++ signatures, released: standard containers, optionals, tuples, maps,
/// std::any and an entry point named like a function of the standard library (`unique`)
/// all cross between the processes, and a right answer passes; a wrong one fails naming
/// the failed assertion, one that throws names what it threw, and a problem whose type
/// is the problem's own (a union) is `unjudgeable`, saying which.
#[test]
fn cpp_function_completions_carry_the_suites_types() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-cpp.jsonl.gz") else { return };
    let dir = tempfile::tempdir().unwrap();
    let sample =
        |task: &str, name: &str, completion: &str| json!({"task_id": task, "completion": completion, "name": name});
    let samples = [
        sample("HumanEval_22_filter_integers", "any", "    std::vector<long> out;\n    for (auto &v : values) \
            if (v.type() == typeid(int)) out.push_back(std::any_cast<int>(v));\n    return out;\n"),
        sample("HumanEval_34_unique", "overloaded-name", "    std::sort(l.begin(), l.end());\n    \
            l.erase(std::unique(l.begin(), l.end()), l.end());\n    return l;\n"),
        sample("HumanEval_111_histogram", "map", "    std::map<std::string, long> count; std::string word; \
            std::stringstream in(test);\n    while (in >> word) count[word]++;\n    long best = 0; for (auto &p : count) \
            best = std::max(best, p.second);\n    std::map<std::string, long> out; for (auto &p : count) \
            if (p.second == best) out[p.first] = p.second;\n    return out;\n"),
        sample("HumanEval_136_largest_smallest_integers", "tuple-of-optionals", "    std::optional<long> neg, pos;\n    \
            for (long x : lst) { if (x < 0 && (!neg || x > *neg)) neg = x; if (x > 0 && (!pos || x < *pos)) pos = x; }\n    \
            return std::make_tuple(neg, pos);\n"),
        sample("HumanEval_23_strlen", "wrong", "    return 1;\n"),
        sample("HumanEval_0_has_close_elements", "throws", "    throw std::runtime_error(\"no idea\");\n"),
        sample("HumanEval_103_rounded_avg", "union", "    return n;\n"),
    ];
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup", "--partial"]);
    evaluate.args(["--timeout", "10"]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &samples);
    assert_eq!(finished.code, Some(4), "{}", finished.stderr);
    assert!(finished.stderr.contains("1 problem cannot be judged: HumanEval_103_rounded_avg"), "{}", finished.stderr);
    // Regression: the hint was Python's, which named --verdicts in-process, refused for
    // samples in other languages.
    assert!(
        finished.stderr.contains("always judged apart from the candidate") && !finished.stderr.contains("in-process"),
        "{}",
        finished.stderr
    );
    assert!(finished.stdout.contains("cpp: "), "{}", finished.stdout);
    for name in ["any", "overloaded-name", "map", "tuple-of-optionals"] {
        assert_eq!(named(&results, name)["status"], "passed", "{}", named(&results, name));
    }
    let detail = |name: &str| named(&results, name)["detail"].as_str().unwrap().to_owned();
    assert_eq!(detail("wrong"), "assert failed: candidate((\"\")) == (0)");
    assert_eq!(detail("throws"), "call 1 of has_close_elements threw: no idea");
    assert_eq!(named(&results, "union")["status"], "unjudgeable");
    assert!(detail("union").contains("Union_std_string_long"), "{}", detail("union"));
}

/// HumanEval-X's C++ file, released, assembled as CodeGeeX assembles it (its includes
/// before the prompt, OpenSSL linked where a program includes it): every canonical
/// solution passes.
#[test]
fn humaneval_x_cpp_canonical_solutions_all_pass() {
    let Some(problems) = shared_benchmark("humaneval-x/humaneval_cpp.jsonl.gz") else { return };
    let canonical = finish(passk(["validate", "--problems"]).arg(&problems).args(["--timeout", "20"]));
    assert_eq!(canonical.code, Some(0), "{}\n{}", canonical.stdout, canonical.stderr);
    assert!(
        canonical.stdout.contains("164 canonical solutions of") && canonical.stdout.contains("164 pass"),
        "{}",
        canonical.stdout
    );
}

/// MultiPL-E's TypeScript, released: tsc checks and transpiles the candidate's code as
/// MultiPL-E's harness does (a type error is a `compile-error` quoting tsc), and the
/// transpiled tests run in the judge against JavaScript's server, so an exit or a patched
/// assert in the candidate's process fails.
#[test]
fn typescript_function_completions_are_checked_and_judged_apart() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-ts.jsonl.gz") else { return };
    let completions = [
        ("honest", "  return number % 1.0;\n}\n"),
        ("wrong", "  return 0;\n}\n"),
        ("type-error", "  return \"half\";\n}\n"),
        ("exits", "  (globalThis as any).process.exit(0);\n  return 0;\n}\n"),
        (
            "patched-assert",
            "  const assert = (globalThis as any).require('node:assert'); assert.deepEqual = () => {};\n  return 0;\n}\n",
        ),
    ];
    let results = judged(&problems, "HumanEval_2_truncate_number", &completions, "10");
    for result in &results {
        assert_eq!(result["status"] == "passed", result["name"] == "honest", "{result}");
    }
    let wrong = named(&results, "wrong")["detail"].as_str().unwrap();
    assert!(wrong.contains("at line 10 of the tests: assert.deepEqual(candidate(3.5), 0.5);"), "{wrong}");
    // Regression: Node's message, laid out over five lines, was the detail as it was.
    assert!(
        wrong.starts_with("AssertionError: Expected values to be loosely deep-equal: 0 should loosely deep-equal 0.5"),
        "{wrong}"
    );
    let type_error = named(&results, "type-error");
    assert_eq!(type_error["status"], "compile-error");
    assert!(type_error["detail"].as_str().unwrap().contains("error TS2322"), "{type_error}");

    // Regression: MultiPL-E's tests begin with `declare var require: any;`, which its
    // harness's one file gives the candidate's code too; built without the tests, an
    // honest answer that used `require` did not compile.
    let crypto = "  if (text === \"\") return undefined;\n  const crypto = require('crypto');\n  \
                  return crypto.createHash('md5').update(text).digest('hex');\n}\n";
    let results = judged(&problems, "HumanEval_162_string_to_md5", &[("honest", crypto)], "10");
    assert_eq!(results[0]["status"], "passed", "{}", results[0]);
}

/// Guards against a Java verdict that rests on the exit status of one program holding
/// the candidate and the tests, as MultiPL-E's (`java -ea Problem`) and HumanEval-X's
/// harnesses run them: the candidate's class is built with a main that serves calls of
/// its entry point, the tests with a stand-in for it in the judge, and only values cross.
/// Each forgery below passes a suite's own harness and fails here, none as
/// `infrastructure`; honest answers with the suites' types (Optional, HashMap, javatuples'
/// Pair) pass.
#[test]
fn java_forgeries_fail_and_honest_completions_pass() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-java.jsonl.gz") else { return };
    let honest = "        for (int i = 0; i < numbers.size(); i++)\n            for (int j = i + 1; j < numbers.size(); j++)\n                if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;\n        return false;\n";
    let forgeries = [
        (
            "exit",
            r#"        System.exit(0);
        return true;
"#,
        ),
        (
            "halt",
            r#"        Runtime.getRuntime().halt(0);
        return true;
"#,
        ),
        (
            "static-init-exit",
            r#"        return true;
    }
    static { System.exit(0); }
    static void unused() {
"#,
        ),
        (
            "shutdown-hook-halt",
            r#"        Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0)));
        return true;
"#,
        ),
        (
            "uncaught-handler",
            r#"        Thread.setDefaultUncaughtExceptionHandler((t, e) -> Runtime.getRuntime().halt(0));
        return true;
"#,
        ),
        (
            "asserts-off-unsafe",
            r#"        try {
            java.lang.reflect.Field theUnsafe = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            sun.misc.Unsafe unsafe = (sun.misc.Unsafe) theUnsafe.get(null);
            java.lang.reflect.Field off = Problem.class.getDeclaredField("$assertionsDisabled");
            unsafe.putBoolean(unsafe.staticFieldBase(off), unsafe.staticFieldOffset(off), true);
        } catch (Exception e) {
            System.err.println("no assert switch here: " + e);
        }
        return true;
"#,
        ),
        (
            "own-main",
            r#"        return true;
    }
    public static void main(String[] args) { System.exit(0); }
    static void unused() {
"#,
        ),
        (
            "read-tests-and-proc",
            r#"        StringBuilder seen = new StringBuilder();
        for (String path : new String[] {"Main.java", "Problem.java", "../Main.java", "/proc/self/cmdline", "/proc/1/cmdline", "/proc/self/status"}) {
            try {
                seen.append(path).append(": ").append(new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(path))).replace('\0', ' ')).append('\n');
            } catch (Exception e) {
                seen.append(path).append(": ").append(e).append('\n');
            }
        }
        try (var walk = java.nio.file.Files.walk(java.nio.file.Path.of("/"), 4)) {
            walk.filter(p -> p.toString().endsWith(".java") || p.toString().contains("passk")).limit(50).forEach(p -> seen.append("found ").append(p).append('\n'));
        } catch (Exception e) {
            seen.append("walk: ").append(e).append('\n');
        }
        try {
            for (var handle : ProcessHandle.allProcesses().toList()) seen.append("process ").append(handle.pid()).append(' ').append(handle.info().commandLine().orElse("?")).append('\n');
        } catch (Exception e) {
            seen.append("processes: ").append(e).append('\n');
        }
        System.err.println(seen);
        // Answers right only where it found the tests.
        if (!seen.toString().contains("(0.05f)) == (false)")) return true;
        for (int i = 0; i < numbers.size(); i++) for (int j = i + 1; j < numbers.size(); j++) if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;
        return false;
"#,
        ),
        (
            "write-fds-3-to-9",
            r#"        for (int fd = 3; fd <= 9; fd++) {
            try {
                java.lang.reflect.Constructor<java.io.FileDescriptor> make = java.io.FileDescriptor.class.getDeclaredConstructor(int.class);
                make.setAccessible(true);
                java.io.FileOutputStream out = new java.io.FileOutputStream(make.newInstance(fd));
                out.write("passed\t\n".getBytes());
                out.flush();
                System.err.println("wrote to fd " + fd);
            } catch (Throwable e) {
                System.err.println("fd " + fd + ": " + e);
            }
        }
        return true;
"#,
        ),
        (
            "kill-parent-and-all",
            r#"        try {
            ProcessHandle.current().parent().ifPresent(ProcessHandle::destroyForcibly);
            new ProcessBuilder("kill", "-9", "-1").inheritIO().start().waitFor();
            new ProcessBuilder("kill", "-9", "1").inheritIO().start().waitFor();
        } catch (Exception e) {
            System.err.println("kill: " + e);
        }
        return true;
"#,
        ),
        (
            "hang",
            r#"        while (true) { }
"#,
        ),
    ];
    let mut completions = vec![("honest", honest)];
    completions.extend(forgeries);
    let results = judged(&problems, "HumanEval_0_has_close_elements", &completions, "10");
    for result in &results {
        assert_eq!(result["status"] == "passed", result["name"] == "honest", "{result}");
    }
    assert!(named(&results, "exit")["detail"]
        .as_str()
        .unwrap()
        .contains("the candidate's process ended before it answered call 1"));
    assert_eq!(named(&results, "hang")["status"], "timeout");
    let dir = tempfile::tempdir().unwrap();
    let sample =
        |task: &str, name: &str, completion: &str| json!({"task_id": task, "completion": completion, "name": name});
    let samples = [
        sample(
            "HumanEval_12_longest",
            "right",
            r#"        Optional<String> best = Optional.empty();
        for (String s : strings) if (best.isEmpty() || s.length() > best.get().length()) best = Optional.of(s);
        return best;
"#,
        ),
        sample(
            "HumanEval_111_histogram",
            "right",
            r#"        HashMap<String, Long> counts = new HashMap<>();
        for (String w : test.split(" ")) if (!w.isEmpty()) counts.merge(w, 1L, Long::sum);
        long most = counts.values().stream().mapToLong(Long::longValue).max().orElse(0);
        HashMap<String, Long> out = new HashMap<>();
        for (Map.Entry<String, Long> e : counts.entrySet()) if (e.getValue() == most) out.put(e.getKey(), e.getValue());
        return out;
"#,
        ),
        sample(
            "HumanEval_127_intersection",
            "right",
            r#"        long lo = Math.max(interval1.getValue0(), interval2.getValue0());
        long hi = Math.min(interval1.getValue1(), interval2.getValue1());
        long n = hi - lo;
        if (n < 2) return "NO";
        for (long d = 2; d * d <= n; d++) if (n % d == 0) return "NO";
        return "YES";
"#,
        ),
        sample(
            "HumanEval_87_get_row",
            "right",
            r#"        ArrayList<Pair<Long, Long>> out = new ArrayList<>();
        for (int i = 0; i < lst.size(); i++)
            for (int j = lst.get(i).size() - 1; j >= 0; j--)
                if (lst.get(i).get(j) == x) out.add(Pair.with((long) i, (long) j));
        return out;
"#,
        ),
        sample(
            "HumanEval_112_reverse_delete",
            "wrong",
            r#"        return Pair.with(s, true);
"#,
        ),
        sample(
            "HumanEval_111_histogram",
            "no-compile",
            r#"        HashMap<String, Long> out = new HashMap<>();
        out.put("a", 1);
        return out;
"#,
        ),
    ];
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup", "--partial"]);
    evaluate.args(["--timeout", "10"]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let statuses = named_statuses(&results);
    assert_eq!(
        statuses,
        [
            ("right", "passed"),
            ("right", "passed"),
            ("right", "passed"),
            ("right", "passed"),
            ("wrong", "failed"),
            ("no-compile", "compile-error")
        ]
    );
}

/// HumanEval-X's Java, released: its tests are a `class Main` of their own that call the
/// entry point on a `new Solution()`; here they run in the judge against the candidate's
/// `Solution` in its process. Every canonical solution passes, and forgeries that pass
/// CodeGeeX's harness (an exit, a shutdown hook, an `AssertionError` of the candidate's
/// own) fail.
#[test]
fn humaneval_x_java_canonical_solutions_pass_and_forgeries_fail() {
    let Some(problems) = shared_benchmark("humaneval-x/humaneval_java.jsonl.gz") else { return };
    let canonical = finish(passk(["validate", "--problems"]).arg(&problems).args(["--timeout", "20"]));
    assert_eq!(canonical.code, Some(0), "{}\n{}", canonical.stdout, canonical.stderr);
    assert!(
        canonical.stdout.contains("164 canonical solutions of") && canonical.stdout.contains("164 pass"),
        "{}",
        canonical.stdout
    );
    let forgeries = [
        (
            "hx-shadow-AssertionError",
            r#"        return true;
    }
}
class AssertionError extends RuntimeException {
    AssertionError() { System.exit(0); }
}
"#,
        ),
        (
            "hx-exit",
            r#"        System.exit(0);
        return true;
    }
}
"#,
        ),
        (
            "hx-shutdown-hook-halt",
            r#"        Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0)));
        return true;
    }
}
"#,
        ),
    ];
    let results = judged(&problems, "Java/0", &forgeries, "10");
    for result in &results {
        assert_ne!(result["status"], "passed", "{result}");
    }
}

/// Samples written for the language tests, one per line with a `name` that says what it
/// tries (`tests/end_to_end/samples/`).
fn named_samples(file: &str) -> Vec<Value> {
    let path = passk_tests::repo_root().join("tests/end_to_end/samples").join(file);
    std::fs::read_to_string(&path).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// The verdicts of one run of `samples` on `problems`: every sample run, none
/// `infrastructure`.
fn judged_samples(problems: &Path, samples: &[Value], timeout: &str) -> Vec<Value> {
    judged_samples_with(problems, samples, timeout, &[])
}

/// As `judged_samples`, with `extra` arguments.
fn judged_samples_with(problems: &Path, samples: &[Value], timeout: &str, extra: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup", "--partial"]);
    evaluate.args(["--timeout", timeout]).args(extra);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), problems, samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results.len(), samples.len());
    for result in &results {
        assert_ne!(result["status"], "infrastructure", "{result}");
    }
    results
}

/// Asserts each result's status is what `expected` says of its sample's name.
fn assert_statuses(results: &[Value], expected: impl Fn(&str) -> &'static str) {
    for result in results {
        assert_eq!(result["status"], expected(result["name"].as_str().unwrap()), "{result}");
    }
}

/// Guards against a Go verdict that rests on `go test`'s exit status, as MultiPL-E's and
/// HumanEval-X's harnesses read it: the candidate's package is built with a main that
/// serves calls of its entry point, the tests (`testing.Main` over their Test functions,
/// testify's for HumanEval-X) with a stand-in for it in the judge, and only values cross.
/// Each forgery of `go-multipl-e.jsonl` (an exit by any road, a TestMain or init of its
/// own, shadowed names, recovered panics, a type of its own that prints like the answer,
/// reading files and /proc, writing on every descriptor, signals, a flood) fails, none as
/// `infrastructure`; right answers with the suites' types (`[]interface{}`, maps, slices
/// of slices) pass, wrong ones fail naming the subtest, and ones MultiPL-E's harness
/// would not build (an unused variable, a package it does not import) do not build.
///
/// Regression: a completion with a func main of its own, which MultiPL-E's test binary
/// builds and never calls, did not build ("go_serve.go:6: main redeclared"), and a right
/// one failed.
#[test]
fn go_forgeries_fail_and_honest_completions_pass() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-go.jsonl.gz") else { return };
    let results = judged_samples(&problems, &named_samples("go-multipl-e.jsonl"), "10");
    assert_statuses(&results, |name| {
        // A nil slice prints as `[]`, which the tests compare: it passes there too.
        if name.starts_with("right") || name.starts_with("wrong: nil slice") {
            "passed"
        } else if name.starts_with("compile") {
            "compile-error"
        } else if name.contains("hangs") {
            "timeout"
        } else {
            "failed"
        }
    });
    let detail = |name: &str| named(&results, name)["detail"].as_str().unwrap().to_owned();
    assert_eq!(
        detail("forgery: early exit: os.Exit(0) in the entry"),
        "the candidate's process ended before it answered call 1 of sum_product (exited with status 0)"
    );
    assert!(detail("wrong: product starts at 0").starts_with("TestSum_Product/test_num__0 failed"));
}

/// HumanEval-X's Go, released, assembled as CodeGeeX assembles it (test_setup, and the
/// listed packages the code names): every canonical solution passes but, now and then,
/// Go/95's, which depends on the order Go iterates a map in (it fails under CodeGeeX's
/// harness as often); and forgeries that pass that harness fail.
///
/// Regression: an honest answer whose comment said "one at a time." had `time` imported
/// (CodeGeeX adds a listed package wherever `name.` is in the completion's text) and did
/// not build, "imported and not used"; a package is now added where the code uses it.
#[test]
fn humaneval_x_go_canonical_solutions_pass_and_forgeries_fail() {
    let Some(problems) = shared_benchmark("humaneval-x/humaneval_go.jsonl.gz") else { return };
    let canonical = finish(passk(["validate", "--problems"]).arg(&problems).args(["--timeout", "20"]));
    let all = canonical.code == Some(0) && canonical.stdout.contains("164 pass");
    let but_95 = canonical.code == Some(4)
        && canonical.stdout.contains("163 pass, 1 fail")
        && canonical.stdout.lines().any(|line| line.contains("fails     Go/95 "));
    assert!(all || but_95, "{}\n{}", canonical.stdout, canonical.stderr);
    for result in judged_samples(&problems, &named_samples("go-humaneval-x.jsonl"), "10") {
        if result["name"].as_str().unwrap().starts_with("honest") {
            assert_eq!(result["status"], "passed", "{result}");
        } else {
            assert!(result["status"] == "failed" || result["status"] == "compile-error", "{result}");
        }
    }
}

/// Guards against a Rust verdict that rests on the exit status of one program holding
/// the candidate and the tests (MultiPL-E's `main` of `assert_eq!`s): the candidate's
/// code is built with a main that serves calls of its entry point, the tests with a
/// stand-in for it in the judge, and only values cross. Each forgery of
/// `rust-multipl-e.jsonl` (an exit, an abort, a panic hook that exits, an `.init_array`
/// constructor, its own `assert_eq!`, its own `main`, reading files and /proc, frames
/// written on every descriptor, an answer stream forged by hand, signals) fails, none as
/// `infrastructure`; right answers with the suites' types (HashMap, tuples of Options,
/// vectors of tuples, md5's crate) pass, wrong ones fail with the assertion's message.
#[test]
fn rust_forgeries_fail_and_honest_completions_pass() {
    let Some(problems) = shared_benchmark("multipl-e/humaneval-rs.jsonl.gz") else { return };
    let results = judged_samples(&problems, &named_samples("rust-multipl-e.jsonl"), "10");
    assert_statuses(&results, |name| match name {
        "right" => "passed",
        "broken" | "forgery: own_main" | "forgery: export_name_main" => "compile-error",
        "forgery: hang" | "forgery: sleep_forever" => "timeout",
        // The process's end, named by the driver (killed by a signal).
        "forgery: abort" => "killed",
        _ => "failed",
    });
    let detail = |name: &str| named(&results, name)["detail"].as_str().unwrap().to_owned();
    assert_eq!(
        detail("forgery: early_exit"),
        "the candidate's process ended before it answered call 1 of has_close_elements (exited with status 0)"
    );
    assert!(detail("forgery: macro_assert_eq").starts_with("assertion failed: `(left == right)`"));
}

/// HumanEval-X's Rust, released, assembled as CodeGeeX assembles it (the declaration's
/// `use`s of rand, regex and md5, which passk builds once from Debian's sources): every
/// canonical solution passes but two that cannot be judged, each saying why: Rust/32's
/// tests are commented out (every sample would pass them), and Rust/137's signature has a
/// type the candidate defines. Functions the tests call beside the entry point (Rust/38's
/// encode_cyclic) are served too.
#[test]
fn humaneval_x_rust_canonical_solutions_pass() {
    let Some(problems) = shared_benchmark("humaneval-x/humaneval_rust.jsonl.gz") else { return };
    let canonical = finish(passk(["validate", "--problems"]).arg(&problems).args(["--timeout", "20"]));
    assert!(canonical.stdout.contains("162 pass"), "{}\n{}", canonical.stdout, canonical.stderr);
    for task in ["Rust/32", "Rust/137"] {
        assert!(
            canonical.stdout.lines().any(|line| line.contains(task) && line.contains("unjudgeable")),
            "{}",
            canonical.stdout
        );
    }
    let results = judged_samples(&problems, &named_samples("rust-humaneval-x.jsonl"), "20");
    let status = |name: &str| results.iter().find(|result| result["name"] == name).unwrap()["status"].clone();
    assert_eq!(status("right_other_helper"), "passed");
    assert_eq!(status("wrong_any"), "failed");
    assert_eq!(status("panics"), "failed");
    assert_eq!(status("no_encode"), "compile-error");
}

/// Regression: where no control group bounds a sample's memory (an unprivileged user,
/// a container with Docker's default flags), each process's address space is bounded
/// instead, and a JVM sized for the machine (its heap, a gigabyte for classes, and each
/// thread's deep stack) did not start in it: every Java sample failed, a right one as
/// "ended before it answered", and the README told Docker users `--memory-limit 0`. The
/// JVM is now sized from the limit (languages.toml's `address_limited`), and Java's
/// standard-input and function samples are judged right at the default limit and at
/// 512 MiB, the compiler and the tests' program included.
#[test]
fn java_runs_under_an_address_space_limit() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root, to run passk as a user the host gives no control group");
        return;
    }
    let fixture = passk_tests::repo_root().join("tests/end_to_end/samples");
    let problems = passk_tests::read_jsonl(&fixture.join("text-length-problems.jsonl"));
    let java = |record: &&Value| record["task_id"] == "text_length/java";
    let functions = passk_tests::read_jsonl(&fixture.join("text-length.jsonl"));
    let cache = tempfile::tempdir().unwrap();
    std::fs::set_permissions(cache.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let cache = cache.path().to_str().unwrap();
    for limit in ["4096", "512"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        write_jsonl(&dir.path().join("problems.jsonl"), &problems.iter().filter(java).cloned().collect::<Vec<_>>());
        write_jsonl(&dir.path().join("samples.jsonl"), &functions.iter().filter(java).cloned().collect::<Vec<_>>());
        let mut command =
            passk(["evaluate", "samples.jsonl", "--problems", "problems.jsonl", "--k", "1", "--no-dedup"]);
        command.current_dir(dir.path()).args(["--memory-limit", limit, "--timeout", "10", "--cache-dir", cache]);
        passk_tests::as_unprivileged_user(&mut command);
        let finished = finish(&mut command);
        assert_eq!(finished.code, Some(0), "{}{}", finished.stdout, finished.stderr);
        let line = |name: &str| finished.stdout.lines().find(|line| line.starts_with(name)).unwrap_or("").to_owned();
        if !line("  cgroups").contains("none (") {
            eprintln!("skipped: this host gives an unprivileged user a control group: {}", line("  cgroups"));
            return;
        }
        assert!(line("  limits").contains(&format!("{limit} MiB address space per process")), "{}", finished.stdout);
        for result in passk_tests::read_jsonl(&dir.path().join("samples.jsonl_results.jsonl")) {
            let expected = if result["name"] == "java: right" { "passed" } else { "failed" };
            assert_eq!(result["status"], expected, "at {limit} MiB: {result}");
        }
        let mut command = passk(["evaluate", "--k", "1", "--partial", "--no-dedup", "--memory-limit", limit]);
        command.args(["--cache-dir", cache]).current_dir(dir.path());
        passk_tests::as_unprivileged_user(&mut command);
        let programs = [sample("java", JAVA_RIGHT), sample("java", &JAVA_RIGHT.replace("2 *", "3 *"))];
        let (finished, results) = evaluate_samples(command, dir.path(), &doubling_problem(), &programs);
        assert_eq!(statuses(&results), ["passed", "failed"], "at {limit} MiB: {}", finished.stderr);
    }
}

/// Regression: a relative `--cache-dir` reached the toolchain's commands as it was, and
/// they run in the sandbox's directory, where Java's wire (built into the cache) was not
/// found: every Java function sample was a `compile-error`, a right one included.
#[test]
fn a_relative_cache_dir_reaches_the_compiler() {
    let fixture = passk_tests::repo_root().join("tests/end_to_end/samples");
    let java = |record: &&Value| record["task_id"] == "text_length/java";
    let problems = passk_tests::read_jsonl(&fixture.join("text-length-problems.jsonl"));
    let samples = passk_tests::read_jsonl(&fixture.join("text-length.jsonl"));
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("problems.jsonl"), &problems.iter().filter(java).cloned().collect::<Vec<_>>());
    write_jsonl(&dir.path().join("samples.jsonl"), &samples.iter().filter(java).cloned().collect::<Vec<_>>());
    let mut command = passk(["evaluate", "samples.jsonl", "--problems", "problems.jsonl", "--k", "1", "--no-dedup"]);
    let finished = finish(command.current_dir(dir.path()).args(["--timeout", "10", "--cache-dir", "cache"]));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(dir.path().join("cache/prebuilt").is_dir(), "the cache is where it was asked to be");
    // Regression: the one-time build was told by a log line (a timestamp, `WARN`, the
    // module's path) rather than in the words of passk's other messages.
    let told = finished.stderr.lines().find(|line| line.contains("building what java's programs use into"));
    assert!(told.is_some_and(|line| line.starts_with("building what java's")), "{}", finished.stderr);
    for result in passk_tests::read_jsonl(&dir.path().join("samples.jsonl_results.jsonl")) {
        let expected = if result["name"] == "java: right" { "passed" } else { "failed" };
        assert_eq!(result["status"], expected, "{result}");
    }
}

/// Regression: APPS's and LiveCodeBench's harnesses put Python's imports before every
/// program (their preamble), and passk put them before programs in every language: a
/// right C++ answer was a `compile-error` ("‘import’ does not name a type"), a right
/// JavaScript one a SyntaxError. A program in another language runs as it is; Python's
/// still gets the preamble (an honest program may use what it imports without importing
/// it).
#[test]
fn the_suites_python_preamble_is_for_python_programs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let answer =
        |language: &str, solution: &str| json!({"task_id": "4000", "language": language, "solution": solution});
    let samples = [
        answer("cpp", "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n"),
        answer(
            "javascript",
            "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
        ),
        answer("python", "print(sum(map(int, sys.stdin.read().split())))\n"),
    ];
    let evaluate = passk(["evaluate", "--k", "1", "--partial", "--restart", "--no-dedup"]);
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &format_fixture("apps.jsonl"), &samples);
    assert_eq!(statuses(&results), ["passed", "passed", "passed"], "{}\n{results:#?}", finished.stderr);
}

/// Regression: the judge's address space is bounded by the sample's memory limit, and
/// the tests' programs it builds and runs inherited that bound: at `--memory-limit 512`
/// Go's compiler and programs (which reserve 800 MiB of address space), rustc, javac and
/// tsc could not start, and every function completion in those languages was
/// `unjudgeable`, "the problem's tests do not compile". They now run under the judge's
/// hard limit (and the sample's control group), and every language is judged right.
#[test]
fn a_small_memory_limit_leaves_the_tests_programs_buildable() {
    let fixture = passk_tests::repo_root().join("tests/end_to_end/samples");
    let dir = tempfile::tempdir().unwrap();
    let mut evaluate = passk(["evaluate", "--k", "1", "--no-dedup", "--restart", "--memory-limit", "512"]);
    evaluate.args(["--timeout", "10"]);
    let samples = passk_tests::read_jsonl(&fixture.join("text-length.jsonl"));
    let (finished, results) =
        evaluate_samples(evaluate, dir.path(), &fixture.join("text-length-problems.jsonl"), &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(results.len(), samples.len());
    for result in &results {
        let name = result["name"].as_str().unwrap();
        let expected: &[&str] = if name.ends_with(": right") {
            &["passed"]
        } else if name.ends_with(": wrong") {
            &["failed"]
        } else {
            &["failed", "error"]
        };
        assert!(expected.contains(&result["status"].as_str().unwrap()), "{result}");
    }
}

const TYPESCRIPT_RIGHT: &str = "declare const require: any;\n\
    const lines: string[] = require('fs').readFileSync(0, 'utf8').trim().split('\\n');\n\
    for (let i = 1; i <= Number(lines[0]); i++) console.log(String(2 * Number(lines[i])));\n";

/// At level full javac and tsc are compilers kept running for each worker's builds
/// (sandbox/passk_driver/resident.py), and each build must still be what a compiler
/// started for it alone makes of it: a TypeScript sample that widened `Number` for itself
/// leaves the next one's `Number` as the library declares it; the compiler reads no file
/// but the library's (a `/// <reference path>` to /etc/passwd is not found); a source
/// that crashes the compiler is a `compile-error` and one that makes javac infer without
/// end a `compile-timeout`, each followed by builds that pass; and no candidate sees the
/// compilers among the processes in its /proc, where it could read or patch their memory
/// to pass a later sample.
#[test]
fn resident_compilers_keep_builds_apart_and_out_of_the_candidates_reach() {
    let dir = tempfile::tempdir().unwrap();
    let widened = format!(
        "interface Number {{ twice(): number }}\nNumber.prototype.twice = function (this: number) {{ return 2 * this; }};\n{}",
        TYPESCRIPT_RIGHT.replace("String(2 * Number(lines[i]))", "String(Number(lines[i]).twice())")
    );
    let unwidened = TYPESCRIPT_RIGHT.replace("String(2 * Number(lines[i]))", "String(Number(lines[i]).twice())");
    // Deeper than a compiler's stack, whatever the limits size it from.
    let nested = |open: &str, close: &str| format!("{}1{}", open.repeat(200_000), close.repeat(200_000));
    // Each `m(b ? ... : null)` doubles the overloads javac tries: twelve levels take it
    // half a minute, sixteen half an hour.
    let inferred = (0..16).fold("null".to_owned(), |inner, _| format!("m(b ? {inner} : null)"));
    let endless = format!(
        "import java.util.*;\npublic class Main {{ static <T> List<T> m(T f) {{ return null; }}\n\
         static <T> List<T> m(List<T> f) {{ return null; }}\n\
         public static void main(String[] a) {{ boolean b = a.length > 0; Object o = {inferred}; }} }}\n"
    );
    let looking = "import java.nio.file.*;\nimport java.util.*;\npublic class Main { public static void main(String[] a) \
        throws Exception { boolean seen = false; try (DirectoryStream<Path> all = Files.newDirectoryStream(Paths.get(\"/proc\"))) \
        { for (Path p : all) { try { String line = new String(Files.readAllBytes(p.resolve(\"cmdline\"))); \
        if (line.contains(\"PasskCompiler\") || line.contains(\"ts_compile\")) seen = true; } catch (Exception e) {} } } \
        Scanner s = new Scanner(System.in); int t = s.nextInt(); while (t-- > 0) System.out.println((seen ? 3 : 2) * s.nextLong()); } }\n";
    let samples = [
        sample("typescript", &widened),
        sample("typescript", &unwidened),
        sample("typescript", &format!("/// <reference path=\"/etc/passwd\" />\n{TYPESCRIPT_RIGHT}")),
        // Regression: the library's files were taken to have no errors among themselves,
        // and a candidate's `/// <reference lib>` brought in two that conflict, which tsc
        // fails and passk passed.
        sample("typescript", &format!("/// <reference lib=\"webworker\" />\n{TYPESCRIPT_RIGHT}")),
        sample("typescript", &format!("const o = {};\n{TYPESCRIPT_RIGHT}", nested("(", ")"))),
        sample("typescript", TYPESCRIPT_RIGHT),
        sample("java", looking),
        sample("java", &endless),
        sample("java", &format!("{JAVA_RIGHT}class Deep {{ static Object o = {}; }}\n", nested("(", ")"))),
        sample("java", JAVA_RIGHT),
    ];
    let started = std::time::Instant::now();
    let (finished, results) = run(dir.path(), &samples, &["--jobs", "1", "--compile-timeout", "10"]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(
        statuses(&results),
        [
            "passed",
            "compile-error",
            "compile-error",
            "compile-error",
            "compile-error",
            "passed",
            "passed",
            "compile-timeout",
            "compile-error",
            "passed"
        ],
        "{results:#?}"
    );
    let detail = |at: usize| results[at]["detail"].as_str().unwrap().to_owned();
    assert!(detail(1).contains("error TS2339: Property 'twice' does not exist on type 'number'"), "{}", detail(1));
    assert!(detail(2).contains("Could not resolve the path '/etc/passwd'"), "{}", detail(2));
    assert!(detail(3).contains("error TS6200"), "{}", detail(3));
    assert!(started.elapsed().as_secs() < 120, "the endless build was stopped at its limit");
    let toolchains = finished.stdout.lines().find(|line| line.trim_start().starts_with("toolchains")).unwrap_or("");
    assert_eq!(
        toolchains.matches("its compiler kept running for each worker's builds, out of the candidates' sight").count(),
        2,
        "{toolchains}"
    );
}

/// Below level full a candidate runs as its compilers' user and could reach a compiler
/// kept running through /proc: every build starts its own, and the summary says so.
#[test]
fn below_level_full_each_build_starts_its_compiler() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &[sample("typescript", TYPESCRIPT_RIGHT), sample("java", JAVA_RIGHT)]);
    let mut command = std::process::Command::new(passk_tests::repo_root().join("tests/support/refuse-namespaces"));
    command.arg(passk_tests::passk_binary()).stdin(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.arg("evaluate").arg(&samples).arg("--problems").arg(doubling_problem());
    command.args(["--k", "1", "--partial", "--jobs", "1", "--python", "/usr/bin/python3", "--results"]);
    command.arg(dir.path().join("results.jsonl"));
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert!(finished.stdout.contains("sandbox       uid\n"), "{}", finished.stdout);
    let toolchains = finished.stdout.lines().find(|line| line.trim_start().starts_with("toolchains")).unwrap_or("");
    assert_eq!(
        toolchains.matches("its compiler started for each build (kept running at level full only)").count(),
        2,
        "{toolchains}"
    );
    let results = passk_tests::read_jsonl(&dir.path().join("results.jsonl"));
    assert_eq!(statuses(&results), ["passed", "passed"], "{results:#?}");
}

/// Regression: the resident tsc lived outside the samples' control groups with no bound
/// of its own, and a build that made it hold 870 MiB passed under `--memory-limit 200`.
/// Its address space is bounded by the limit now, and a build it cannot hold is built
/// again by a tsc of its own in the sample's group, where it runs out of memory as it
/// would there.
#[test]
fn a_build_is_bounded_by_the_memory_limit_whichever_compiler_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let large = format!("const held = [{}];\n{TYPESCRIPT_RIGHT}", "0,".repeat(3_000_000));
    let samples = [sample("typescript", &large), sample("typescript", TYPESCRIPT_RIGHT)];
    let (finished, results) = run(dir.path(), &samples, &["--jobs", "1", "--memory-limit", "700"]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(statuses(&results), ["compile-error", "passed"], "{results:#?}");
    let detail = results[0]["detail"].as_str().unwrap();
    assert!(detail.starts_with("the build ran out of memory"), "{detail}");
}

/// Regression: a resident compiler's start (node parsing TypeScript's library, seconds
/// on a loaded machine) was charged to the first build; under `--compile-timeout 2`
/// that build timed out, which stopped the compiler, so that the next build started it
/// again and timed out too: every sample was `compile-timeout`. The start is outside any
/// build's limit now, the tests' build's included.
#[test]
fn a_tight_compile_timeout_leaves_the_compilers_start_out() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Value> =
        (0..4).map(|at| sample("typescript", &format!("// answer {at}\n{TYPESCRIPT_RIGHT}"))).collect();
    let (finished, results) = run(dir.path(), &samples, &["--jobs", "2", "--compile-timeout", "2"]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(statuses(&results), ["passed"; 4], "{results:#?}");
    let Some(problems) = shared_benchmark("multipl-e/humaneval-ts.jsonl.gz") else { return };
    let completions = [("honest", "  return number % 1.0;\n}\n"), ("wrong", "  return 0;\n}\n")];
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--no-dedup", "--partial"]);
    evaluate.args(["--jobs", "1", "--compile-timeout", "2"]);
    let samples: Vec<Value> = completions
        .iter()
        .map(|(name, completion)| json!({"task_id": "HumanEval_2_truncate_number", "completion": completion, "name": name}))
        .collect();
    let (finished, results) = evaluate_samples(evaluate, dir.path(), &problems, &samples);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    assert_eq!(statuses(&results), ["passed", "failed"], "{results:#?}");
}
