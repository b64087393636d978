//! What passk does where the host refuses namespaces, as containers with default
//! settings do: simulated by running it under a seccomp filter that refuses them
//! (`tests/support/refuse-namespaces`).

use std::process::Command;

use passk_tests::{as_unprivileged_user, finish, passk, passk_binary, read_jsonl, repo_root, Finished};
use serde_json::Value;

struct Evaluation {
    finished: Finished,
    summary: Value,
    results: Vec<Value>,
}

fn evaluate(refuse_namespaces: bool, extra: &[&str]) -> Evaluation {
    evaluate_samples(refuse_namespaces, &repo_root().join("problems/basic-samples.jsonl"), extra)
}

fn evaluate_samples(refuse_namespaces: bool, samples: &std::path::Path, extra: &[&str]) -> Evaluation {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let summary = dir.path().join("summary.json");
    let mut command = if refuse_namespaces {
        let mut command = Command::new(repo_root().join("tests/support/refuse-namespaces"));
        command.arg(passk_binary());
        command
    } else {
        passk(Vec::<String>::new())
    };
    command
        .arg("evaluate")
        .arg(samples)
        .args(["--problems", "basic", "--k", "1", "--results"])
        .arg(&results)
        .arg("--summary")
        .arg(&summary)
        .args(extra);
    let finished = finish(&mut command);
    let summary = std::fs::read(&summary).map_or(Value::Null, |bytes| serde_json::from_slice(&bytes).unwrap());
    let results = if results.exists() { read_jsonl(&results) } else { Vec::new() };
    Evaluation { finished, summary, results }
}

fn sandbox_warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|line| line.starts_with("warning: sandbox") || line.contains("--sandbox")).collect()
}

fn assert_bundled_verdicts(results: &[Value]) {
    assert_eq!(results.len(), 60);
    for result in results {
        let kind = result["kind"].as_str().unwrap();
        let should_pass = kind == "correct" || kind == "hostile: prints 50 MB and then passes";
        assert_eq!(result["passed"], should_pass, "{kind}: {result}");
    }
}

#[test]
fn full_isolation_where_the_host_allows_it_with_no_warning() {
    let evaluation = evaluate(false, &[]);
    assert_eq!(evaluation.finished.code, Some(0), "{}", evaluation.finished.stderr);
    assert_eq!(evaluation.summary["settings"]["sandbox"], "full");
    assert_eq!(sandbox_warnings(&evaluation.finished.stderr), Vec::<&str>::new());
    assert_bundled_verdicts(&evaluation.results);
}

#[test]
fn auto_degrades_with_one_warning_that_says_what_is_missing_and_how_to_enable_it() {
    // An interpreter every user can run, which root's fallback needs.
    let evaluation = evaluate(true, &["--python", "/usr/bin/python3"]);
    assert_eq!(evaluation.finished.code, Some(0), "{}", evaluation.finished.stderr);
    let warnings = sandbox_warnings(&evaluation.finished.stderr);
    assert_eq!(warnings.len(), 1, "{}", evaluation.finished.stderr);
    assert!(warnings[0].contains("cannot create namespaces"), "{}", warnings[0]);
    assert!(warnings[0].contains("docker run") || warnings[0].contains("user namespaces"), "{}", warnings[0]);
    let level = evaluation.summary["settings"]["sandbox"].as_str().unwrap();
    assert!(["uid", "minimal"].contains(&level), "{level}");
    assert!(evaluation.finished.stdout.contains(&format!("sandbox       {level}")), "{}", evaluation.finished.stdout);
    // Packages cannot be hidden without a mount namespace; the table says so.
    let packages = "packages      all of the interpreter's, none a benchmark's";
    assert!(evaluation.finished.stdout.contains(packages), "{}", evaluation.finished.stdout);
    assert!(evaluation.summary["run"]["sandbox_refused"]["full"].as_str().unwrap().contains("EPERM"));
    assert_bundled_verdicts(&evaluation.results);
}

/// Root, refused namespaces, and an interpreter every user can run: each slot runs as
/// an unprivileged user of its own.
#[test]
fn as_root_a_refused_namespace_leaves_a_user_per_slot() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let evaluation = evaluate(true, &["--python", "/usr/bin/python3"]);
    assert_eq!(evaluation.finished.code, Some(0), "{}", evaluation.finished.stderr);
    let expected = if root { "uid" } else { "minimal" };
    assert_eq!(evaluation.summary["settings"]["sandbox"], expected);
    assert_bundled_verdicts(&evaluation.results);
}

/// Guards root's fallback: where namespaces are refused and no slot user can run the
/// interpreter (one below a directory only root may enter), passk refuses to run rather
/// than run candidates as root, and says what would let it.
#[test]
fn as_root_candidates_never_run_as_root() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let interpreter = private.path().join("python3");
    std::fs::copy(std::fs::canonicalize("/usr/bin/python3").unwrap(), &interpreter).unwrap();
    let evaluation = evaluate(true, &["--python", interpreter.to_str().unwrap()]);
    assert_eq!(evaluation.finished.code, Some(1), "{}", evaluation.finished.stderr);
    let stderr = &evaluation.finished.stderr;
    assert!(stderr.contains("never runs candidates as root") && stderr.contains("--python"), "{stderr}");
    assert!(evaluation.results.is_empty(), "nothing ran");
}

/// Guards the table's honesty at a degraded level: as an unprivileged user without
/// namespaces or control groups, there is no process limit and no private /tmp, and
/// the memory limit holds per process only; the `limits` line says so rather than
/// listing them.
#[test]
fn the_limits_line_names_only_limits_in_force() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let mut command = Command::new(repo_root().join("tests/support/refuse-namespaces"));
    command
        .arg(passk_binary())
        .arg("evaluate")
        .arg(repo_root().join("problems/basic-samples.jsonl"))
        .args(["--problems", "basic", "--k", "1", "--results"])
        .arg(dir.path().join("results.jsonl"));
    as_unprivileged_user(&mut command);
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let line = |name: &str| finished.stdout.lines().find(|line| line.starts_with(name)).unwrap_or_default().to_owned();
    assert!(line("  sandbox").ends_with("minimal"), "{}", finished.stdout);
    assert!(line("  cgroups").contains("none ("), "{}", finished.stdout);
    let limits = line("  limits");
    for missing in ["4096 MiB address space per process", "no process limit", "the host's /tmp"] {
        assert!(limits.contains(missing), "{missing}: {limits}");
    }
}

#[test]
fn strict_refuses_to_run_without_full_isolation() {
    let evaluation = evaluate(true, &["--sandbox", "strict"]);
    assert_eq!(evaluation.finished.code, Some(1), "{}", evaluation.finished.stderr);
    let stderr = &evaluation.finished.stderr;
    assert!(stderr.contains("full isolation is unavailable") && stderr.contains("EPERM"), "{stderr}");
    assert!(evaluation.results.is_empty(), "nothing ran");
}

/// Trusted code only: the bundled hostile samples would reach the machine (one kills
/// its worker), so they are left out.
#[test]
fn none_runs_unisolated_and_says_so_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let honest: Vec<Value> = read_jsonl(&repo_root().join("problems/basic-samples.jsonl"))
        .into_iter()
        .filter(|sample| !sample["kind"].as_str().unwrap().starts_with("hostile"))
        .collect();
    let samples = dir.path().join("honest.jsonl");
    passk_tests::write_jsonl(&samples, &honest);
    let evaluation = evaluate_samples(false, &samples, &["--sandbox", "none"]);
    assert_eq!(evaluation.finished.code, Some(0), "{}", evaluation.finished.stderr);
    let warnings = sandbox_warnings(&evaluation.finished.stderr);
    assert_eq!(warnings.len(), 1, "{}", evaluation.finished.stderr);
    assert!(warnings[0].contains("unisolated") && warnings[0].contains("trust"), "{}", warnings[0]);
    assert_eq!(evaluation.summary["settings"]["sandbox"], "none");
    assert_eq!(evaluation.summary["run"]["syscall_filter"], false);
}
