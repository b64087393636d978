//! passk in real containers: the image `Dockerfile` builds, run with Docker's default
//! flags as root and as its own user, with the flags the README gives for full
//! isolation, and locked down. Each run checks the level passk chose, what its table
//! says is in force, and the verdicts of the bundled samples, hostile ones included.
//!
//! They need a Docker engine and a Debian base image (`tests/support/make-docker-base`
//! makes one where none can be pulled). With `PASSK_CONTAINER_TESTS=1`, as CI sets, they
//! must run: without an engine they fail. Unset, they run where `docker info` answers,
//! making the base image if it is missing, and where they cannot, each says on the
//! terminal that it was skipped and why. `PASSK_CONTAINER_TESTS=0` skips them, as loudly.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use passk_tests::{finish, humaneval_canonical_samples, passk_binary, read_jsonl, repo_root, write_jsonl, Finished};
use serde_json::Value;

/// The images under test, `passk-test:latest` and `passk-test:languages`, or under
/// `PASSK_TEST_IMAGE`'s name: two checkouts whose tests share an engine give each its own,
/// so that neither runs the other's passk.
pub(crate) fn image_name(tag: &str) -> String {
    let name = std::env::var("PASSK_TEST_IMAGE").unwrap_or_else(|_| "passk-test".to_owned());
    format!("{name}:{tag}")
}

/// The image under test, built once; or why the container tests cannot run here.
fn built_image() -> Result<&'static str, &'static str> {
    static BUILT: OnceLock<Result<String, String>> = OnceLock::new();
    BUILT.get_or_init(|| build_image(&image_name("latest"), &[])).as_deref().map_err(String::as_str)
}

/// The image with every language's toolchain (`LANGUAGES=all`), built once, after the
/// Python one (whose layers it does not share: its toolchains come first); or why not.
fn built_languages_image() -> Result<&'static str, &'static str> {
    static BUILT: OnceLock<Result<String, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            built_image().map_err(str::to_owned)?;
            let started = std::time::Instant::now();
            let built = build_image(&image_name("languages"), &["--build-arg", "LANGUAGES=all"]);
            // Past the harness's capture: what the build cost, for CI's budget.
            let line = format!("\ncontainer tests: the languages image built in {} s\n", started.elapsed().as_secs());
            let _ = std::io::stderr().write_all(line.as_bytes());
            built
        })
        .as_deref()
        .map_err(String::as_str)
}

/// Builds `Dockerfile` as `image` with the build arguments `extra`; or says why the
/// container tests cannot run here.
fn build_image(image: &str, extra: &[&str]) -> Result<String, String> {
    let asked = std::env::var("PASSK_CONTAINER_TESTS").ok();
    if asked.as_deref() == Some("0") {
        return Err("PASSK_CONTAINER_TESTS=0".to_owned());
    }
    let required = asked.as_deref() == Some("1");
    let base = std::env::var("PASSK_DOCKER_BASE").unwrap_or_else(|_| "passk-base:bookworm".to_owned());
    if let Err(why) = engine_with_base(&base) {
        assert!(!required, "PASSK_CONTAINER_TESTS=1, but {why}");
        return Err(why);
    }
    // The context holds what the Dockerfile copies, wherever cargo put passk.
    let context = tempfile::tempdir().unwrap();
    std::fs::create_dir(context.path().join("problems")).unwrap();
    for file in ["Dockerfile", "problems/fetch-humaneval"] {
        std::fs::copy(repo_root().join(file), context.path().join(file)).unwrap();
    }
    std::fs::copy(passk_binary(), context.path().join("passk")).unwrap();
    let output = Command::new("docker")
        .args(["build", "--quiet", "-t", image, "--build-arg"])
        .arg(format!("BASE={base}"))
        .args(["--build-arg", "BINARY=passk"])
        .args(extra)
        .arg(context.path())
        .output()
        .expect("docker answered `docker info`");
    assert!(output.status.success(), "docker build of {image} failed: {}", String::from_utf8_lossy(&output.stderr));
    Ok(image.to_owned())
}

/// Whether a Docker engine answers and has `base`, made with `make-docker-base` if
/// missing; if not, why not.
fn engine_with_base(base: &str) -> Result<(), String> {
    let info = Command::new("docker").args(["info", "--format", "{{.ServerVersion}}"]).output();
    match info {
        Err(error) => return Err(format!("there is no docker command ({error})")),
        Ok(info) if !info.status.success() => {
            let why = String::from_utf8_lossy(&info.stderr);
            return Err(format!("no Docker engine answers (docker info: {})", why.trim()));
        }
        Ok(_) => {}
    }
    let inspected = Command::new("docker").args(["image", "inspect", base]).output().expect("docker runs");
    if inspected.status.success() {
        return Ok(());
    }
    let made = Command::new(repo_root().join("tests/support/make-docker-base")).arg(base).output();
    match made {
        Ok(made) if made.status.success() => Ok(()),
        Ok(made) => Err(format!(
            "the base image {base} is missing and tests/support/make-docker-base could not make it: {}",
            String::from_utf8_lossy(&made.stderr).trim().lines().last().unwrap_or("")
        )),
        Err(error) => Err(format!("the base image {base} is missing and make-docker-base did not start: {error}")),
    }
}

/// The image, or `None` after saying on the terminal that `test` was skipped and why:
/// past the test harness's capture, so that a skip is never read as a pass.
pub(crate) fn image(test: &str) -> Option<&'static str> {
    or_skipped(test, built_image())
}

/// The languages image, or `None` after saying that `test` was skipped and why.
fn languages_image(test: &str) -> Option<&'static str> {
    or_skipped(test, built_languages_image())
}

fn or_skipped(test: &str, built: Result<&'static str, &'static str>) -> Option<&'static str> {
    match built {
        Ok(image) => Some(image),
        Err(why) => {
            let line = format!("\nSKIPPED, NOT RUN: container test {test}: {why}\n");
            // A direct write: the harness captures only `eprintln!`.
            let _ = std::io::stderr().write_all(line.as_bytes());
            None
        }
    }
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
    let data = data_folder();
    write_jsonl(&data.path().join("samples.jsonl"), samples);
    let mut command = docker_run(flags, data.path());
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
    let Some(image) = image("with_dockers_default_flags_passk_degrades_and_says_exactly_what_holds") else { return };
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
    let Some(image) = image("with_the_readme_flags_a_container_gets_full_isolation") else { return };
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
    let Some(image) = image("a_locked_down_container_runs_as_its_user_and_refuses_to_run_candidates_as_root") else {
        return;
    };
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
    // Regression: the refusal blamed the interpreter, not the capabilities dropped.
    let refusal = &as_root.finished.stderr;
    assert!(refusal.contains("never runs candidates as root"), "{refusal}");
    assert!(refusal.contains("without the capabilities") && refusal.contains("CAP_SETUID"), "{refusal}");
    assert!(refusal.contains("--user") && !refusal.contains("interpreter"), "{refusal}");
    assert!(as_root.results.is_empty(), "nothing ran");
}

/// The image on its own: it fetches HumanEval (checked against the pinned digest) with
/// nothing of the host's but the samples file, and every canonical solution passes.
#[test]
fn the_image_alone_fetches_humaneval_and_every_canonical_solution_passes() {
    let Some(image) = image("the_image_alone_fetches_humaneval_and_every_canonical_solution_passes") else { return };
    let samples = humaneval_canonical_samples();
    let run = evaluate_in_container(image, &[], &samples, Problems::FetchedHumanEval);
    assert_eq!(run.finished.code, Some(0), "{}", run.finished.stderr);
    assert_eq!(run.results.len(), 164);
    let failed: Vec<&Value> = run.results.iter().filter(|result| result["passed"] != true).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(run.line("pass@1"), "1.0000 ± 0.0000  95% CI [1.0000, 1.0000]", "{}", run.finished.stdout);
}

/// The README's `docker run` commands of `image` (`passk`, `passk:languages`), each with
/// its continuation lines joined.
fn readme_docker_runs(image: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let section = readme.split("### In Docker").nth(1).unwrap().split("\n## ").next().unwrap();
    let mut commands = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("docker run") {
            continue;
        }
        let mut command = line.to_owned();
        while command.ends_with('\\') {
            command.pop();
            command.push_str(lines.next().unwrap().trim_start());
        }
        if command.contains(&format!(" {image} ")) {
            commands.push(command);
        }
    }
    commands
}

/// Runs `command`, a README's `docker run` of `readme_image`, with `image` in its place,
/// as a host user who owns the folder it runs in (uid 4242, through an `id` that says
/// so), once `fill` has put its files there; how it finished, and the results it wrote.
fn run_in_users_folder(
    command: &str,
    readme_image: &str,
    image: &str,
    fill: impl FnOnce(&Path),
) -> (Finished, Vec<Value>) {
    let bin = tempfile::tempdir().unwrap();
    let id = bin.path().join("id");
    std::fs::write(&id, "#!/bin/sh\necho 4242\n").unwrap();
    std::fs::set_permissions(&id, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap());
    let folder = tempfile::tempdir().unwrap();
    fill(folder.path());
    let owned = Command::new("chown").args(["-R", "4242:4242"]).arg(folder.path()).status().unwrap();
    assert!(owned.success());
    // The image under test stands for the README's.
    let command = command.replacen(&format!(" {readme_image} "), &format!(" {image} "), 1);
    let finished = finish(Command::new("sh").args(["-c", &command]).current_dir(folder.path()).env("PATH", &path));
    let results = folder.path().join("samples.jsonl_results.jsonl");
    let results = if results.exists() { read_jsonl(&results) } else { Vec::new() };
    (finished, results)
}

/// Regression: both `docker run` commands of the README failed with `Permission denied`
/// on the results lock, since the image's user cannot write a folder mounted from the
/// host that another user owns. Run as written, by a host user who owns the folder (uid
/// 4242 here, through an `id` that says so), both evaluate HumanEval's canonical
/// solutions; without `--user`, passk refuses with exit 2 and names the fix.
#[test]
fn the_readmes_docker_commands_work_as_written_for_a_user_who_owns_the_folder() {
    let Some(image) = image("the_readmes_docker_commands_work_as_written_for_a_user_who_owns_the_folder") else {
        return;
    };
    let commands = readme_docker_runs("passk");
    assert_eq!(commands.len(), 2, "{commands:?}");
    let samples = humaneval_canonical_samples();
    let humaneval = |folder: &Path| {
        write_jsonl(&folder.join("samples.jsonl"), &samples);
        let problems = folder.join("problems/humaneval");
        std::fs::create_dir_all(&problems).unwrap();
        let gz = "HumanEval.jsonl.gz";
        std::fs::copy(passk_tests::humaneval_dir().join(gz), problems.join(gz)).unwrap();
    };
    for command in &commands {
        assert!(command.contains("--user \"$(id -u):$(id -g)\""), "{command}");
        let (finished, results) = run_in_users_folder(command, "passk", image, humaneval);
        assert_eq!(finished.code, Some(0), "{command}: {}", finished.stderr);
        assert_eq!(results.len(), 164, "{command}");
        assert!(results.iter().all(|result| result["passed"] == true), "{command}");
    }
    let without_user = commands[0].replace("--user \"$(id -u):$(id -g)\" ", "");
    let (refused, results) = run_in_users_folder(&without_user, "passk", image, humaneval);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("cannot write --results samples.jsonl_results.jsonl"), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("uid 10001") && refused.stderr.contains("--user \"$(id -u):$(id -g)\""),
        "{}",
        refused.stderr
    );
    assert!(results.is_empty());
}

/// Each language of the languages image, with the start of its toolchain's version
/// (Debian bookworm's), as passk's `toolchains` line gives it.
const TOOLCHAINS: [(&str, &str); 7] = [
    ("cpp", "12."),
    ("java", "17."),
    ("go", "1.19"),
    ("rust", "1.63"),
    ("javascript", "18."),
    ("typescript", "4."),
    ("bash", "5."),
];

/// The committed fixture: a function completion in each language (MultiPL-E's schema,
/// `text_length`), and for each a right answer, a wrong one and a forgery that exits 0
/// before the tests can fail (`tests/end_to_end/samples/text-length*.jsonl`).
fn text_length_fixture() -> (Vec<Value>, Vec<Value>) {
    let samples = repo_root().join("tests/end_to_end/samples");
    (read_jsonl(&samples.join("text-length-problems.jsonl")), read_jsonl(&samples.join("text-length.jsonl")))
}

/// Every sample of the fixture got the verdict its name gives (`cpp: right`, `java:
/// wrong`, `go: forgery: exit(0)`), each language had one, and the summary named each
/// toolchain with its version; Rust's crates were built into the cache under the home
/// every user of the image has, /tmp, by whichever user ran passk.
fn assert_every_language_judged(finished: &Finished, results: &[Value], how: &str) {
    let output = format!("{how}:\n{}{}", finished.stdout, finished.stderr);
    assert_eq!(finished.code, Some(0), "{output}");
    let (_, samples) = text_length_fixture();
    assert_eq!(results.len(), samples.len(), "{output}");
    for result in results {
        let name = result["name"].as_str().unwrap();
        let status = result["status"].as_str().unwrap();
        if name.ends_with(": right") {
            assert_eq!(status, "passed", "{how}: {result}");
        } else if name.ends_with(": wrong") {
            assert_eq!(status, "failed", "{how}: {result}");
        } else {
            // JavaScript's and TypeScript's harness reads the exit: passk calls an early
            // one an `error`, the others' stand-ins a failed call.
            assert!(status == "failed" || status == "error", "{how}: {result}");
            assert_eq!(result["passed"], false, "{how}: {result}");
        }
    }
    for (language, _) in TOOLCHAINS {
        let judged =
            results.iter().filter(|result| result["name"].as_str().unwrap().starts_with(&format!("{language}: ")));
        assert_eq!(judged.count(), 3, "{how}: {language}");
    }
    let toolchains = finished
        .stdout
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("toolchains"))
        .unwrap_or("")
        .trim_start();
    for (language, version) in TOOLCHAINS {
        // `rust: rustc 1.63.0 (/usr/bin/rustc)`, one a language, among others.
        let found = toolchains.split(", ").find_map(|found| found.strip_prefix(&format!("{language}: ")));
        assert!(
            found.is_some_and(|found| found.split(' ').nth(1).is_some_and(|found| found.starts_with(version))),
            "{how}: {language}: {toolchains}"
        );
    }
    assert!(finished.stderr.contains("building what rust's programs use into /tmp/.cache/passk/prebuilt/"), "{output}");
}

/// The languages image (`LANGUAGES=all`): passk inside it finds every toolchain and
/// reports its version, builds Rust's crates into its cache as the user it runs as, and
/// judges function completions in every language, a forgery that exits 0 early failing
/// as a wrong answer does. With the README's flags for full isolation, as the image's
/// own user; and with Docker's default flags, where containment degrades (no control
/// groups, level `minimal`) and every language still works, through the README's own
/// command as written, as a user the image does not know: without control groups, the
/// memory limit bounds each process's address space, a JVM's included.
#[test]
fn the_languages_image_judges_every_language_with_full_isolation_and_degraded() {
    let Some(image) = languages_image("the_languages_image_judges_every_language_with_full_isolation_and_degraded")
    else {
        return;
    };
    let (problems, samples) = text_length_fixture();

    let full =
        evaluate_languages_in_container(image, &[&README_FLAGS[..], &["--user", "10001", "--memory", "4g"]].concat());
    assert_every_language_judged(&full.finished, &full.results, "README flags, user 10001");
    assert_eq!(full.line("sandbox"), "full", "{}", full.finished.stdout);

    let commands = readme_docker_runs("passk:languages");
    assert_eq!(commands.len(), 1, "{commands:?}");
    let command = &commands[0];
    assert!(command.contains("--user \"$(id -u):$(id -g)\"") && command.contains(" samples.jsonl "), "{command}");
    let named = command.split(" --problems ").nth(1).and_then(|rest| rest.split(' ').next()).unwrap();
    let (finished, results) = run_in_users_folder(command, "passk:languages", image, |folder| {
        write_jsonl(&folder.join("samples.jsonl"), &samples);
        let file = folder.join(named);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        write_jsonl(&file, &problems);
        if named.ends_with(".gz") {
            let text = std::fs::read(&file).unwrap();
            let mut gz =
                flate2::write::GzEncoder::new(std::fs::File::create(&file).unwrap(), flate2::Compression::fast());
            gz.write_all(&text).unwrap();
            gz.finish().unwrap();
        }
    });
    let how = format!("default flags, the README's command as uid 4242: {command}");
    assert_every_language_judged(&finished, &results, &how);
    let sandbox = finished.stdout.lines().find(|line| line.starts_with("  sandbox ")).unwrap_or("");
    assert!(sandbox.ends_with(" minimal"), "{how}: {}", finished.stdout);
    let cgroups = finished.stdout.lines().find(|line| line.starts_with("  cgroups ")).unwrap_or("");
    assert!(cgroups.contains("none ("), "{how}: {}", finished.stdout);
}

/// A folder for a container's samples and results, writable by whichever user the
/// container runs as.
fn data_folder() -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    std::fs::set_permissions(data.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    data
}

/// `docker run --rm` with `flags`, `data` mounted as /data and the working directory;
/// the image and its arguments follow.
fn docker_run(flags: &[&str], data: &Path) -> Command {
    let mut command = Command::new("docker");
    command.args(["run", "--rm"]).args(flags).arg("-v").arg(format!("{}:/data", data.display())).args(["-w", "/data"]);
    command
}

/// Runs `passk evaluate` on the text-length fixture in a container of the languages
/// image with `flags`, generously timed (a shared CI machine builds the programs).
fn evaluate_languages_in_container(image: &str, flags: &[&str]) -> ContainerRun {
    let (problems, samples) = text_length_fixture();
    let data = data_folder();
    write_jsonl(&data.path().join("samples.jsonl"), &samples);
    write_jsonl(&data.path().join("problems.jsonl"), &problems);
    let mut command = docker_run(flags, data.path());
    command
        .arg(image)
        .args(["evaluate", "samples.jsonl", "--problems", "problems.jsonl", "--k", "1", "--no-dedup"])
        .args(["--timeout", "10", "--compile-timeout", "120", "--results", "results.jsonl"]);
    let finished = finish(&mut command);
    let results_path = data.path().join("results.jsonl");
    let results = if results_path.exists() { read_jsonl(&results_path) } else { Vec::new() };
    ContainerRun { finished, results }
}
