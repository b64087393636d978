//! `passk serve` against its own callers: the model being trained may reach it (a
//! trainer that lets rollouts call the reward server), and looks for a verdict that says
//! `Success` or `passed` without earning it, a failure that disappears, or a server that
//! stops answering. Each test is one such attack, and what stops it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use passk_tests::server::{curl, post_json, Server};
use passk_tests::{finish, passk};
use serde_json::{json, Value};

/// The queue's depth, from `/metrics`.
fn depth(server: &Server) -> usize {
    let metrics = curl("GET", &server.url("/metrics"), None, &[]).body;
    let line = metrics.lines().find(|line| line.starts_with("passk_queue_depth ")).expect("the depth is measured");
    line["passk_queue_depth ".len()..].trim().parse().unwrap()
}

/// Every verdict the server counted, of any status.
fn verdicts(server: &Server) -> u64 {
    let metrics = curl("GET", &server.url("/metrics"), None, &[]).body;
    metrics
        .lines()
        .filter(|line| line.starts_with("passk_verdicts_total{"))
        .map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `POST` of `body` that hangs up after `seconds`, before the answer comes.
fn hang_up_after(url: &str, body: &Value, seconds: f64) {
    let finished = finish(
        std::process::Command::new("curl")
            .args(["-s", "-o", "/dev/null", "--max-time", &seconds.to_string(), "-H", "Content-Type: application/json"])
            .args(["--data-binary", &body.to_string(), url]),
    );
    assert_eq!(finished.code, Some(28), "curl gave up on the answer (its time-out's status): {}", finished.stderr);
}

fn run(server: &Server, request: Value) -> Value {
    let answer = post_json(&server.url("/run_code"), &request);
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.json()
}

/// A problem whose tests are code that passes anything, as a rollout would send it.
fn tests_that_pass_anything() -> Value {
    json!([{"task_id": "mine", "prompt": "def f():\n", "entry_point": "f",
            "test": "def check(candidate):\n    pass\n"}])
}

#[test]
fn evaluate_refuses_test_code_given_in_the_request_unless_the_server_allows_it() {
    let server = Server::start(&["--jobs", "1"]);
    let wrong = json!([{"task_id": "mine", "completion": "    return 'wrong'\n"}]);
    let answer =
        post_json(&server.url("/evaluate"), &json!({"problems": tests_that_pass_anything(), "samples": wrong}));
    assert_eq!(answer.status, 400, "a caller's own tests passed its sample: {}", answer.body);
    assert!(answer.body.contains("--allow-inline-test-code") && answer.body.contains("mine"), "{}", answer.body);
    let mbpp = json!([{"task_id": 1, "text": "t", "code": "def f():\n    return 1",
                       "test_list": ["assert True"], "test_setup_code": "", "challenge_test_list": []}]);
    let answer = post_json(
        &server.url("/evaluate"),
        &json!({"problems": mbpp, "samples": [{"task_id": 1, "completion": "def f():\n    return 2"}]}),
    );
    assert_eq!(answer.status, 400, "MBPP's asserts are code too: {}", answer.body);
    // Tests that are data are judged by the server's own code, and taken.
    let pairs = json!([{"problem_id": 8, "question": "Sum a line.", "starter_code": "",
                        "input_output": json!({"inputs": ["1 2\n"], "outputs": ["3\n"]}).to_string()}]);
    let answer = post_json(
        &server.url("/evaluate"),
        &json!({"problems": pairs, "samples": [{"task_id": 8, "solution": "print(4)"}]}),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["results"][0]["passed"], false);
    drop(server);

    let trusting = Server::start(&["--jobs", "1", "--allow-inline-test-code"]);
    let answer =
        post_json(&trusting.url("/evaluate"), &json!({"problems": tests_that_pass_anything(), "samples": wrong}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["results"][0]["passed"], true, "where allowed, the caller's tests decide");
}

#[test]
fn a_program_whose_client_hung_up_keeps_its_room_until_its_verdict() {
    let server = Server::start(&["--jobs", "1", "--queue", "1"]);
    let slow = json!({"code": "import time\ntime.sleep(4)\nprint('done')", "language": "python", "run_timeout": 30});
    hang_up_after(&server.url("/run_code"), &slow, 1.0);
    // The program runs on: its room is still taken, and a second program gets none.
    assert_eq!(depth(&server), 1, "a hung-up client's program gave back room it still uses");
    let refused = post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python"}));
    assert_eq!(refused.status, 504, "{}", refused.body);
    wait_until("the program's room came back", Duration::from_secs(30), || depth(&server) == 0);
    assert_eq!(verdicts(&server), 1, "the hung-up program's verdict was still counted");
    assert_eq!(run(&server, json!({"code": "print(1)", "language": "python"}))["status"], "Success");
}

#[test]
fn a_batch_whose_client_hung_up_starts_no_more_programs() {
    // Half the queue, one program at a time, for a batch larger than the queue.
    let server = Server::start(&["--jobs", "1", "--queue", "2"]);
    let pairs = json!([{"problem_id": 8, "question": "Echo.", "starter_code": "",
                        "input_output": json!({"inputs": ["1\n"], "outputs": ["1\n"]}).to_string()}]);
    let samples: Vec<Value> = (0..30)
        .map(|index| json!({"task_id": 8, "solution": format!("import time\ntime.sleep(0.5)\nprint(input())  # {index}")}))
        .collect();
    for stream in [false, true] {
        let before = verdicts(&server);
        let batch = json!({"problems": pairs, "samples": samples, "stream": stream});
        hang_up_after(&server.url("/evaluate"), &batch, 1.5);
        std::thread::sleep(Duration::from_secs(5));
        let judged = verdicts(&server) - before;
        assert!(judged <= 6, "stream {stream}: {judged} programs ran for a client that had gone");
        wait_until("the batch's room came back", Duration::from_secs(30), || depth(&server) == 0);
    }
}

#[test]
fn sigterm_waits_for_a_program_whose_client_hung_up() {
    let server = Server::start(&["--jobs", "1"]);
    let pid = server.pid();
    let slow = json!({"code": "import time\ntime.sleep(4)\nprint('done')", "language": "python", "run_timeout": 30});
    hang_up_after(&server.url("/run_code"), &slow, 1.0);
    assert_eq!(depth(&server), 1);
    let asked = Instant::now();
    let (code, stderr) = server.terminate();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(asked.elapsed() > Duration::from_secs(2), "the server left before its program's verdict: {stderr}");
    let children = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok()) == Some(pid)
        })
        .count();
    assert_eq!(children, 0, "nothing of the server's is left");
}

/// A connection to the server that sends `head` and then nothing.
fn stall(server: &Server, head: &str) -> TcpStream {
    let address = server.base.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream
}

/// What the server sends on `stream` until it closes it, and how long that took.
fn until_closed(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    (String::from_utf8_lossy(&got).into_owned(), started.elapsed())
}

#[test]
fn slow_clients_are_cut_off_at_the_read_timeout_and_do_not_hold_a_shutdown() {
    let server = Server::start(&["--jobs", "1", "--read-timeout", "2"]);
    // Headers that never end.
    let mut headers = stall(&server, "POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n");
    // A body that never comes whole.
    let mut body = stall(
        &server,
        "POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\"",
    );
    // Headers a byte at a time, each in time for an idle limit, never whole.
    let address = server.base.strip_prefix("http://").unwrap().to_owned();
    let dripping = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        let started = Instant::now();
        for byte in "GET /healthz HTTP/1.1\r\nX-Slow: ".bytes().chain(std::iter::repeat(b'a')) {
            if stream.write_all(&[byte]).is_err() || started.elapsed() > Duration::from_secs(20) {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        started.elapsed()
    });
    let (said, took) = until_closed(&mut headers);
    assert!(took < Duration::from_secs(8), "stalled headers held the connection {took:?}");
    assert!(!said.contains("200"), "{said}");
    let (said, took) = until_closed(&mut body);
    assert!(took < Duration::from_secs(8), "a stalled body held the connection {took:?}");
    assert!(said.starts_with("HTTP/1.1 408"), "a stalled body is answered 408: {said}");
    let dripped = dripping.join().unwrap();
    assert!(dripped < Duration::from_secs(10), "headers sent a byte at a time held the connection {dripped:?}");
    assert_eq!(run(&server, json!({"code": "print(1)", "language": "python"}))["status"], "Success");

    // A shutdown with a stalled client on the line ends all the same.
    let _stalled = stall(&server, "POST /run_code HTTP/1.1\r\nHost: x\r\n");
    let mut body = stall(&server, "POST /run_code HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    let (code, stderr) = server.terminate();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(asked.elapsed() < Duration::from_secs(10), "stalled clients held the shutdown {:?}", asked.elapsed());
    let _ = until_closed(&mut body);
}

#[test]
fn absurd_paths_in_files_and_fetch_files_are_refused_with_the_limit_they_broke() {
    let server = Server::start(&["--jobs", "1"]);
    let deep = vec!["d"; 40].join("/");
    let long_name = "n".repeat(300);
    let long_path = vec!["abcdefghi"; 110].join("/");
    let cases = [
        ("files", long_path.clone(), "at most 1024"),
        ("files", deep.clone(), "at most 32"),
        ("files", long_name.clone(), "longer than 255"),
        ("fetch_files", long_path, "at most 1024"),
        ("fetch_files", deep, "at most 32"),
        ("fetch_files", long_name, "longer than 255"),
    ];
    for (field, path, said) in cases {
        let request = if field == "files" {
            json!({"code": "print(1)", "language": "python", "files": {path.clone(): "AA=="}})
        } else {
            json!({"code": "print(1)", "language": "python", "fetch_files": [path]})
        };
        let answer = post_json(&server.url("/run_code"), &request);
        assert_eq!(answer.status, 400, "{field}: {}", answer.body);
        assert!(answer.body.contains(field) && answer.body.contains(said), "{field}: {}", answer.body);
        assert!(answer.body.len() < 1000, "the error does not echo the whole path back: {}", answer.body);
    }
    let many: serde_json::Map<String, Value> = (0..5000).map(|index| (format!("f{index}"), json!(""))).collect();
    let answer = post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python", "files": many}));
    assert_eq!(answer.status, 400, "{}", answer.body);
    let names: Vec<String> = (0..5000).map(|index| format!("f{index}")).collect();
    let answer =
        post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python", "fetch_files": names}));
    assert_eq!(answer.status, 400, "{}", answer.body);
    // A file where another file's directory must be, or one path spelt twice: either
    // would fail the worker that writes them, as the machine's fault.
    for files in [json!({"a": "AA==", "a/b": "AA=="}), json!({"a/b": "AA==", "./a//b": "AQ=="})] {
        let answer =
            post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python", "files": files}));
        assert_eq!(answer.status, 400, "{files}: {}", answer.body);
    }
    // The deepest and longest that are allowed are put in place.
    let deepest = vec!["d"; 31].join("/") + "/f";
    let answer = run(
        &server,
        json!({"code": format!("print(open({deepest:?}).read())"), "language": "python",
               "files": {deepest.clone(): "aGk="}, "fetch_files": [deepest]}),
    );
    assert_eq!(answer["run_result"]["stdout"], "hi\n", "{answer:#}");
    assert_eq!(answer["status"], "Success", "{answer:#}");
}

/// A program that allocates `mib` MiB and touches it, then says so.
fn allocates(mib: u64) -> String {
    format!("b = bytearray({mib} << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nprint('allocated')")
}

#[test]
fn a_requests_memory_limit_holds_and_never_lifts_the_servers() {
    let server = Server::start(&["--jobs", "1", "--memory-limit", "512"]);
    let within = run(&server, json!({"code": allocates(200), "language": "python"}));
    assert_eq!(within["status"], "Success", "{within:#}");
    // A small limit still lets an honest program start and run.
    for mib in [32, 64] {
        let small = run(&server, json!({"code": allocates(8), "language": "python", "memory_limit_MB": mib}));
        assert_eq!(small["status"], "Success", "{mib} MiB: {small:#}");
    }
    let limited = run(&server, json!({"code": allocates(200), "language": "python", "memory_limit_MB": 64}));
    assert_eq!(limited["status"], "Failed", "a limit of 64 MiB let 200 MiB through: {limited:#}");
    assert_ne!(limited["run_result"]["stdout"], "allocated\n", "{limited:#}");
    // Asking for more than the server gives, or for so much that it would wrap around
    // in bytes, leaves the server's limit in force.
    for asked in [json!(4096), json!(1u64 << 44), json!(i64::MAX)] {
        let lifted = run(&server, json!({"code": allocates(800), "language": "python", "memory_limit_MB": asked}));
        assert_eq!(lifted["status"], "Failed", "memory_limit_MB {asked} lifted the server's 512 MiB: {lifted:#}");
    }
    let refused =
        post_json(&server.url("/run_code"), &json!({"code": "print(1)", "language": "python", "memory_limit_MB": -5}));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("memory_limit_MB"), "{}", refused.body);
}

#[test]
fn a_token_from_a_file_with_its_newline_works_and_one_no_header_can_carry_is_refused_at_start() {
    let server = Server::start_with(&["--jobs", "1"], &[("PASSK_SERVE_TOKEN", "s3cret-token\n")]);
    let body = json!({"code": "print(1)", "language": "python"}).to_string();
    let answer = curl("POST", &server.url("/run_code"), Some(body.as_bytes()), &["Authorization: Bearer s3cret-token"]);
    assert_eq!(answer.status, 200, "the token's trailing newline was kept: {}", answer.body);
    assert_eq!(curl("POST", &server.url("/run_code"), Some(body.as_bytes()), &[]).status, 401);
    drop(server);

    let dir = tempfile::tempdir().unwrap();
    for (token, from_file) in [("two words", true), ("bell\u{7}", false), ("caf\u{e9}", false)] {
        let path = dir.path().join("token");
        std::fs::write(&path, token).unwrap();
        let mut command = passk(["serve", "--listen", "127.0.0.1:0", "--jobs", "1"]);
        if from_file {
            command.arg("--token-file").arg(&path);
        } else {
            command.env("PASSK_SERVE_TOKEN", token);
        }
        let started = Instant::now();
        let finished = finish(command.stdin(std::process::Stdio::null()));
        assert_ne!(finished.code, Some(0), "{token:?}: {}", finished.stderr);
        assert!(finished.stderr.contains("no client can send"), "{token:?}: {}", finished.stderr);
        assert!(started.elapsed() < Duration::from_secs(30), "refused before the workers start");
    }
}

#[test]
fn an_absurd_queue_is_refused_at_start() {
    for queue in ["9223372036854775808", "18446744073709551615", "1000001"] {
        let finished = finish(&mut passk(["serve", "--listen", "127.0.0.1:0", "--queue", queue]));
        assert_eq!(finished.code, Some(2), "--queue {queue}: {}", finished.stderr);
        assert!(finished.stderr.contains("--queue"), "{}", finished.stderr);
        assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    }
    let server = Server::start(&["--jobs", "1", "--queue", "1000000"]);
    // The ready line is kept a moment after it is seen.
    wait_until("the server says its room", Duration::from_secs(5), || {
        server.stderr().contains("room for 1000000 programs")
    });
    assert_eq!(run(&server, json!({"code": "print(1)", "language": "python"}))["status"], "Success");
}

/// What a program submitted to `run_code` tries against the server and the programs
/// beside it; the server answers for each what it did, and stays up for the next.
#[test]
fn run_code_programs_that_attack_the_server_fail_and_leave_it_serving() {
    let server = Server::start(&["--jobs", "2"]);
    let attacks = [
        // Endless output on both streams.
        ("flood", "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n    sys.stderr.write('y' * 65536)\n"),
        // A fork bomb.
        ("fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),
        // Signals to every process it can name, then a failing exit.
        (
            "signals",
            "import os, signal\nfor target in (-1, 0, os.getppid(), 1):\n    try:\n        os.kill(target, signal.SIGKILL)\n    \
             except OSError:\n        pass\nraise SystemExit(3)\n",
        ),
        // A forged answer on its output, then a failing exit.
        (
            "forged answer",
            "print('{\"status\": \"Success\", \"run_result\": {\"return_code\": 0}}')\nimport sys\nsys.exit(1)\n",
        ),
        // Deaf to every signal it may ignore, with children that are too.
        (
            "deaf",
            "import os, signal\nfor s in range(1, 65):\n    try:\n        signal.signal(s, signal.SIG_IGN)\n    \
             except (OSError, ValueError):\n        pass\nfor _ in range(4):\n    if os.fork() == 0:\n        break\nwhile True:\n    pass\n",
        ),
    ];
    let mut callers = Vec::new();
    for (name, code) in attacks {
        let url = server.url("/run_code");
        callers.push((
            name,
            std::thread::spawn(move || {
                let started = Instant::now();
                let answer = post_json(&url, &json!({"code": code, "language": "python", "run_timeout": 2}));
                (answer, started.elapsed())
            }),
        ));
    }
    for (name, caller) in callers {
        let (answer, took) = caller.join().unwrap();
        assert_eq!(answer.status, 200, "{name}: {}", answer.body);
        assert!(answer.body.len() < 4 << 20, "{name}: an answer of {} bytes", answer.body.len());
        let answer = answer.json();
        assert_eq!(answer["status"], "Failed", "{name}: {answer:#}");
        assert!(took < Duration::from_secs(60), "{name} took {took:?}");
    }
    assert_eq!(curl("GET", &server.url("/healthz"), None, &[]).status, 200);
    assert_eq!(run(&server, json!({"code": "print(1)", "language": "python"}))["status"], "Success");
    assert_eq!(depth(&server), 0);
}

/// A candidate is the init of its own pid namespace, which the kernel spares the
/// signals it sends itself: `kill(getpid(), SIGKILL)` does nothing. That changes what a
/// program that kills itself is told, never a verdict it did not earn: in /evaluate the
/// tests run in the judge, and a sample that survives its own kill still fails them.
#[test]
fn a_candidate_that_survives_its_own_kill_earns_nothing_by_it() {
    let server = Server::start(&["--jobs", "1", "--allow-inline-test-code"]);
    let problems = json!([{"task_id": "t", "prompt": "def f():\n", "entry_point": "f",
                           "test": "def check(c):\n    assert c() == 1\n"}]);
    let samples = json!([
        {"task_id": "t", "completion": "    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n    return 2\n"},
        {"task_id": "t", "completion": "    import os, signal\n    os.kill(0, signal.SIGTERM)\n    return 2\n"},
        {"task_id": "t", "completion": "    import os\n    if os.fork() == 0:\n        os._exit(0)\n    return 2\n"},
    ]);
    let answer = post_json(&server.url("/evaluate"), &json!({"problems": problems, "samples": samples}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    for line in answer.json()["results"].as_array().unwrap() {
        assert_eq!(line["passed"], false, "{line:#}");
        assert_eq!(line["status"], "failed", "{line:#}");
    }

    // A sample that carries a verdict's fields of its own, to be copied into its line.
    let forged = json!([{"task_id": "t", "completion": "    return 2\n", "passed": true, "status": "passed",
                         "result": "passed", "base_passed": true, "tests": {"passed": 1, "total": 1},
                         "verdicts": "judge", "retried": true}]);
    let answer = post_json(&server.url("/evaluate"), &json!({"problems": problems, "samples": forged, "k": [1]}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = answer.json();
    let line = &answer["results"][0];
    assert_eq!((&line["passed"], &line["status"]), (&json!(false), &json!("failed")), "{line:#}");
    for field in ["base_passed", "verdicts", "retried"] {
        assert_ne!(line[field], json!(true), "{field} forged: {line:#}");
        assert_ne!(line[field], json!("judge"), "{field} forged: {line:#}");
    }
    assert_eq!(answer["scores"]["pass_at_k"]["pass@1"], 0.0);

    // A million values of k to score, on the thread that answers requests.
    let ks: Vec<u64> = (1..=1_000_000).collect();
    let started = Instant::now();
    let answer = post_json(&server.url("/evaluate"), &json!({"problems": problems, "samples": forged, "k": ks}));
    assert_eq!(answer.status, 400, "{}", &answer.body[..answer.body.len().min(300)]);
    assert!(answer.body.contains("at most 100"), "{}", answer.body);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

/// A client that opens connections by the thousand would take the descriptors the
/// workers need to make pipes: at `--max-connections` the next one waits, and is taken
/// once the stalled ones are cut off.
#[test]
fn connections_past_the_most_wait_their_turn() {
    let server = Server::start(&["--jobs", "1", "--max-connections", "3", "--read-timeout", "3"]);
    let stalled: Vec<TcpStream> = (0..3).map(|_| stall(&server, "GET /healthz HTTP/1.1\r\nHost: x\r\n")).collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut waiting = stall(&server, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    waiting.set_read_timeout(Some(Duration::from_millis(1000))).unwrap();
    let mut got = [0u8; 64];
    let early = waiting.read(&mut got);
    assert!(early.is_err(), "a fourth connection was served beside three: {early:?}");
    waiting.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let (said, took) = until_closed(&mut waiting);
    assert!(said.starts_with("HTTP/1.1 200"), "taken once the stalled ones were cut off: {said}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(stalled);
    assert_eq!(run(&server, json!({"code": "print(1)", "language": "python"}))["status"], "Success");
}
