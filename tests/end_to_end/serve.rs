//! `passk serve`, driven by the clients its users have: SandboxFusion's own client from
//! PyPI, verl's reward calls as verl makes them, and curl. A trainer's reward is decided
//! by these answers, so each way they could mislead it is tried: a program reaching
//! out of its directory, a fault of the machine, a full queue, a shutdown mid-request.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::time::{Duration, Instant};

use passk_tests::server::{curl, post_json, run_client, Server};
use passk_tests::{finish, humaneval_dir, machine_to_myself, passk, read_jsonl, repo_root, write_jsonl};
use serde_json::{json, Value};

/// The SandboxFusion language names of the languages passk runs, with a program in each
/// that reads a number and prints its double, and exits 0.
const DOUBLERS: [(&str, &str); 9] = [
    ("python", "print(int(input()) * 2)"),
    ("pytest", "def test_double():\n    assert 2 * 21 == 42\n"),
    ("cpp", "#include <iostream>\nint main() { long n; std::cin >> n; std::cout << n * 2 << std::endl; }\n"),
    (
        "java",
        "import java.util.Scanner;\npublic class Main { public static void main(String[] a) { \
         System.out.println(new Scanner(System.in).nextLong() * 2); } }\n",
    ),
    ("nodejs", "const n = Number(require('fs').readFileSync(0, 'utf8').trim()); console.log(n * 2);\n"),
    (
        "typescript",
        "declare const require: any;\nconst text: string = require('fs').readFileSync(0, 'utf8');\n\
         console.log(Number(text.trim()) * 2);\n",
    ),
    ("go", "package main\nimport \"fmt\"\nfunc main() { var n int; fmt.Scan(&n); fmt.Println(n * 2) }\n"),
    (
        "rust",
        "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); \
         let n: i64 = s.trim().parse().unwrap(); println!(\"{}\", n * 2); }\n",
    ),
    ("bash", "read n; echo $((n * 2))\n"),
];

fn sandbox_fusion_client(server: &Server, calls: &Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (calls_path, answers) = (dir.path().join("calls.json"), dir.path().join("answers.json"));
    std::fs::write(&calls_path, calls.to_string()).unwrap();
    run_client("sandbox_fusion_client.py", &[OsStr::new(&server.base), calls_path.as_os_str(), answers.as_os_str()]);
    serde_json::from_str(&std::fs::read_to_string(&answers).unwrap()).unwrap()
}

#[test]
fn sandbox_fusions_own_client_runs_a_program_in_every_language_with_its_results() {
    // Debian's pytest, which candidates may import with what it imports.
    let mut args = vec!["--jobs", "2", "--python", "/usr/bin/python3"];
    for package in ["pytest", "_pytest", "pluggy", "iniconfig", "packaging", "attr"] {
        args.extend(["--allow-package", package]);
    }
    let server = Server::start(&args);
    let mut calls: Vec<Value> = DOUBLERS
        .iter()
        .map(|(language, code)| {
            json!({"name": language, "request": {"code": code, "language": language, "stdin": "21\n",
                                               "compile_timeout": 60, "run_timeout": 20}})
        })
        .collect();
    calls.extend([
        json!({"name": "compile error", "request": {"code": "int main() { return x; }", "language": "cpp"}}),
        json!({"name": "exit status", "request": {"code": "import sys\nprint('so far')\nsys.exit(3)", "language": "python"}}),
        json!({"name": "time limit", "request": {"code": "while True:\n    pass", "language": "python", "run_timeout": 1}}),
        json!({"name": "failing pytest", "request": {"code": "def test_wrong():\n    assert 1 == 2\n", "language": "pytest"}}),
        json!({"name": "async", "async": true, "request": {"code": "print('from async')", "language": "python"}}),
        json!({"name": "unknown language", "request": {"code": "x", "language": "lua"}}),
        json!({"name": "files", "request": {
            "code": "data = open('in/data.txt').read()\nopen('out.txt', 'w').write(data.upper())\nprint(len(data))",
            "language": "python",
            "files": {"in/data.txt": "aGVsbG8gZmlsZXM="},
            "fetch_files": ["out.txt", "never-written.txt"],
        }}),
    ]);
    let answers = sandbox_fusion_client(&server, &Value::Array(calls));

    for (language, _) in DOUBLERS {
        let answer = &answers[language];
        assert_eq!(answer["status"], "Success", "{language}: {answer:#}");
        assert_eq!(answer["summary"], "Success", "{language}");
        let run = &answer["run_result"];
        assert_eq!((&run["status"], &run["return_code"]), (&json!("Finished"), &json!(0)), "{language}: {answer:#}");
        if language != "pytest" {
            assert_eq!(run["stdout"].as_str().unwrap().trim(), "42", "{language}: {answer:#}");
        }
    }
    for compiled in ["cpp", "java", "go", "rust"] {
        assert_eq!(
            answers[compiled]["compile_result"]["return_code"], 0,
            "{compiled} has a build: {:#}",
            answers[compiled]
        );
    }
    assert_eq!(answers["python"]["compile_result"], Value::Null, "an interpreted program has no build");

    let compile_error = &answers["compile error"];
    assert_eq!(compile_error["status"], "Failed");
    assert_eq!(compile_error["summary"], "compile-failed", "{compile_error:#}");
    assert!(compile_error["compile_result"]["stderr"].as_str().unwrap().contains("was not declared"));
    assert_eq!(compile_error["run_result"], Value::Null, "a program that does not build is not run");

    let exit = &answers["exit status"];
    assert_eq!((&exit["status"], &exit["summary"]), (&json!("Failed"), &json!("run-failed")));
    assert_eq!((&exit["run_result"]["return_code"], &exit["run_result"]["stdout"]), (&json!(3), &json!("so far\n")));

    let late = &answers["time limit"];
    assert_eq!((&late["summary"], &late["run_result"]["status"]), (&json!("run-timeout"), &json!("TimeLimitExceeded")));
    assert!(late["run_result"]["execution_time"].as_f64().unwrap() < 3.0, "the limit asked for holds: {late:#}");

    assert_eq!(answers["failing pytest"]["summary"], "run-failed", "{:#}", answers["failing pytest"]);
    assert_eq!(answers["async"]["run_result"]["stdout"], "from async\n");
    let unknown = answers["unknown language"]["raised"].as_str().unwrap();
    // The client shows the body as it came, its quotes escaped.
    assert!(
        unknown.contains("400") && unknown.contains(r#"language \"lua\" is not one this server runs"#),
        "{unknown}"
    );

    let files = &answers["files"];
    assert_eq!(files["run_result"]["stdout"], "11\n", "the file was in place: {files:#}");
    assert_eq!(files["files"], json!({"out.txt": "SEVMTE8gRklMRVM="}), "the file written came back, and only it");
}

/// HumanEval's programs, as a trainer sends them: the prompt, the completion, the tests
/// and the call of `check`, one program per sample.
fn humaneval_cases(dir: &std::path::Path) -> (Vec<Value>, Vec<Value>) {
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let samples = dir.join("samples.jsonl");
    let verdicts = repo_root().join("tests/verdicts");
    let made = std::process::Command::new("python3")
        .arg(verdicts.join("mutate.py"))
        .arg(&problems)
        .arg(&samples)
        .output()
        .unwrap();
    assert!(made.status.success(), "mutate.py: {}", String::from_utf8_lossy(&made.stderr));
    let reference = dir.join("reference.jsonl");
    let referenced = std::process::Command::new("python3")
        .arg(verdicts.join("reference.py"))
        .args([humaneval_dir(), &problems, &samples, &reference])
        .output()
        .unwrap();
    assert!(referenced.status.success(), "reference.py: {}", String::from_utf8_lossy(&referenced.stderr));
    let problems: BTreeMap<String, Value> = passk_tests::humaneval_problems()
        .into_iter()
        .map(|problem| (problem["task_id"].as_str().unwrap().to_owned(), problem))
        .collect();
    let cases = read_jsonl(&samples)
        .iter()
        .enumerate()
        .map(|(index, sample)| {
            let problem = &problems[sample["task_id"].as_str().unwrap()];
            let program = match sample.get("completion") {
                Some(completion) => format!("{}{}", problem["prompt"].as_str().unwrap(), completion.as_str().unwrap()),
                None => sample["solution"].as_str().unwrap().to_owned(),
            };
            let code = format!(
                "{program}\n{}\ncheck({})",
                problem["test"].as_str().unwrap(),
                problem["entry_point"].as_str().unwrap()
            );
            json!({"id": index, "code": code, "language": "python", "stdin": "", "expected_output": "", "timeout": 3})
        })
        .collect();
    (cases, read_jsonl(&reference))
}

#[test]
fn verls_calls_at_its_concurrency_get_the_reference_verdict_on_every_humaneval_program() {
    let _machine = machine_to_myself();
    let dir = tempfile::tempdir().unwrap();
    let (cases, reference) = humaneval_cases(dir.path());
    let server = Server::start(&["--jobs", "2"]);
    let cases_path = dir.path().join("cases.jsonl");
    write_jsonl(&cases_path, &cases);
    let answers_path = dir.path().join("answers.jsonl");
    let said = run_client(
        "verl_client.py",
        &[OsStr::new(&server.url("/run_code")), cases_path.as_os_str(), answers_path.as_os_str()],
    );
    let answers = read_jsonl(&answers_path);
    assert_eq!(answers.len(), reference.len());
    let mut disagreements = Vec::new();
    for ((answer, reference), case) in answers.iter().zip(&reference).zip(&cases) {
        // verl's reading: a run that finished with status 0 and printed what was due
        // (nothing) passes; -1 would be a call that got no verdict at all.
        assert_ne!(answer["result"], -1, "every call got a verdict: {answer}");
        if (answer["result"] == true) != (reference["passed"] == true) {
            disagreements.push(json!({"case": case["id"], "verl": answer, "reference": reference}));
        }
    }
    assert_eq!(disagreements, Vec::<Value>::new(), "verdicts that differ from the reference");
    let passed = answers.iter().filter(|answer| answer["result"] == true).count();
    assert!(passed > 164 && passed < answers.len() / 2, "a mix of verdicts: {passed} of {}", answers.len());
    let summary: Value = serde_json::from_str(said.lines().last().unwrap()).unwrap();
    eprintln!("verl's calls: {summary}");
    let metrics = curl("GET", &server.url("/metrics"), None, &[]).body;
    assert!(metrics.contains(&format!("passk_verdicts_total{{status=\"passed\"}} {passed}")), "{metrics}");
}

/// Polls `/metrics` until the queue holds `depth` programs.
fn wait_for_depth(server: &Server, depth: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let line = format!("passk_queue_depth {depth}\n");
    while !curl("GET", &server.url("/metrics"), None, &[]).body.contains(&line) {
        assert!(Instant::now() < deadline, "the queue never held {depth}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn slow_call(server: &Server, seconds: f64) -> std::thread::JoinHandle<passk_tests::server::Answer> {
    let url = server.url("/run_code");
    let code = format!("import time\ntime.sleep({seconds})\nprint('slept')");
    std::thread::spawn(move || post_json(&url, &json!({"code": code, "language": "python", "run_timeout": 30})))
}

#[test]
fn a_full_queue_is_a_504_with_retry_after_and_the_queued_program_still_gets_its_verdict() {
    let server = Server::start(&["--jobs", "1", "--queue", "1", "--allow-inline-test-code"]);
    let slow = slow_call(&server, 3.0);
    wait_for_depth(&server, 1);
    let refused = post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python"}));
    assert_eq!(refused.status, 504, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(refused.json()["error"].as_str().unwrap().contains("queue is full"), "{}", refused.body);
    let batch = json!({"problems": [{"task_id": "t", "prompt": "def f():\n", "entry_point": "f",
                                     "test": "def check(c):\n    assert c() == 1\n"}],
                       "samples": [{"task_id": "t", "completion": "    return 1\n"}]});
    assert_eq!(post_json(&server.url("/evaluate"), &batch).status, 504, "a batch waits its turn the same way");
    let slow = slow.join().unwrap();
    assert_eq!((slow.status, slow.json()["run_result"]["stdout"].clone()), (200, json!("slept\n")));
    let after = post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python"}));
    assert_eq!(after.json()["status"], "Success", "room again once the verdict is in");
    let metrics = curl("GET", &server.url("/metrics"), None, &[]).body;
    assert!(metrics.contains("passk_requests_total{endpoint=\"run_code\",code=\"504\"} 1"), "{metrics}");
}

/// Regression: a batch larger than the queue was refused (HTTP 413), so that HumanEval's
/// 1,344 samples needed six requests at the default queue. Now it runs through half the
/// queue, and other callers keep the other half meanwhile.
#[test]
fn a_batch_larger_than_the_queue_runs_through_half_of_it_beside_other_callers() {
    let server = Server::start(&["--jobs", "2", "--queue", "4", "--allow-inline-test-code"]);
    let problems = json!([{"task_id": "t", "prompt": "def f():\n", "entry_point": "f",
                           "test": "def check(c):\n    assert c() == 1\n"}]);
    let samples: Vec<Value> = (0..40)
        .map(|index| {
            let answer = if index % 3 == 0 { 2 } else { 1 };
            json!({"task_id": "t", "completion": format!("    import time\n    time.sleep(0.05)\n    return {answer}  # {index}\n")})
        })
        .collect();
    let batch = {
        let url = server.url("/evaluate");
        let body = json!({"problems": problems, "samples": samples, "k": [1], "stream": true});
        std::thread::spawn(move || post_json(&url, &body))
    };
    wait_for_depth(&server, 2);
    let beside = post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python"}));
    assert_eq!(beside.json()["status"], "Success", "room beside the batch: {}", beside.body);
    let answer = batch.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let lines: Vec<Value> = answer.body.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let last = lines.last().unwrap();
    assert_eq!((&last["done"], &last["judged"]), (&json!(true), &json!(40)), "{last:#}");
    let mut passed: Vec<(u64, bool)> =
        lines[..40].iter().map(|line| (line["index"].as_u64().unwrap(), line["passed"] == true)).collect();
    passed.sort();
    let expected: Vec<(u64, bool)> = (0..40).map(|index| (index, index % 3 != 0)).collect();
    assert_eq!(passed, expected, "every sample judged, each as it deserves");
    assert_eq!(last["scores"]["per_problem"]["t"], json!({"n": 40, "c": 26}));
}

#[test]
fn files_and_fetched_files_stay_inside_the_programs_own_directory() {
    let server = Server::start(&["--jobs", "2"]);
    for (field, path) in
        [("files", "../escape"), ("files", "/tmp/abs"), ("fetch_files", "a/../../b"), ("fetch_files", "/etc/passwd")]
    {
        let request = if field == "files" {
            json!({"code": "print(1)", "language": "python", "files": {path: "AA=="}})
        } else {
            json!({"code": "print(1)", "language": "python", "fetch_files": [path]})
        };
        let answer = post_json(&server.url("/run_code"), &request);
        assert_eq!(answer.status, 400, "{field} {path}: {}", answer.body);
        assert!(answer.body.contains(field), "the error names the field: {}", answer.body);
    }
    // A program that puts links where the files asked for are, to read the server's
    // files and the host's through them.
    let linker = "import os\nos.symlink('/etc/passwd', 'passwd')\nos.symlink('/etc', 'etc')\n\
                  os.symlink('/proc/1/environ', 'environ')\nos.mkfifo('fifo')\nopen('plain', 'w').write('mine')";
    let answer = post_json(
        &server.url("/run_code"),
        &json!({"code": linker, "language": "python",
                "fetch_files": ["passwd", "etc/passwd", "etc/hostname", "environ", "fifo", "plain"]}),
    );
    assert_eq!(answer.json()["status"], "Success", "{}", answer.body);
    assert_eq!(answer.json()["files"], json!({"plain": "bWluZQ=="}), "nothing is read through a link, nor a fifo");

    // A program looks for another request's file while that request runs.
    let secret = passk_tests::unique_marker("secret");
    let holder = {
        let url = server.url("/run_code");
        let encoded = base64_of(&secret);
        std::thread::spawn(move || {
            post_json(
                &url,
                &json!({"code": "import time\ntime.sleep(4)\nprint(open('secret.txt').read())",
                                    "language": "python", "files": {"secret.txt": encoded}}),
            )
        })
    };
    wait_for_depth(&server, 1);
    // The secret is spelt backwards in the seeker's own source, which it would find.
    let backwards: String = secret.chars().rev().collect();
    let seeker = format!(
        "import os\nsecret = {backwards:?}[::-1]\nfound = []\nfor top in ['/tmp', '/proc', '/var/tmp', '/dev/shm', '/run', '/home', '/root']:\n    \
         for root, dirs, files in os.walk(top):\n        if root.count('/') > 6: dirs[:] = []\n        \
         for name in files:\n            try:\n                if secret.encode() in open(os.path.join(root, name), 'rb').read(1 << 16): found.append(os.path.join(root, name))\n            \
         except Exception:\n                pass\nprint(found)"
    );
    let seeking =
        post_json(&server.url("/run_code"), &json!({"code": seeker, "language": "python", "run_timeout": 60}));
    assert_eq!(seeking.json()["run_result"]["stdout"], "[]\n", "another request's file was found: {}", seeking.body);
    let held = holder.join().unwrap();
    assert_eq!(held.json()["run_result"]["stdout"].as_str().unwrap().trim(), secret, "its own program read it");
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The process groups of the server's workers (`passk __sandbox-exec`, each leading
/// its own group).
fn worker_groups(server: &Server) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if parent == Some(server.pid()) && String::from_utf8_lossy(&cmdline).contains("__sandbox-exec") {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_worker_lost_twice_is_a_sandbox_error_never_the_programs_failure() {
    let server = Server::start(&["--jobs", "1"]);
    let call = slow_call(&server, 20.0);
    wait_for_depth(&server, 1);
    let mut killed = Vec::new();
    for round in 0..2 {
        let deadline = Instant::now() + Duration::from_secs(60);
        let group = loop {
            if let Some(group) = worker_groups(&server).into_iter().find(|group| !killed.contains(group)) {
                break group;
            }
            assert!(Instant::now() < deadline, "round {round}: no worker to kill");
            std::thread::sleep(Duration::from_millis(20));
        };
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        killed.push(group);
        if round == 0 {
            // The slot starts a new worker and runs the program again.
            let deadline = Instant::now() + Duration::from_secs(60);
            while !server.stderr().contains("restarting the worker") {
                assert!(Instant::now() < deadline, "the worker was not restarted: {}", server.stderr());
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let answer = call.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = answer.json();
    assert_eq!(answer["status"], "SandboxError", "a fault of the machine is never the program's: {answer:#}");
    assert!(answer["message"].as_str().unwrap().contains("worker"), "{answer:#}");
    assert_eq!(answer["run_result"], Value::Null, "no result is made up");
    let metrics = curl("GET", &server.url("/metrics"), None, &[]).body;
    assert!(metrics.contains("passk_verdicts_total{status=\"infrastructure\"} 1"), "{metrics}");
}

#[test]
fn a_token_guards_every_endpoint_but_the_probes_and_large_bodies_are_refused() {
    let token = passk_tests::unique_marker("token");
    let server = Server::start_with(&["--jobs", "1", "--max-request-size", "1"], &[("PASSK_SERVE_TOKEN", &token)]);
    let body = json!({"code": "print(1)", "language": "python"}).to_string();
    let bearer = format!("Authorization: Bearer {token}");
    let wrong = format!("Authorization: Bearer {token}x");
    let url = server.url("/run_code");
    assert_eq!(curl("POST", &url, Some(body.as_bytes()), &[]).status, 401);
    let refused = curl("POST", &url, Some(body.as_bytes()), &[&wrong]);
    assert_eq!((refused.status, refused.header("www-authenticate")), (401, Some("Bearer")));
    assert_eq!(curl("GET", &server.url("/metrics"), None, &[]).status, 401);
    assert_eq!(curl("POST", &url, Some(body.as_bytes()), &[&bearer]).json()["status"], "Success");
    assert_eq!(curl("GET", &server.url("/healthz"), None, &[]).status, 200);
    assert_eq!(curl("GET", &server.url("/readyz"), None, &[]).status, 200);
    let large = json!({"code": format!("# {}\nprint(1)", "x".repeat(2 << 20)), "language": "python"}).to_string();
    assert_eq!(curl("POST", &url, Some(large.as_bytes()), &[&bearer]).status, 413);
}

#[test]
fn sigterm_answers_the_requests_taken_then_exits_leaving_nothing_behind() {
    let server = Server::start(&["--jobs", "1"]);
    let pid = server.pid();
    let url = server.url("/run_code");
    let call = slow_call(&server, 3.0);
    wait_for_depth(&server, 1);
    let (code, stderr) = server.terminate();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("draining"), "{stderr}");
    let answer = call.join().unwrap();
    assert_eq!(answer.json()["run_result"]["stdout"], "slept\n", "the request taken was answered: {}", answer.body);
    let output = std::process::Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", &url])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "000", "nothing listens any more");
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let parent =
                stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            parent == Some(pid)
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, Vec::<String>::new(), "no process of the server's is left");
}

#[test]
fn evaluate_gives_the_clis_results_and_scores_at_once_and_streamed() {
    let samples_path = repo_root().join("problems/basic-samples.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let cli = finish(
        passk(["evaluate"])
            .arg(&samples_path)
            .args(["--problems", "basic", "--k", "1", "--results"])
            .arg(&results)
            .arg("--summary")
            .arg(&summary),
    );
    assert_eq!(cli.code, Some(0), "{}", cli.stderr);
    let cli_results = read_jsonl(&results);
    let cli_summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();

    let server = Server::start(&["--jobs", "2", "--problems", "basic"]);
    let samples = read_jsonl(&samples_path);
    let answer = post_json(&server.url("/evaluate"), &json!({"problems": "basic", "samples": samples, "k": [1]}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = answer.json();
    let statuses = |lines: &[Value]| lines.iter().map(|line| line["status"].clone()).collect::<Vec<_>>();
    let served = answer["results"].as_array().unwrap();
    assert_eq!(statuses(served), statuses(&cli_results), "the service's verdicts are the CLI's, in the samples' order");
    let details = |lines: &[Value]| lines.iter().map(|line| line["detail"].clone()).collect::<Vec<_>>();
    assert_eq!(details(served), details(&cli_results));
    assert_eq!(answer["scores"]["pass_at_k"]["pass@1"], cli_summary["pass@1"], "{:#}", answer["scores"]);

    let streamed = post_json(
        &server.url("/evaluate"),
        &json!({"problems": "basic", "samples": samples, "k": [1], "stream": true}),
    );
    assert_eq!(streamed.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = streamed.body.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let (last, lines) = lines.split_last().unwrap();
    assert_eq!((last["done"].clone(), last["judged"].clone()), (json!(true), json!(samples.len())));
    assert_eq!(last["scores"]["pass_at_k"], answer["scores"]["pass_at_k"]);
    let mut by_index: Vec<Value> = vec![Value::Null; samples.len()];
    for line in lines {
        by_index[line["index"].as_u64().unwrap() as usize] = line["status"].clone();
    }
    assert_eq!(by_index, statuses(&cli_results), "each streamed line says which sample it is");

    let unknown = post_json(&server.url("/evaluate"), &json!({"problems": "humaneval", "samples": samples}));
    assert_eq!(unknown.status, 404);
    assert!(unknown.body.contains("it loaded basic"), "{}", unknown.body);
    let stray = post_json(
        &server.url("/evaluate"),
        &json!({"problems": "basic", "samples": [{"task_id": "basic/999", "completion": ""}]}),
    );
    assert_eq!(stray.status, 400);
    assert!(stray.body.contains("samples:1") && stray.body.contains("basic/999"), "names the sample: {}", stray.body);
}

#[test]
fn evaluate_judges_problems_given_inline_with_asserts_calls_and_standard_input_pairs() {
    let server = Server::start(&["--jobs", "2", "--allow-inline-test-code"]);
    let evaluate = |problems: Value, samples: Value| {
        let answer = post_json(&server.url("/evaluate"), &json!({"problems": problems, "samples": samples, "k": [1]}));
        assert_eq!(answer.status, 200, "{}", answer.body);
        answer.json()
    };
    let statuses = |answer: &Value| -> Vec<String> {
        answer["results"].as_array().unwrap().iter().map(|line| line["status"].as_str().unwrap().to_owned()).collect()
    };
    // MBPP's asserts.
    let mbpp = json!([{"task_id": 1, "text": "Add two numbers.", "code": "def add(a, b):\n    return a + b",
                       "test_list": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
                       "test_setup_code": "", "challenge_test_list": []}]);
    let answer = evaluate(
        mbpp,
        json!([{"task_id": 1, "completion": "def add(a, b):\n    return a + b"},
                                       {"task_id": 1, "completion": "def add(a, b):\n    return a - b"}]),
    );
    assert_eq!(statuses(&answer), ["passed", "failed"]);
    assert_eq!(answer["scores"]["pass_at_k"]["pass@1"], 0.5);
    // APPS's calls with expected values, and its standard-input pairs.
    let apps = json!([
        {"problem_id": 7, "question": "Double it.", "starter_code": "",
         "input_output": json!({"fn_name": "double", "inputs": [[1], [5]], "outputs": [2, 10]}).to_string()},
        {"problem_id": 8, "question": "Sum a line.", "starter_code": "",
         "input_output": json!({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]}).to_string()},
    ]);
    let answer = evaluate(
        apps,
        json!([
            {"task_id": 7, "solution": "def double(x):\n    return 2 * x"},
            {"task_id": 7, "solution": "def double(x):\n    return x + 1"},
            {"task_id": 8, "solution": "print(sum(map(int, input().split())))"},
            {"task_id": 8, "solution": "print(1)"},
            {"task_id": 8, "solution": "#include <cstdio>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);}",
             "language": "cpp"},
        ]),
    );
    assert_eq!(statuses(&answer), ["passed", "failed", "passed", "failed", "passed"]);
    let refused = post_json(&server.url("/evaluate"), &json!({"problems": [{"task_id": "x"}], "samples": []}));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("the request's problems:1"), "names the record: {}", refused.body);
}

/// A reward model's forgeries: `run_code` answers what the program did, as SandboxFusion
/// does, so a program that exits 0 before its tests is `Success` there; `/evaluate` runs
/// the tests out of the candidate's reach, and none of these passes it.
#[test]
fn forgeries_that_fool_run_code_fail_in_evaluate() {
    let server = Server::start(&["--jobs", "2", "--problems", "basic"]);
    let forgeries = [
        "    import os\n    os._exit(0)\n",
        "    import sys\n    sys.exit(0)\n",
        "    import builtins\n    builtins.AssertionError = type('Quiet', (BaseException,), {})\n    return values\n",
        "    import atexit, os\n    atexit.register(lambda: os._exit(0))\n    return values\n",
        "    raise SystemExit(0)\n",
    ];
    let problem = read_jsonl(&repo_root().join("problems/basic.jsonl")).remove(0);
    let early_exit = format!(
        "{}{}\n{}\ncheck({})\n",
        problem["prompt"].as_str().unwrap(),
        forgeries[0],
        problem["test"].as_str().unwrap(),
        problem["entry_point"].as_str().unwrap()
    );
    let answer = post_json(&server.url("/run_code"), &json!({"code": early_exit, "language": "python"}));
    assert_eq!(answer.json()["status"], "Success", "run_code judges by the exit status: {}", answer.body);

    let samples: Vec<Value> =
        forgeries.iter().map(|completion| json!({"task_id": "basic/0", "completion": completion})).collect();
    let answer = post_json(&server.url("/evaluate"), &json!({"problems": "basic", "samples": samples, "k": [1]}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = answer.json();
    for line in answer["results"].as_array().unwrap() {
        assert_eq!(line["passed"], false, "a forgery passed: {line:#}");
        assert_ne!(line["status"], "infrastructure", "a forgery is the model's failure: {line:#}");
    }
    assert_eq!(answer["scores"]["pass_at_k"]["pass@1"], 0.0);
}

/// The README's block of commands under the comment naming this file, run as written.
fn readme_block() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let marker = "<!-- tests/end_to_end/serve.rs runs this block as written -->\n```sh\n";
    let start = readme.find(marker).expect("the README's serve section has its tested block") + marker.len();
    readme[start..][..readme[start..].find("```\n").unwrap()].to_owned()
}

#[test]
fn the_readmes_commands_work_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let free = std::net::TcpListener::bind("127.0.0.1:8080").map(drop);
    assert!(free.is_ok(), "the README's commands listen on port 8080, which something else holds here: {free:?}");
    let binaries = passk_tests::passk_binary().parent().unwrap().to_owned();
    let path = std::env::join_paths(
        std::iter::once(binaries).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let finished = finish(
        std::process::Command::new("bash")
            .args(["-euo", "pipefail", "-c", &readme_block()])
            .env("PATH", path)
            .current_dir(dir.path()),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    // curl prints the probe's `ready` line, then the two answers one after the other.
    let answers = finished.stdout.strip_prefix("ready\n").expect("the probe said ready first");
    let answers: Vec<Value> =
        serde_json::Deserializer::from_str(answers).into_iter().collect::<Result<_, _>>().expect("two JSON answers");
    assert_eq!(answers.len(), 2, "{answers:#?}");
    assert_eq!(answers[0]["status"], "Success", "{:#}", answers[0]);
    assert_eq!(answers[0]["run_result"]["stdout"], "42\n", "{:#}", answers[0]);
    let passed: Vec<&Value> = answers[1]["results"].as_array().unwrap().iter().map(|line| &line["passed"]).collect();
    assert_eq!(passed, [&json!(false), &json!(true)], "{:#}", answers[1]);
    assert_eq!(answers[1]["scores"]["pass_at_k"]["pass@1"], 0.5, "{:#}", answers[1]);
    assert!(finished.stderr.contains("ready: sandbox"), "the server says what is in force: {}", finished.stderr);
    assert!(std::net::TcpListener::bind("127.0.0.1:8080").is_ok(), "the server is gone once the block ends");
}

/// The load test of the README's numbers, shortened: Debian's wrk at 1, 8 and 64
/// concurrent clients sends every HumanEval program of `tests/verdicts/mutate.py`, and
/// `bench/serve.py` fails if any answer is not HTTP 200 with the reference's verdict.
#[test]
fn under_load_at_1_8_and_64_clients_every_answer_is_the_references() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let finished = finish(
        std::process::Command::new("python3")
            .arg(repo_root().join("bench/serve.py"))
            .args(["--duration", "3", "--concurrency", "1,8,64", "--humaneval"])
            .arg(humaneval_dir())
            .arg("--passk")
            .arg(passk_tests::passk_binary())
            .arg("--json")
            .arg(&report),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let levels = report["levels"].as_array().unwrap();
    assert_eq!(levels.iter().map(|level| level["clients"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 8, 64]);
    for level in levels {
        let passk = &level["servers"]["passk serve"];
        assert!(passk["right"].as_u64().unwrap() > 0, "{level:#}");
        assert_eq!((&passk["wrong"], &passk["not_answered"]), (&json!(0), &json!(0)), "{level:#}");
        assert!(passk["p99_ms"].as_f64().unwrap() >= passk["p50_ms"].as_f64().unwrap(), "{level:#}");
    }
    assert!(finished.stdout.contains("| 64 | passk serve |"), "the README's table: {}", finished.stdout);
}
