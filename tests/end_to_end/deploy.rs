//! `deploy/`, run for real: the Kubernetes manifests checked against the Kubernetes
//! API's schema and their Jobs' commands run in containers of passk's image with the
//! settings the manifests give; the Slurm scripts run by a stand-in `sbatch`
//! (`tests/deploy/bin/sbatch`) that honours job arrays and `afterok`; the Compose stack
//! under load while one of its replicas is killed; and the README's `Deploy` commands as
//! written. A sharded run must give what one run gives: every results line (but the
//! times and memory measured) and the summary's scores.
//!
//! The tests that need Docker are gated as `container.rs`'s are (`PASSK_CONTAINER_TESTS`):
//! where no engine answers they say on the terminal that they were skipped, and with
//! `PASSK_CONTAINER_TESTS=1` a missing engine fails them. The schema check and the Slurm
//! scripts need no engine and always run.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use passk_tests::{finish, humaneval_dir, humaneval_problems, passk, passk_binary, read_jsonl, repo_root, write_jsonl};
use serde_json::{json, Value};

/// The Kubernetes client whose models the manifests are checked against: its release
/// is the API version checked (31: Kubernetes 1.31's API).
const KUBERNETES_CLIENT: &str = "kubernetes==31.0.0";

/// A Python with the pinned Kubernetes client from PyPI, in a virtual environment made
/// once below `target/`.
fn kubernetes_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = repo_root().join("target/kubernetes-client");
        let python = venv.join("bin/python3");
        let ready = venv.join(format!("installed {KUBERNETES_CLIENT}"));
        if !ready.exists() {
            let made = Command::new("python3").args(["-m", "venv", "--clear"]).arg(&venv).output().unwrap();
            assert!(made.status.success(), "python3 -m venv: {}", String::from_utf8_lossy(&made.stderr));
            let installed = Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", KUBERNETES_CLIENT])
                .output()
                .unwrap();
            assert!(
                installed.status.success(),
                "pip install {KUBERNETES_CLIENT}: {}",
                String::from_utf8_lossy(&installed.stderr)
            );
            std::fs::write(&ready, "").unwrap();
        }
        python
    })
}

/// `tests/deploy/check_manifests.py` on `paths`: how it finished, and the documents it
/// read (`{"file", "document"}`).
fn check_manifests(paths: &[&Path]) -> (passk_tests::Finished, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("documents.json");
    let finished = finish(
        Command::new(kubernetes_python())
            .arg(repo_root().join("tests/deploy/check_manifests.py"))
            .arg("--json")
            .arg(&json)
            .args(paths),
    );
    let documents =
        std::fs::read_to_string(&json).map_or_else(|_| Vec::new(), |text| serde_json::from_str(&text).unwrap());
    (finished, documents)
}

/// The repository's manifests, checked, by kind and name.
fn manifests() -> BTreeMap<String, Value> {
    let (finished, documents) = check_manifests(&[&repo_root().join("deploy/kubernetes")]);
    assert_eq!(finished.code, Some(0), "{}{}", finished.stdout, finished.stderr);
    documents
        .into_iter()
        .map(|entry| {
            let document = entry["document"].clone();
            (
                format!("{}/{}", document["kind"].as_str().unwrap(), document["metadata"]["name"].as_str().unwrap()),
                document,
            )
        })
        .collect()
}

#[test]
fn the_kubernetes_manifests_are_objects_the_kubernetes_api_accepts() {
    let (finished, _) = check_manifests(&[&repo_root().join("deploy/kubernetes")]);
    assert_eq!(finished.code, Some(0), "{}{}", finished.stdout, finished.stderr);
    let manifests = manifests();
    let names: Vec<&str> = manifests.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "Deployment/passk-serve",
            "Job/passk-merge",
            "Job/passk-shards",
            "PersistentVolumeClaim/passk-data",
            "Pod/passk-fill",
            "Service/passk-serve"
        ]
    );

    // The shards: an Indexed Job whose SHARDS is its completions, all on the data volume
    // the merge reads.
    let shards = &manifests["Job/passk-shards"]["spec"];
    assert_eq!(shards["completionMode"], "Indexed");
    let container = &shards["template"]["spec"]["containers"][0];
    assert_eq!(env_of(container)["SHARDS"], shards["completions"].to_string(), "SHARDS is N, the Job's completions");
    for job in ["Job/passk-shards", "Job/passk-merge", "Pod/passk-fill"] {
        let spec = pod_spec(&manifests[job]);
        let claims: Vec<&Value> = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|volume| volume.get("persistentVolumeClaim"))
            .collect();
        assert_eq!(claims, [&json!({"claimName": "passk-data"})], "{job} mounts the data volume");
    }
    // The service: probes on passk's endpoints, a Service that reaches its pods.
    let serve = &manifests["Deployment/passk-serve"];
    let container = &pod_spec(serve)["containers"][0];
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert!(container["resources"]["requests"].is_object() && container["resources"]["limits"].is_object());
    let labels = &serve["spec"]["template"]["metadata"]["labels"];
    for (key, value) in manifests["Service/passk-serve"]["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&labels[key], value, "the Service selects the Deployment's pods");
    }

    // The checker refuses what the API refuses: an unknown field, a required field
    // missing, a value of the wrong type, a kind the API does not have.
    let serve_yaml = std::fs::read_to_string(repo_root().join("deploy/kubernetes/serve.yaml")).unwrap();
    let shards_yaml = std::fs::read_to_string(repo_root().join("deploy/kubernetes/shards.yaml")).unwrap();
    let broken = [
        (
            serve_yaml.replacen("procMount:", "procMont:", 1),
            "securityContext.procMont: not a field of V1SecurityContext",
        ),
        (
            serve_yaml.replacen("    - name: http\n      port: 8080\n", "    - name: http\n", 1),
            "V1ServicePort: Invalid value for `port`, must not be `None`",
        ),
        (shards_yaml.replacen("completions: 4", "completions: \"4\"", 1), "spec.completions: int expected, not '4'"),
        (shards_yaml.replacen("kind: Job", "kind: IndexedJob", 1), "no such API type"),
    ];
    for (text, refusal) in broken {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("broken.yaml");
        assert_ne!(text, serve_yaml);
        assert_ne!(text, shards_yaml);
        std::fs::write(&file, &text).unwrap();
        let (finished, _) = check_manifests(&[&file]);
        assert_eq!(finished.code, Some(1), "{refusal}: {}", finished.stdout);
        assert!(
            finished.stdout.contains("refused: ") && finished.stdout.contains(refusal),
            "{refusal}: {}",
            finished.stdout
        );
    }
}

fn pod_spec(object: &Value) -> &Value {
    match object["kind"].as_str() {
        Some("Pod") => &object["spec"],
        _ => &object["spec"]["template"]["spec"],
    }
}

fn env_of(container: &Value) -> BTreeMap<String, String> {
    container["env"]
        .as_array()
        .map(|env| {
            env.iter()
                .map(|pair| (pair["name"].as_str().unwrap().to_owned(), pair["value"].as_str().unwrap().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The `docker run` arguments that give a container what `object`'s pod gives its first
/// container: its user, its security settings, its resources, its volumes (the claim as
/// `data`, an emptyDir as a tmpfs) and its environment with `extra_env`, then the
/// image and the command. A setting the translation does not know fails the test, so
/// that the manifests cannot drift from what is tested. `run` is how the container is
/// run (`--rm`, or `--detach` with a name).
fn docker_run_of(object: &Value, image: &str, data: &Path, extra_env: &[(&str, String)], run: &[&str]) -> Command {
    let spec = pod_spec(object);
    let container = &spec["containers"][0];
    let mut command = Command::new("docker");
    command.arg("run").args(run);
    for (key, value) in spec.as_object().unwrap() {
        match key.as_str() {
            // A pod's own user namespace is what lets Kubernetes unmask /proc (below);
            // Docker unmasks it without one.
            "hostUsers" => assert_eq!(value, false),
            "restartPolicy" | "containers" | "volumes" | "terminationGracePeriodSeconds" => {}
            "securityContext" => {
                for (key, value) in value.as_object().unwrap() {
                    match key.as_str() {
                        "runAsNonRoot" => assert_eq!(value, true),
                        "runAsUser" => {
                            assert_ne!(value, 0);
                            let group = spec["securityContext"]["runAsGroup"].as_u64().unwrap_or(0);
                            command.arg("--user").arg(format!("{value}:{group}"));
                        }
                        "runAsGroup" => {}
                        "fsGroup" => {
                            command.arg("--group-add").arg(value.to_string());
                        }
                        _ => panic!("the pod's securityContext.{key} has no Docker translation here"),
                    }
                }
            }
            _ => panic!("the pod's {key} has no Docker translation here"),
        }
    }
    let mut entrypoint = Vec::new();
    let mut arguments = Vec::new();
    for (key, value) in container.as_object().unwrap() {
        match key.as_str() {
            "name" | "image" | "imagePullPolicy" | "env" | "ports" | "readinessProbe" | "livenessProbe" => {}
            "command" => {
                entrypoint = value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
            }
            "args" => arguments = value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect(),
            "securityContext" => {
                for (key, value) in value.as_object().unwrap() {
                    let flags: Vec<String> = match (key.as_str(), value) {
                        ("allowPrivilegeEscalation", Value::Bool(false)) => {
                            vec!["--security-opt".into(), "no-new-privileges".into()]
                        }
                        ("readOnlyRootFilesystem", Value::Bool(true)) => vec!["--read-only".into()],
                        ("privileged", Value::Bool(privileged)) => {
                            if *privileged {
                                vec!["--privileged".into()]
                            } else {
                                vec![]
                            }
                        }
                        ("capabilities", capabilities) => {
                            assert_eq!(capabilities, &json!({"drop": ["ALL"]}));
                            vec!["--cap-drop".into(), "ALL".into()]
                        }
                        ("seccompProfile", profile) if profile == &json!({"type": "Unconfined"}) => {
                            vec!["--security-opt".into(), "seccomp=unconfined".into()]
                        }
                        ("appArmorProfile", profile) if profile == &json!({"type": "Unconfined"}) => {
                            vec!["--security-opt".into(), "apparmor=unconfined".into()]
                        }
                        ("procMount", Value::String(mount)) if mount == "Unmasked" => {
                            vec!["--security-opt".into(), "systempaths=unconfined".into()]
                        }
                        _ => panic!("the container's securityContext.{key}: {value} has no Docker translation here"),
                    };
                    command.args(flags);
                }
            }
            "resources" => {
                let limits = &value["limits"];
                if let Some(cpus) = limits["cpu"].as_str() {
                    command.arg("--cpus").arg(cpus);
                }
                if let Some(memory) = limits["memory"].as_str() {
                    let gib: u64 = memory.strip_suffix("Gi").expect("limits in Gi").parse().unwrap();
                    command.arg("--memory").arg(format!("{gib}g"));
                }
            }
            "volumeMounts" => {
                for mount in value.as_array().unwrap() {
                    let path = mount["mountPath"].as_str().unwrap();
                    let volume =
                        spec["volumes"].as_array().unwrap().iter().find(|v| v["name"] == mount["name"]).unwrap();
                    if volume.get("persistentVolumeClaim").is_some() {
                        command.arg("-v").arg(format!("{}:{path}", data.display()));
                    } else if volume.get("emptyDir").is_some() {
                        command.arg("--tmpfs").arg(format!("{path}:exec"));
                    } else {
                        panic!("volume {volume} has no Docker translation here");
                    }
                }
            }
            _ => panic!("the container's {key} has no Docker translation here"),
        }
    }
    for (name, value) in
        env_of(container).into_iter().chain(extra_env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
    {
        command.arg("-e").arg(format!("{name}={value}"));
    }
    if let Some((first, rest)) = entrypoint.split_first() {
        command.arg("--entrypoint").arg(first).arg(image).args(rest);
    } else {
        command.arg(image);
    }
    command.args(arguments);
    command
}

/// A results line without what is measured rather than decided: times and memory.
fn decided(line: &Value) -> Value {
    let mut line = line.clone();
    for measured in ["duration", "memory_peak_bytes", "cpu_seconds"] {
        line.as_object_mut().unwrap().remove(measured);
    }
    line
}

/// The summary without the run's own record (its times, paths, machine) and settings
/// (the shards ran with their own `--jobs`).
fn scores(summary: &Value) -> Value {
    let mut summary = summary.clone();
    summary.as_object_mut().unwrap().remove("run");
    summary.as_object_mut().unwrap().remove("settings");
    summary
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// One run of `samples` on `problems` on the host, unsharded, with pass@k at `k`: its
/// results and summary, what the merged shards must equal.
fn single_run(samples: &Path, problems: &str, k: &str) -> (Vec<Value>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let (results, summary) = (dir.path().join("results.jsonl"), dir.path().join("summary.json"));
    let finished = finish(
        passk(["evaluate"])
            .arg(samples)
            .args(["--problems", problems, "--k", k, "--results"])
            .arg(&results)
            .arg("--summary")
            .arg(&summary),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    (read_jsonl(&results), read_json(&summary))
}

/// The merged results and summary are the single run's.
fn assert_same_as_single_run(how: &str, merged: &[Value], merged_summary: &Value, single: &(Vec<Value>, Value)) {
    assert_eq!(merged.len(), single.0.len(), "{how}: every sample has its line");
    for (index, (merged, single)) in merged.iter().zip(&single.0).enumerate() {
        assert_eq!(decided(merged), decided(single), "{how}: sample {index}");
    }
    assert_eq!(scores(merged_summary), scores(&single.1), "{how}: the summary's scores");
    assert!(merged_summary["pass@1"].is_number(), "{how}: {merged_summary:#}");
}

/// HumanEval's samples for the sharded runs: each canonical solution, and a wrong answer
/// for each problem whose tests are the same on every run. A few problems' tests draw
/// random inputs (HumanEval/38's), so a wrong answer's detail names another input on
/// each run, sharded or not.
fn humaneval_samples() -> Vec<Value> {
    let mut samples = Vec::new();
    for problem in humaneval_problems() {
        samples.push(json!({"task_id": problem["task_id"], "completion": problem["canonical_solution"]}));
        if !problem["test"].as_str().unwrap().contains("random") {
            samples.push(json!({"task_id": problem["task_id"], "completion": "    return None\n"}));
        }
    }
    samples
}

/// A folder standing for the data volume, open to the containers' user, with the
/// samples at /data/samples.jsonl and HumanEval at /data/problems/HumanEval.jsonl.gz,
/// where the manifests look.
fn data_volume(samples: &[Value]) -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    std::fs::set_permissions(data.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    write_jsonl(&data.path().join("samples.jsonl"), samples);
    std::fs::create_dir(data.path().join("problems")).unwrap();
    std::fs::copy(humaneval_dir().join("HumanEval.jsonl.gz"), data.path().join("problems/HumanEval.jsonl.gz")).unwrap();
    data
}

/// The Indexed Job's pods, as containers of passk's image: N at once, each with its
/// JOB_COMPLETION_INDEX, running the Job's command with the Job's settings on a folder
/// standing for the volume; then the merge Job's. Their merge is a single run's, on the
/// bundled set and on HumanEval, and every shard ran at level `full`.
#[test]
fn the_indexed_jobs_shards_in_containers_merge_into_what_one_run_gives() {
    let test = "the_indexed_jobs_shards_in_containers_merge_into_what_one_run_gives";
    let Some(image) = crate::container::image(test) else { return };
    let _machine = passk_tests::machine_to_myself();
    let manifests = manifests();
    let (shards, merge) = (&manifests["Job/passk-shards"], &manifests["Job/passk-merge"]);
    let count = shards["spec"]["completions"].as_u64().unwrap();
    assert_eq!(shards["spec"]["parallelism"], count, "the shards run at once");
    let k = env_of(&shards["spec"]["template"]["spec"]["containers"][0])["K"].clone();

    let bundled = read_jsonl(&repo_root().join("problems/basic-samples.jsonl"));
    // The bundled set by its name, as a user changes the manifest's PROBLEMS for it.
    let cases: [(&str, Vec<Value>, Option<&str>); 2] =
        [("the bundled set", bundled, Some("basic")), ("HumanEval", humaneval_samples(), None)];
    for (how, samples, problems) in cases {
        let started = Instant::now();
        let data = data_volume(&samples);
        let mut extra = Vec::new();
        if let Some(problems) = problems {
            extra.push(("PROBLEMS", problems.to_owned()));
        }
        let runs: Vec<_> = (0..count)
            .map(|index| {
                let mut env = extra.clone();
                env.push(("JOB_COMPLETION_INDEX", index.to_string()));
                let mut command = docker_run_of(shards, image, data.path(), &env, &["--rm"]);
                std::thread::spawn(move || finish(&mut command))
            })
            .collect();
        for (index, run) in runs.into_iter().enumerate() {
            let finished = run.join().unwrap();
            assert_eq!(finished.code, Some(0), "{how}: shard {index}: {}", finished.stderr);
            let sandbox = finished.stdout.lines().find(|line| line.starts_with("  sandbox ")).unwrap_or("");
            assert!(sandbox.ends_with(" full"), "{how}: shard {index} ran with full isolation: {}", finished.stdout);
            // Named as --shard counts, from 1.
            let k = index + 1;
            assert!(data.path().join(format!("results/shard-{k}.jsonl.run.json")).exists(), "{how}: shard {k}");
        }
        let finished = finish(&mut docker_run_of(merge, image, data.path(), &[], &["--rm"]));
        assert_eq!(finished.code, Some(0), "{how}: merge: {}", finished.stderr);
        assert!(finished.stderr.contains(&format!("merged the {count} shards' results")), "{how}: {}", finished.stderr);

        let problems = problems.map_or_else(|| humaneval_dir().join("HumanEval.jsonl.gz"), PathBuf::from);
        let single = single_run(&data.path().join("samples.jsonl"), problems.to_str().unwrap(), &k);
        let results = data.path().join("results");
        let merged = read_jsonl(&results.join("merged.jsonl"));
        assert_same_as_single_run(how, &merged, &read_json(&results.join("summary.json")), &single);
        let line =
            format!("\ndeploy tests: {how}: {count} shards and their merge in {} s\n", started.elapsed().as_secs());
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// `url` of passk serve inside `container`, asked from inside (no port is published):
/// the HTTP status and the body.
fn inside(container: &str, url: &str, body: Option<&Value>) -> (u16, String) {
    let script = "import sys, urllib.request, urllib.error\n\
                  data = sys.argv[2].encode() if len(sys.argv) > 2 else None\n\
                  request = urllib.request.Request(sys.argv[1], data, {'Content-Type': 'application/json'})\n\
                  try:\n    answer = urllib.request.urlopen(request, timeout=30)\n\
                  except urllib.error.HTTPError as error:\n    answer = error\n\
                  except OSError as error:\n    print(0); print(error); sys.exit()\n\
                  print(answer.status); print(answer.read().decode())\n";
    let mut command = Command::new("docker");
    command.args(["exec", container, "python3", "-c", script, url]);
    if let Some(body) = body {
        command.arg(body.to_string());
    }
    let finished = finish(&mut command);
    let (status, body) = finished.stdout.split_once('\n').unwrap_or(("0", ""));
    (status.trim().parse().unwrap_or(0), format!("{body}{}", finished.stderr))
}

/// The Deployment's pod, as a container of passk's image with the pod's settings: its
/// probes' endpoints answer 200 once it is ready, it runs a program at level `full`,
/// and on SIGTERM (what a rollout sends) it exits 0 well within the grace period.
#[test]
fn the_serve_deployments_pod_in_a_container_is_ready_at_level_full_and_stops_cleanly() {
    let test = "the_serve_deployments_pod_in_a_container_is_ready_at_level_full_and_stops_cleanly";
    let Some(image) = crate::container::image(test) else { return };
    let manifests = manifests();
    let serve = &manifests["Deployment/passk-serve"];
    let container = &pod_spec(serve)["containers"][0];
    let name = passk_tests::unique_marker("passk-serve-pod");
    let data = tempfile::tempdir().unwrap();
    let started = finish(&mut docker_run_of(serve, image, data.path(), &[], &["--detach", "--name", &name]));
    assert_eq!(started.code, Some(0), "{}", started.stderr);
    // Removed whatever the test's outcome.
    struct Removed(String);
    impl Drop for Removed {
        fn drop(&mut self) {
            let _ = Command::new("docker").args(["rm", "--force", &self.0]).output();
        }
    }
    let _removed = Removed(name.clone());
    let port = container["ports"][0]["containerPort"].as_u64().unwrap();
    let probe = |probe: &str| {
        let path = container[probe]["httpGet"]["path"].as_str().unwrap().to_owned();
        inside(&name, &format!("http://127.0.0.1:{port}{path}"), None)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while probe("readinessProbe").0 != 200 {
        assert!(Instant::now() < deadline, "never ready: {:?}", probe("readinessProbe"));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(probe("livenessProbe").0, 200);
    let call = json!({"code": "print(int(input()) * 2)", "language": "python", "stdin": "21"});
    let (status, answer) = inside(&name, &format!("http://127.0.0.1:{port}/run_code"), Some(&call));
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains(r#""stdout":"42\n""#), "{answer}");
    let logs = finish(Command::new("docker").args(["logs", &name]));
    assert!(logs.stderr.contains("ready: sandbox full"), "{}", logs.stderr);

    let grace = pod_spec(serve)["terminationGracePeriodSeconds"].as_u64().unwrap();
    let stopping = Instant::now();
    let stopped = finish(Command::new("docker").args(["stop", "--time", &grace.to_string(), &name]));
    assert_eq!(stopped.code, Some(0), "{}", stopped.stderr);
    assert!(stopping.elapsed() < Duration::from_secs(30), "an idle server stops at once: {:?}", stopping.elapsed());
    let exit = finish(Command::new("docker").args(["inspect", "--format", "{{.State.ExitCode}}", &name]));
    assert_eq!(
        exit.stdout.trim(),
        "0",
        "SIGTERM drains and exits 0: {}",
        finish(Command::new("docker").args(["logs", &name])).stderr
    );
}

/// The environment the Slurm scripts run in: the stand-in `sbatch` and passk on the
/// PATH, the jobs' states in `state`.
fn slurm_env(command: &mut Command, state: &Path) {
    let path = std::env::join_paths(
        [repo_root().join("tests/deploy/bin"), passk_binary().parent().unwrap().to_owned()]
            .into_iter()
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    command.env("PATH", path).env("FAKE_SLURM_STATE", state);
}

/// The jobs' final states, by job id: COMPLETED, FAILED, DEPENDENCY_NEVER_SATISFIED.
fn slurm_states(state: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            (entry.file_name().to_string_lossy().into_owned(), text.split_whitespace().next().unwrap().to_owned())
        })
        .collect()
}

/// submit.sh's job array and merge under the stand-in sbatch: the merge of the array's
/// shards is a single run's, on the bundled set and on HumanEval. With a shard that
/// fails, the merge never runs: `afterok` holds it back.
#[test]
fn the_slurm_array_and_its_merge_give_what_one_run_gives_and_a_failed_shard_holds_the_merge() {
    let _machine = passk_tests::machine_to_myself();
    let bundled = repo_root().join("problems/basic-samples.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let humaneval = dir.path().join("humaneval-samples.jsonl");
    write_jsonl(&humaneval, &humaneval_samples());
    let humaneval_problems = humaneval_dir().join("HumanEval.jsonl.gz");
    for (how, samples, problems, shards) in [
        ("the bundled set", &bundled, "basic", "3"),
        ("HumanEval", &humaneval, humaneval_problems.to_str().unwrap(), "4"),
    ] {
        let work = tempfile::tempdir().unwrap();
        let state = work.path().join("state");
        let mut command = Command::new(repo_root().join("deploy/slurm/submit.sh"));
        command.arg(samples).arg(problems).arg("results").arg(shards).current_dir(work.path());
        slurm_env(&mut command, &state);
        let finished = finish(&mut command);
        assert_eq!(finished.code, Some(0), "{how}: {}{}", finished.stdout, finished.stderr);
        assert!(finished.stdout.contains("merge as job 1001 after them"), "{how}: {}", finished.stdout);
        assert_eq!(
            slurm_states(&state),
            BTreeMap::from([("1000".into(), "COMPLETED".into()), ("1001".into(), "COMPLETED".into())])
        );
        let results = work.path().join("results");
        let shard_files = std::fs::read_dir(&results)
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().file_name().to_string_lossy().ends_with(".run.json"))
            .count();
        assert_eq!(shard_files, shards.parse::<usize>().unwrap() + 1, "{how}: each shard's run, and the merge's");
        let merged = read_jsonl(&results.join("merged.jsonl"));
        let single = single_run(samples, problems, "1,10,100");
        assert_same_as_single_run(how, &merged, &read_json(&results.join("summary.json")), &single);
        for task in 0..shards.parse::<usize>().unwrap() {
            let output = std::fs::read_to_string(work.path().join(format!("passk-shard-1000_{task}.out"))).unwrap();
            let k = task + 1;
            assert!(output.contains(&format!("results/shard-{k}.jsonl (")), "{how}: task {task}: {output}");
        }
    }

    // Shard 2's results cannot be written (a folder is in their place): its task fails,
    // and the merge is never started.
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("state");
    std::fs::create_dir_all(work.path().join("results/shard-2.jsonl")).unwrap();
    let mut command = Command::new(repo_root().join("deploy/slurm/submit.sh"));
    command.arg(&bundled).args(["basic", "results", "3"]).current_dir(work.path());
    slurm_env(&mut command, &state);
    let finished = finish(&mut command);
    assert_eq!(finished.code, Some(0), "Slurm takes the merge, to hold it: {}", finished.stderr);
    assert_eq!(
        slurm_states(&state),
        BTreeMap::from([("1000".into(), "FAILED".into()), ("1001".into(), "DEPENDENCY_NEVER_SATISFIED".into())])
    );
    assert!(!work.path().join("results/merged.jsonl").exists(), "no merge of a failed array");
    assert!(!work.path().join("passk-merge-1001.out").exists(), "the merge never started");
}

/// Whether the Compose tests can run: an engine with passk's image, and Debian's
/// `docker-compose` (tests/support/install-test-deps installs it beside Docker). If
/// not, `test` says on the terminal that it was skipped and why, or fails where
/// `PASSK_CONTAINER_TESTS=1` asked for the container tests.
fn compose_can_run(test: &str) -> bool {
    if crate::container::image(test).is_none() {
        return false;
    }
    if Command::new("docker-compose").arg("version").output().is_ok_and(|output| output.status.success()) {
        return true;
    }
    let why = "there is no docker-compose (tests/support/install-test-deps installs it)";
    assert!(std::env::var("PASSK_CONTAINER_TESTS").as_deref() != Ok("1"), "PASSK_CONTAINER_TESTS=1, but {why}");
    let line = format!("\nSKIPPED, NOT RUN: container test {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    false
}

/// A Compose project of `deploy/compose`, taken down when dropped.
struct Stack {
    project: String,
    env: Vec<(String, String)>,
}

impl Stack {
    fn compose(&self, args: &[&str]) -> Command {
        let mut command = Command::new("docker-compose");
        command
            .arg("-f")
            .arg(repo_root().join("deploy/compose/docker-compose.yml"))
            .args(args)
            .current_dir(repo_root())
            .env("COMPOSE_PROJECT_NAME", &self.project);
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
    }

    /// The container of `service`.
    fn container(&self, service: &str) -> String {
        let finished = finish(&mut self.compose(&["ps", "-q", service]));
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        finished.stdout.trim().to_owned()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let _ = self.compose(&["down", "--timeout", "10"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// The environment `deploy/compose` is built and run with here: this checkout's passk
/// and image names of its own (two checkouts may share the engine), the base image made
/// here, a project of its own, nginx on `port`.
fn stack(port: u16) -> Stack {
    let binary =
        passk_binary().strip_prefix(repo_root()).expect("passk is built below the checkout, in its build context");
    let base = std::env::var("PASSK_DOCKER_BASE").unwrap_or_else(|_| "passk-base:bookworm".to_owned());
    let env = [
        ("PASSK_BINARY", binary.display().to_string()),
        ("PASSK_BASE", base),
        ("PASSK_IMAGE", crate::container::image_name("compose")),
        ("PASSK_NGINX_IMAGE", crate::container::image_name("nginx")),
        ("PASSK_PORT", port.to_string()),
    ];
    Stack {
        project: passk_tests::unique_marker("passkdeploy").replace(['-', '_'], "").to_lowercase(),
        env: env.into_iter().map(|(name, value)| (name.to_owned(), value)).collect(),
    }
}

/// HumanEval's programs as a trainer sends them to `/run_code`: the prompt, a
/// completion, the tests and the call of `check`. Each canonical solution twice (it
/// passes) and a wrong answer for each problem (it fails), three times over, with
/// whether each passes.
fn humaneval_programs() -> Vec<(Value, bool)> {
    let mut programs = Vec::new();
    for problem in humaneval_problems() {
        let program = |completion: &str| {
            format!(
                "{}{completion}\n{}\ncheck({})\n",
                problem["prompt"].as_str().unwrap(),
                problem["test"].as_str().unwrap(),
                problem["entry_point"].as_str().unwrap()
            )
        };
        let canonical = program(problem["canonical_solution"].as_str().unwrap());
        programs.push((canonical.clone(), true));
        programs.push((program("    return None\n"), false));
        programs.push((canonical, true));
    }
    // Three rounds, so that the run lasts well past the kill.
    let rounds = [programs.clone(), programs.clone(), programs].concat();
    rounds.into_iter().enumerate().map(|(id, (code, passes))| (json!({"id": id, "code": code}), passes)).collect()
}

/// The Compose stack under a trainer's load, with one of its three replicas killed
/// (`docker kill`, SIGKILL) once a quarter of the calls are answered, while it serves:
/// nginx hands what that replica could not answer to the others, and every call gets
/// its verdict, each the one its program deserves.
#[test]
fn three_replicas_behind_nginx_lose_no_call_when_one_is_killed_mid_run() {
    let test = "three_replicas_behind_nginx_lose_no_call_when_one_is_killed_mid_run";
    if !compose_can_run(test) {
        return;
    }
    let _machine = passk_tests::machine_to_myself();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let stack = stack(port);
    let up = finish(&mut stack.compose(&["up", "-d", "--build"]));
    assert_eq!(up.code, Some(0), "docker-compose up: {}{}", up.stdout, up.stderr);
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while passk_tests::server::curl("GET", &format!("{url}/readyz"), None, &[]).status != 200 {
        assert!(Instant::now() < deadline, "nginx never answered ready");
        std::thread::sleep(Duration::from_millis(200));
    }

    // The replicas run privileged (deploy/compose says why): a candidate still sees only
    // the devices the sandbox passes through, none of the host's.
    let devices = json!({"code": "import os\nprint(sorted(os.listdir('/dev')))", "language": "python"});
    let answer = passk_tests::server::post_json(&format!("{url}/run_code"), &devices);
    assert_eq!(
        answer.json()["run_result"]["stdout"],
        "['fd', 'full', 'null', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'urandom', 'zero']\n",
        "{}",
        answer.body
    );

    let dir = tempfile::tempdir().unwrap();
    let programs = humaneval_programs();
    let cases: Vec<Value> = programs.iter().map(|(case, _)| case.clone()).collect();
    let (cases_path, answers_path) = (dir.path().join("cases.jsonl"), dir.path().join("answers.jsonl"));
    write_jsonl(&cases_path, &cases);
    let client = Command::new(passk_tests::server::client_python())
        .arg(repo_root().join("tests/serve/replicas_client.py"))
        .arg(format!("{url}/run_code"))
        .args([&cases_path, &answers_path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // A quarter of the way in, a replica that has been answering is killed. Whether it
    // answered is asked first, at a tenth: a `docker exec` takes a while.
    let victim = stack.container("passk-2");
    let deadline = Instant::now() + Duration::from_secs(300);
    let answered = || std::fs::read_to_string(&answers_path).map_or(0, |text| text.lines().count());
    let wait_for = |count: usize| {
        while answered() < count {
            assert!(Instant::now() < deadline, "the load stalled at {} answers", answered());
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_for(cases.len() / 10);
    let metrics =
        finish(Command::new("docker").args(["exec", &victim, "python3", "-c"]).arg(
            "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8080/metrics').read().decode())",
        ));
    let served: u64 = metrics
        .stdout
        .lines()
        .filter(|line| line.starts_with("passk_requests_total{endpoint=\"run_code\""))
        .map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(served > 0, "the replica killed was serving: {}{}", metrics.stdout, metrics.stderr);
    wait_for(cases.len() / 4);
    let killed = finish(Command::new("docker").args(["kill", &victim]));
    assert_eq!(killed.code, Some(0), "{}", killed.stderr);
    let at_kill = answered();
    assert!(at_kill < cases.len(), "calls remained when the replica was killed");

    let output = client.wait_with_output().unwrap();
    assert!(output.status.success(), "the client: {}", String::from_utf8_lossy(&output.stderr));
    let answers = read_jsonl(&answers_path);
    assert_eq!(answers.len(), cases.len(), "every call answered");
    let mut by_id = BTreeMap::new();
    for answer in &answers {
        assert!(by_id.insert(answer["id"].as_u64().unwrap(), answer).is_none(), "one answer per call");
    }
    let mut wrong = Vec::new();
    for (id, (_, passes)) in programs.iter().enumerate() {
        let answer = by_id[&(id as u64)];
        assert_ne!(answer["status"], "lost", "a call was lost: {answer}");
        assert_ne!(answer["result"], -1, "every call got a verdict: {answer}");
        if (answer["result"] == true) != *passes {
            wrong.push(answer);
        }
    }
    assert!(wrong.is_empty(), "verdicts that are not the program's: {wrong:#?}");

    // nginx's log shows the kill was felt: some request went to a second replica.
    let logs = finish(&mut stack.compose(&["logs", "--no-color", "nginx"]));
    let retried = logs.stdout.lines().filter(|line| line.contains("upstream=[") && line.contains(", ")).count();
    let summary = String::from_utf8_lossy(&output.stdout);
    let line = format!(
        "\ndeploy tests: {} calls, a replica killed after {at_kill}; nginx retried {retried} on another replica; client: {}\n",
        cases.len(),
        summary.trim()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    assert!(
        retried > 0,
        "nginx handed no request on: {}",
        logs.stdout.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
}

/// The README's block of commands under `<!-- tests/end_to_end/deploy.rs {how} -->`.
fn readme_block(how: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let marker = format!("<!-- tests/end_to_end/deploy.rs {how} -->\n```sh\n");
    let start =
        readme.find(&marker).unwrap_or_else(|| panic!("the README's Deploy section has {marker}")) + marker.len();
    readme[start..][..readme[start..].find("```\n").unwrap()].to_owned()
}

/// A PATH with passk's folder first.
fn path_with_passk(first: &[PathBuf]) -> std::ffi::OsString {
    std::env::join_paths(
        first
            .iter()
            .cloned()
            .chain([passk_binary().parent().unwrap().to_owned()])
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap()
}

/// The README's Slurm commands, as written, in a folder of a user's with HumanEval
/// fetched: `passk canonical` makes the samples, submit.sh runs them in shards under the
/// stand-in sbatch, and the merge says every canonical solution passed.
#[test]
fn the_readmes_slurm_commands_work_as_written() {
    let _machine = passk_tests::machine_to_myself();
    let work = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo_root().join("deploy"), work.path().join("deploy")).unwrap();
    std::fs::create_dir_all(work.path().join("problems/humaneval")).unwrap();
    let gz = "HumanEval.jsonl.gz";
    std::fs::copy(humaneval_dir().join(gz), work.path().join("problems/humaneval").join(gz)).unwrap();
    let finished = finish(
        Command::new("bash")
            .args(["-euo", "pipefail", "-c", &readme_block("runs this block as written")])
            .env("PATH", path_with_passk(&[repo_root().join("tests/deploy/bin")]))
            .env("FAKE_SLURM_STATE", work.path().join("state"))
            .current_dir(work.path()),
    );
    assert_eq!(finished.code, Some(0), "{}{}", finished.stdout, finished.stderr);
    let merged = read_jsonl(&work.path().join("results/merged.jsonl"));
    assert_eq!(merged.len(), 164);
    assert!(merged.iter().all(|line| line["passed"] == true));
    assert_eq!(read_json(&work.path().join("results/summary.json"))["pass@1"], 1.0);
}

/// The README's Compose commands, as written, from the checkout: the stack comes up,
/// answers a program through nginx and goes down. The block's `cargo build` is the
/// suite's own build (this test's passk, which may be a debug build), given to Compose
/// as PASSK_BINARY.
#[test]
fn the_readmes_compose_commands_work_as_written() {
    let test = "the_readmes_compose_commands_work_as_written";
    if !compose_can_run(test) {
        return;
    }
    let _machine = passk_tests::machine_to_myself();
    let free = std::net::TcpListener::bind("127.0.0.1:8090").map(drop);
    assert!(free.is_ok(), "the README's commands listen on port 8090, which something else holds here: {free:?}");
    let block = readme_block("runs this Compose block as written");
    let (built, commands): (Vec<&str>, Vec<&str>) = block.lines().partition(|line| line.starts_with("cargo build "));
    assert_eq!(built, ["cargo build --release --locked -p passk-cli"]);
    let stack = stack(8090);
    let mut command = Command::new("bash");
    command.args(["-euo", "pipefail", "-c", &commands.join("\n")]).current_dir(repo_root());
    for (name, value) in &stack.env {
        // The block names the base; the port is its own.
        if name != "PASSK_BASE" && name != "PASSK_PORT" {
            command.env(name, value);
        }
    }
    let finished = finish(command.env("COMPOSE_PROJECT_NAME", &stack.project));
    assert_eq!(finished.code, Some(0), "{}{}", finished.stdout, finished.stderr);
    // docker-compose's build says its steps on standard output; then curl prints the
    // probe's `ready` line and the answer.
    let lines: Vec<&str> = finished.stdout.lines().collect();
    assert!(
        lines.len() >= 2 && lines[lines.len() - 2] == "ready",
        "the probe through nginx said ready first: {}",
        finished.stdout
    );
    let answer: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    assert_eq!(answer["run_result"]["stdout"], "42\n", "{answer:#}");
    let left = finish(&mut stack.compose(&["ps", "-q"]));
    assert_eq!(left.stdout.trim(), "", "the block's last command took the stack down");
}

/// The README's kubectl commands cannot run without a cluster: each manifest they apply
/// is one of deploy/kubernetes (which the schema test checks), every manifest is
/// applied, and each object they wait for or read is one the manifests make.
#[test]
fn the_readmes_kubectl_commands_name_the_manifests_and_their_objects() {
    let block = readme_block("checks this block's files and names");
    let manifests = manifests();
    let mut applied: Vec<String> = block
        .split_whitespace()
        .filter(|word| word.starts_with("deploy/kubernetes/"))
        .map(|word| word.trim_start_matches("deploy/kubernetes/").to_owned())
        .collect();
    applied.sort();
    applied.dedup();
    let mut files: Vec<String> = std::fs::read_dir(repo_root().join("deploy/kubernetes"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    files.sort();
    assert_eq!(applied, files, "the block applies every manifest, and only them");
    for word in block.split_whitespace() {
        for (prefix, kind) in [("job/", "Job"), ("pod/", "Pod"), ("deployment/", "Deployment"), ("svc/", "Service")] {
            if let Some(name) = word.strip_prefix(prefix) {
                assert!(manifests.contains_key(&format!("{kind}/{name}")), "{word}: no such object in the manifests");
            }
        }
    }
    for line in block.lines().filter(|line| line.starts_with("kubectl ")) {
        let verb = line.split_whitespace().nth(1).unwrap();
        assert!(["apply", "wait", "exec", "cp", "delete", "logs", "port-forward"].contains(&verb), "{line}");
    }
}
