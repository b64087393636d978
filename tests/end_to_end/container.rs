//! passk in real containers: the image `Dockerfile` builds, run with Docker's default
//! flags as root and as its own user, with the flags the README gives for full
//! isolation, and locked down. Each run checks the level passk chose, what its table
//! says is in force, and the verdicts of the bundled samples, hostile ones included.
//!
//! They need a Docker engine and a Debian base image (`tests/support/make-docker-base`
//! makes one where none can be pulled), so they run only when asked, with
//! `PASSK_CONTAINER_TESTS=1` as CI does; asked on a host without an engine, they fail.

use std::process::Command;
use std::sync::OnceLock;

use passk_tests::{finish, humaneval_canonical_samples, passk_binary, read_jsonl, repo_root, write_jsonl, Finished};
use serde_json::Value;

const IMAGE: &str = "passk-test:latest";

/// The image under test, built once; `None` when container tests were not asked for.
fn image() -> Option<&'static str> {
    static BUILT: OnceLock<bool> = OnceLock::new();
    let built = *BUILT.get_or_init(|| {
        if std::env::var("PASSK_CONTAINER_TESTS").as_deref() != Ok("1") {
            eprintln!("container tests skipped: set PASSK_CONTAINER_TESTS=1 (needs Docker; see tests/support/make-docker-base)");
            return false;
        }
        let base = std::env::var("PASSK_DOCKER_BASE").unwrap_or_else(|_| "passk-base:bookworm".to_owned());
        let binary = passk_binary().strip_prefix(repo_root()).expect("passk is built inside the repository").to_owned();
        let output = Command::new("docker")
            .args(["build", "--quiet", "-t", IMAGE, "--build-arg"])
            .arg(format!("BASE={base}"))
            .arg("--build-arg")
            .arg(format!("BINARY={}", binary.display()))
            .arg(repo_root())
            .output()
            .expect("container tests were asked for, and need the docker command");
        assert!(output.status.success(), "docker build failed: {}", String::from_utf8_lossy(&output.stderr));
        true
    });
    built.then_some(IMAGE)
}

struct ContainerRun {
    finished: Finished,
    results: Vec<Value>,
}

impl ContainerRun {
    fn line(&self, name: &str) -> &str {
        let label = format!("  {name} ");
        self.finished.stdout.lines().find(|line| line.starts_with(&label)).map_or("", |line| line[label.len()..].trim())
    }
}

/// Where a container's problems come from.
enum Problems {
    /// A set compiled into passk.
    Bundled(&'static str),
    /// HumanEval, fetched inside the container by the image's `fetch-humaneval`.
    FetchedHumanEval,
}

/// Runs `passk evaluate` on `samples` in a container of `image` with `flags`, with a
/// directory of its own mounted as the working directory: the only thing of the host's
/// the container sees.
fn evaluate_in_container(image: &str, flags: &[&str], samples: &[Value], problems: Problems) -> ContainerRun {
    let data = tempfile::tempdir().unwrap();
    // Writable by whichever user the container runs as.
    std::fs::set_permissions(data.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    write_jsonl(&data.path().join("samples.jsonl"), samples);
    let mut command = Command::new("docker");
    command
        .args(["run", "--rm"])
        .args(flags)
        .arg("-v")
        .arg(format!("{}:/data", data.path().display()))
        .args(["-w", "/data"]);
    let evaluate = "evaluate samples.jsonl --partial --k 1 --results results.jsonl --problems";
    match problems {
        Problems::Bundled(name) => command.arg(image).args(evaluate.split(' ')).arg(name),
        Problems::FetchedHumanEval => command
            .args(["--entrypoint", "sh", image, "-c"])
            .arg(format!("passk {evaluate} \"$(fetch-humaneval \"$HOME/humaneval\")/HumanEval.jsonl.gz\"")),
    };
    let finished = finish(&mut command);
    let results_path = data.path().join("results.jsonl");
    let results = if results_path.exists() { read_jsonl(&results_path) } else { Vec::new() };
    ContainerRun { finished, results }
}

fn bundled_samples() -> Vec<Value> {
    read_jsonl(&repo_root().join("problems/basic-samples.jsonl"))
}

/// The bundled samples got the verdicts they were written for.
fn assert_bundled_verdicts(run: &ContainerRun, how: &str) {
    assert_eq!(run.finished.code, Some(0), "{how}: {}{}", run.finished.stdout, run.finished.stderr);
    assert_eq!(run.results.len(), bundled_samples().len(), "{how}");
    for result in &run.results {
        let kind = result["kind"].as_str().unwrap();
        let should_pass = kind == "correct" || kind == "hostile: prints 50 MB and then passes";
        assert_eq!(result["passed"], should_pass, "{how}: {kind}: {result}");
    }
}

const README_FLAGS: [&str; 6] = [
    "--security-opt",
    "seccomp=unconfined",
    "--security-opt",
    "apparmor=unconfined",
    "--security-opt",
    "systempaths=unconfined",
];

#[test]
fn with_dockers_default_flags_passk_degrades_and_says_exactly_what_holds() {
    let Some(image) = image() else { return };
    for (user, level) in [("0", "uid"), ("10001", "minimal")] {
        let run = evaluate_in_container(image, &["--user", user], &bundled_samples(), Problems::Bundled("basic"));
        let how = format!("default flags, user {user}");
        assert_bundled_verdicts(&run, &how);
        assert_eq!(run.line("sandbox"), level, "{how}: {}", run.finished.stdout);
        // Docker mounts the control groups read-only.
        assert!(run.line("cgroups").starts_with("none ("), "{how}: {}", run.finished.stdout);
        let limits = run.line("limits");
        assert!(limits.contains("address space per process") && limits.contains("the host's /tmp"), "{how}: {limits}");
        let processes = if level == "uid" { "64 processes" } else { "no process limit" };
        assert!(limits.contains(processes), "{how}: {limits}");
        assert!(
            run.finished.stderr.contains("seccomp=unconfined"),
            "{how}: the warning says how: {}",
            run.finished.stderr
        );
    }
}

#[test]
fn with_the_readme_flags_a_container_gets_full_isolation() {
    let Some(image) = image() else { return };
    for user in ["0", "10001"] {
        let flags = [&README_FLAGS[..], &["--user", user]].concat();
        let run = evaluate_in_container(image, &flags, &bundled_samples(), Problems::Bundled("basic"));
        let how = format!("README flags, user {user}");
        assert_bundled_verdicts(&run, &how);
        assert_eq!(run.line("sandbox"), "full", "{how}: {}", run.finished.stdout);
        assert!(run.line("ipc").contains("per sample"), "{how}: {}", run.finished.stdout);
        // The mounts below a bound directory (Docker's /etc/hosts) come along into the
        // sandbox: no candidate writes them.
        let canonical = bundled_samples().into_iter().find(|sample| sample["kind"] == "correct").unwrap();
        let mut writer = canonical.clone();
        let completion = canonical["completion"].as_str().unwrap();
        writer["completion"] =
            Value::from(format!("{completion}open('/etc/hosts', 'a').write('10.0.0.1 pypi.org\\n')\n"));
        let run = evaluate_in_container(image, &flags, &[writer], Problems::Bundled("basic"));
        assert_eq!(run.finished.code, Some(0), "{how}: {}", run.finished.stderr);
        assert_eq!(run.results[0]["passed"], false, "{how}: /etc/hosts was written: {}", run.results[0]);
        let detail = run.results[0]["detail"].as_str().unwrap();
        assert!(detail.contains("Read-only file system") || detail.contains("Permission denied"), "{how}: {detail}");
    }
}

#[test]
fn a_locked_down_container_runs_as_its_user_and_refuses_to_run_candidates_as_root() {
    let Some(image) = image() else { return };
    let locked = ["--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--memory", "1g", "--pids-limit", "256"];
    let run = evaluate_in_container(image, &locked, &bundled_samples(), Problems::Bundled("basic"));
    assert_bundled_verdicts(&run, "locked down");
    assert_eq!(run.line("sandbox"), "minimal", "{}", run.finished.stdout);
    // Root without capabilities cannot become another user; it refuses rather than
    // run candidates as root.
    let as_root = evaluate_in_container(
        image,
        &[&locked[..], &["--user", "0"]].concat(),
        &bundled_samples(),
        Problems::Bundled("basic"),
    );
    assert_eq!(as_root.finished.code, Some(1), "{}", as_root.finished.stderr);
    assert!(as_root.finished.stderr.contains("never runs candidates as root"), "{}", as_root.finished.stderr);
    assert!(as_root.results.is_empty(), "nothing ran");
}

/// The image on its own: it fetches HumanEval (checked against the pinned digest) with
/// nothing of the host's but the samples file, and every canonical solution passes.
#[test]
fn the_image_alone_fetches_humaneval_and_every_canonical_solution_passes() {
    let Some(image) = image() else { return };
    let samples = humaneval_canonical_samples();
    let run = evaluate_in_container(image, &[], &samples, Problems::FetchedHumanEval);
    assert_eq!(run.finished.code, Some(0), "{}", run.finished.stderr);
    assert_eq!(run.results.len(), 164);
    let failed: Vec<&Value> = run.results.iter().filter(|result| result["passed"] != true).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(run.line("pass@1"), "1.0000 ± 0.0000  95% CI [1.0000, 1.0000]", "{}", run.finished.stdout);
}
