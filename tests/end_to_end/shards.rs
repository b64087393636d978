//! Sharded runs: `passk evaluate --shard K/N` on N machines, then `passk merge`, must
//! give the file and summary one run gives, whatever happened to a shard on the way,
//! and must refuse, by name, any set of shards that would give anything else.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use passk_tests::{
    finish, humaneval_canonical_samples, humaneval_dir, passk, read_jsonl, repo_root, write_jsonl, Finished,
};
use serde_json::{json, Value};

/// What differs between two runs of one command however alike they are: measurements
/// of time and memory, and where the results were written.
const MEASURED: [&str; 7] =
    ["duration", "memory_peak_bytes", "cpu_seconds", "started_at", "finished_at", "seconds", "harness_peak_rss_kib"];

fn without_measurements(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !MEASURED.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), without_measurements(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_measurements).collect()),
        other => other.clone(),
    }
}

/// The results file's lines, in order, each as its text without the measurements: key
/// order counts, as it does for a byte comparison.
fn results_text(path: &Path) -> Vec<String> {
    read_jsonl(path).iter().map(|line| without_measurements(line).to_string()).collect()
}

fn summary(path: &Path) -> Value {
    let mut summary = without_measurements(&serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap());
    summary["settings"].as_object_mut().unwrap().shift_remove("results");
    summary
}

/// A run of `samples` on `problems` in `dir`, with these extra options.
struct Runs<'a> {
    dir: &'a Path,
    samples: PathBuf,
    problems: &'a str,
    options: Vec<String>,
}

impl<'a> Runs<'a> {
    fn new(dir: &'a Path, samples: &[Value], problems: &'a str, options: &[&str]) -> Runs<'a> {
        let path = dir.join("samples.jsonl");
        write_jsonl(&path, samples);
        Runs { dir, samples: path, problems, options: options.iter().map(|&option| option.to_owned()).collect() }
    }

    fn evaluate(&self, results: &str, extra: &[&str]) -> Command {
        let mut command = passk(["evaluate"]);
        command
            .arg(&self.samples)
            .args(["--problems", self.problems, "--k", "1", "--results"])
            .arg(self.dir.join(results))
            .args(&self.options)
            .args(extra);
        command
    }

    fn whole(&self) -> (PathBuf, PathBuf) {
        let (results, summary) = (self.dir.join("whole.jsonl"), self.dir.join("whole.json"));
        let run = finish(&mut self.evaluate("whole.jsonl", &["--summary", summary.to_str().unwrap()]));
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        (results, summary)
    }

    fn shard(&self, k: usize, n: usize) -> Finished {
        finish(&mut self.evaluate(&format!("shard-{k}.jsonl"), &["--shard", &format!("{k}/{n}")]))
    }

    fn shards(&self, n: usize) -> Vec<PathBuf> {
        (1..=n)
            .map(|k| {
                let run = self.shard(k, n);
                assert_eq!(run.code, Some(0), "shard {k}/{n}: {}", run.stderr);
                self.dir.join(format!("shard-{k}.jsonl"))
            })
            .collect()
    }

    fn merge(&self, shards: &[PathBuf], output: &str, extra: &[&str]) -> Finished {
        let summary = self.dir.join(format!("{output}.summary.json"));
        finish(
            passk(["merge"])
                .args(shards)
                .arg("--output")
                .arg(self.dir.join(output))
                .args(["--k", "1", "--summary"])
                .arg(summary)
                .args(extra),
        )
    }

    fn merged_equals_whole(&self, merged: &str, whole: &(PathBuf, PathBuf)) -> Value {
        let output = self.dir.join(merged);
        assert_eq!(results_text(&output), results_text(&whole.0), "the merged results are the single run's");
        let mut merged_summary = summary(&self.dir.join(format!("{merged}.summary.json")));
        let whole_summary = summary(&whole.1);
        // A resumed shard ran only what its interruption left, as a resumed single run does.
        let resumed_from = merged_summary["run"].as_object_mut().unwrap().shift_remove("resumed_from").unwrap();
        if resumed_from != json!(0) {
            let executions = merged_summary["run"]["executions"].as_u64().unwrap() + resumed_from.as_u64().unwrap();
            merged_summary["run"]["executions"] = json!(executions);
        }
        merged_summary["run"].as_object_mut().unwrap().insert("resumed_from".into(), json!(0));
        assert_eq!(merged_summary, whole_summary, "the merged summary is the single run's");
        resumed_from
    }
}

/// The bundled samples, honest and hostile, spread over every problem of `basic`.
fn bundled_samples() -> Vec<Value> {
    read_jsonl(&repo_root().join("problems/basic-samples.jsonl"))
}

fn task_ids(path: &Path) -> Vec<String> {
    read_jsonl(path).iter().map(|line| line["task_id"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn three_shards_merged_are_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::new(dir.path(), &bundled_samples(), "basic", &[]);
    let whole = runs.whole();
    let shards = runs.shards(3);

    // Shards split by problem: each problem's samples all in one shard, every sample in one.
    let mut seen = std::collections::BTreeSet::new();
    for shard in &shards {
        let problems: std::collections::BTreeSet<String> = task_ids(shard).into_iter().collect();
        assert_eq!(problems.len(), 8, "three shards of 24 problems hold 8 each");
        for problem in problems {
            assert!(seen.insert(problem.clone()), "{problem} is in two shards");
        }
    }
    let lines: usize = shards.iter().map(|shard| read_jsonl(shard).len()).sum();
    assert_eq!(lines, read_jsonl(&whole.0).len());

    // Given in any order.
    let reversed: Vec<PathBuf> = shards.iter().rev().cloned().collect();
    let merged = runs.merge(&reversed, "merged.jsonl", &[]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    assert!(merged.stderr.contains("merged the 3 shards' results"), "{}", merged.stderr);
    runs.merged_equals_whole("merged.jsonl", &whole);
    // The merged file is a complete run's: the same evaluate command finds it and runs nothing.
    let again = finish(&mut runs.evaluate("merged.jsonl", &[]));
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run"), "{}", again.stderr);
}

/// The real HumanEval, four shards, against the single run of its canonical solutions.
#[test]
fn four_shards_of_humaneval_merged_are_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let problems = humaneval_dir().join("HumanEval.jsonl.gz");
    let runs = Runs::new(dir.path(), &humaneval_canonical_samples(), problems.to_str().unwrap(), &[]);
    let whole = runs.whole();
    let shards = runs.shards(4);
    let sizes: Vec<usize> = shards.iter().map(|shard| read_jsonl(shard).len()).collect();
    assert_eq!(sizes, [41, 41, 41, 41], "164 problems dealt out in turn");
    let merged = runs.merge(&shards, "merged.jsonl", &[]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    runs.merged_equals_whole("merged.jsonl", &whole);
    let summary = summary(&dir.path().join("merged.jsonl.summary.json"));
    assert_eq!(summary["pass@1"], json!(1.0), "{summary:#}");
}

/// More shards than problems: the shards with none complete with empty results, and
/// the merge is still the single run. An Indexed Job's completions need not fit the set.
#[test]
fn a_shard_without_problems_completes_empty_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let samples: Vec<Value> =
        bundled_samples().into_iter().filter(|s| s["task_id"] == "basic/0" || s["task_id"] == "basic/1").collect();
    assert!(samples.len() >= 2);
    let runs = Runs::new(dir.path(), &samples, "basic", &["--partial"]);
    let whole = runs.whole();
    let shards: Vec<PathBuf> = (1..=5)
        .map(|k| {
            let run = runs.shard(k, 5);
            assert_eq!(run.code, Some(0), "shard {k}/5: {}", run.stderr);
            assert_eq!(run.stderr.contains("holds none of the problems"), k > 2, "shard {k}/5: {}", run.stderr);
            dir.path().join(format!("shard-{k}.jsonl"))
        })
        .collect();
    assert!(read_jsonl(&shards[4]).is_empty());
    let again = runs.shard(5, 5);
    assert_eq!(again.code, Some(0), "an empty shard run again runs nothing: {}", again.stderr);
    assert!(again.stderr.contains("nothing to run"), "{}", again.stderr);
    let merged = runs.merge(&shards, "merged.jsonl", &[]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    runs.merged_equals_whole("merged.jsonl", &whole);
}

/// Lines in a results file's journal, while its run is going.
fn lines_in(path: &Path) -> usize {
    std::fs::read(path).map_or(0, |text| text.iter().filter(|&&b| b == b'\n').count())
}

/// A shard interrupted part way resumes where it stopped, a finished shard run again
/// runs nothing, and the merge of them all is still the single run.
#[test]
fn an_interrupted_shard_resumes_and_a_finished_one_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let samples = passk_tests::slow_honest_samples(1, 0.3);
    let runs = Runs::new(dir.path(), &samples, "basic", &["--jobs", "2"]);
    let whole = runs.whole();

    let mut first = runs.evaluate("shard-1.jsonl", &["--shard", "1/2"]);
    let child = first.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let journal = dir.path().join("shard-1.jsonl.partial");
    let deadline = Instant::now() + Duration::from_secs(180);
    while lines_in(&journal) < 3 {
        assert!(Instant::now() < deadline, "no progress in the shard");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(libc::pid_t::try_from(child.id()).unwrap(), libc::SIGINT) };
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(interrupted.status.code(), Some(130), "{}", String::from_utf8_lossy(&interrupted.stderr));

    let second = runs.shard(2, 2);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    let shards = [dir.path().join("shard-1.jsonl"), dir.path().join("shard-2.jsonl")];
    let refused = runs.merge(&shards, "merged.jsonl", &[]);
    assert_eq!(refused.code, Some(2), "an interrupted shard is not merged: {}", refused.stderr);
    assert!(refused.stderr.contains("interrupted"), "{}", refused.stderr);
    assert!(!dir.path().join("merged.jsonl").exists(), "nothing is written from an incomplete set");

    let resumed = runs.shard(1, 2);
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert!(resumed.stderr.contains("resuming"), "{}", resumed.stderr);
    let again = runs.shard(2, 2);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run"), "{}", again.stderr);

    let merged = runs.merge(&shards, "merged.jsonl", &[]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    let resumed_from = runs.merged_equals_whole("merged.jsonl", &whole);
    assert!(resumed_from.as_u64().unwrap() >= 3, "the resumed shard kept what it had done: {resumed_from}");
}

/// Every set of shards that would not give a single run's results is refused with exit
/// status 2, naming the file at fault, and writes nothing.
#[test]
fn a_set_of_shards_that_is_not_one_whole_run_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::new(dir.path(), &bundled_samples(), "basic", &[]);
    let shards = runs.shards(3);
    let path = |name: &str| dir.path().join(name);
    let refused = |shards: &[PathBuf], extra: &[&str], expected: &str| {
        let merged = runs.merge(shards, "merged.jsonl", extra);
        assert_eq!(merged.code, Some(2), "{expected}: {}", merged.stderr);
        assert!(merged.stderr.contains(expected), "expected {expected:?} in: {}", merged.stderr);
        assert_eq!(merged.stderr.matches("error:").count(), 1, "one error: {}", merged.stderr);
        assert!(!path("merged.jsonl").exists(), "nothing written: {}", merged.stderr);
    };

    refused(&shards[..2], &[], "no results given for shard 3/3");
    let before = std::fs::read(&shards[1]).unwrap();
    let onto_a_shard = runs.merge(&shards, "shard-2.jsonl", &[]);
    assert_eq!(onto_a_shard.code, Some(2), "{}", onto_a_shard.stderr);
    assert!(onto_a_shard.stderr.contains("is one of the shards' results"), "{}", onto_a_shard.stderr);
    assert_eq!(std::fs::read(&shards[1]).unwrap(), before, "the shard is left as it was");
    refused(&[shards[0].clone(), shards[1].clone(), shards[1].clone(), shards[2].clone()], &[], "are both shard 2/3");

    // The same samples, in four shards.
    let other_count = runs.evaluate("other-count.jsonl", &["--shard", "2/4"]).status().unwrap();
    assert!(other_count.success());
    refused(&[shards[0].clone(), path("other-count.jsonl"), shards[2].clone()], &[], "shards of one run share their N");

    // The same shard, another time limit.
    let other = finish(&mut runs.evaluate("other.jsonl", &["--shard", "2/3", "--timeout", "5"]));
    assert_eq!(other.code, Some(0), "{}", other.stderr);
    refused(&[shards[0].clone(), path("other.jsonl"), shards[2].clone()], &[], "is a shard of another run");

    // The same samples and problems named by other paths are the same run.
    let absolute = finish(
        passk(["evaluate"])
            .arg(runs.samples.canonicalize().unwrap())
            .arg("--problems")
            .arg(repo_root().join("problems/basic.jsonl"))
            .args(["--k", "1", "--shard", "2/3", "--results"])
            .arg(path("absolute.jsonl")),
    );
    assert_eq!(absolute.code, Some(0), "{}", absolute.stderr);
    let merged = runs.merge(&[shards[0].clone(), path("absolute.jsonl"), shards[2].clone()], "merged.jsonl", &[]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
    std::fs::remove_file(path("merged.jsonl")).unwrap();

    // A whole run's results.
    let whole = runs.whole();
    refused(&[shards[0].clone(), whole.0, shards[2].clone()], &[], "holds a whole run's results, not a shard's");

    // Results edited since their run: a verdict turned.
    let edited = path("edited.jsonl");
    std::fs::copy(&shards[1], &edited).unwrap();
    std::fs::copy(path("shard-2.jsonl.run.json"), path("edited.jsonl.run.json")).unwrap();
    let text = std::fs::read_to_string(&edited).unwrap().replacen("\"passed\":false", "\"passed\":true", 1);
    std::fs::write(&edited, text).unwrap();
    refused(&[shards[0].clone(), edited, shards[2].clone()], &[], "changed since its run");

    // Results without their run's record.
    let bare = path("bare.jsonl");
    std::fs::copy(&shards[1], &bare).unwrap();
    refused(&[shards[0].clone(), bare, shards[2].clone()], &[], "bare.jsonl.run.json is missing");

    // The samples changed after the shards ran.
    let mut samples = bundled_samples();
    samples.truncate(samples.len() - 1);
    write_jsonl(&runs.samples, &samples);
    refused(&shards, &[], "changed since the shards ran");

    // Moved: the samples file is given where it is now, and must be the one they ran.
    let moved = path("moved.jsonl");
    write_jsonl(&moved, &bundled_samples());
    std::fs::remove_file(&runs.samples).unwrap();
    refused(&shards, &[], "give it with --samples");
    let merged = runs.merge(&shards, "merged.jsonl", &["--samples", moved.to_str().unwrap()]);
    assert_eq!(merged.code, Some(0), "{}", merged.stderr);
}

/// A shard that is not K/N of N is refused before anything runs, saying what is.
#[test]
fn a_malformed_shard_is_refused_with_the_form_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let runs = Runs::new(dir.path(), &bundled_samples(), "basic", &[]);
    for (shard, expected) in [
        ("0/3", "shards of 3 are numbered 1 to 3"),
        ("4/3", "shards of 3 are numbered 1 to 3"),
        ("1/0", "asks for 0 shards"),
        ("2", "is not K/N"),
        ("one/two", "is not K/N"),
    ] {
        let run = finish(&mut runs.evaluate("results.jsonl", &["--shard", shard]));
        assert_eq!(run.code, Some(2), "{shard}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{shard}: {}", run.stderr);
        assert!(run.stderr.contains("such as 2/8"), "{shard}: {}", run.stderr);
        assert!(!dir.path().join("results.jsonl").exists());
    }
}

/// The README's sharded run, as written: three shards and their merge.
#[test]
fn the_readmes_sharded_run_works_as_written() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let marker = "<!-- tests/end_to_end/shards.rs runs this block as written -->\n```sh\n";
    let start = readme.find(marker).expect("the README's sharded runs section has its tested block") + marker.len();
    let block = &readme[start..][..readme[start..].find("```\n").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let binaries = passk_tests::passk_binary().parent().unwrap().to_owned();
    let path = std::env::join_paths(
        std::iter::once(binaries).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let finished =
        finish(Command::new("bash").args(["-euo", "pipefail", "-c", block]).env("PATH", path).current_dir(dir.path()));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["pass@1"], json!(1.0), "the canonical solutions all pass: {summary:#}");
    let results = read_jsonl(&dir.path().join("results.jsonl"));
    assert_eq!(results.len(), 24, "one line per problem of the bundled set");
    assert!(results.iter().all(|line| line["passed"] == json!(true)));
}

/// Regression: shards run in their own directory record the samples by the relative path
/// they were given, and a merge run from elsewhere looked for it in its own directory and
/// failed unless told `--samples`. It finds it beside the shards' results.
#[test]
fn a_merge_run_elsewhere_finds_the_samples_the_shards_named_by_a_relative_path() {
    let dir = tempfile::tempdir().unwrap();
    let honest: Vec<Value> = bundled_samples()
        .into_iter()
        .filter(|sample| !sample["kind"].as_str().unwrap().starts_with("hostile"))
        .collect();
    write_jsonl(&dir.path().join("samples.jsonl"), &honest);
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let results = format!("shard-{k}.jsonl");
        let args =
            ["evaluate", "samples.jsonl", "--problems", "basic", "--k", "1", "--shard", &shard, "--results", &results];
        let run = finish(passk(args).current_dir(dir.path()));
        assert_eq!(run.code, Some(0), "shard {k}/2: {}", run.stderr);
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let merged = elsewhere.path().join("merged.jsonl");
    let run = finish(
        passk(["merge"])
            .arg(dir.path().join("shard-1.jsonl"))
            .arg(dir.path().join("shard-2.jsonl"))
            .arg("--output")
            .arg(&merged)
            .args(["--k", "1"])
            .current_dir(elsewhere.path()),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_jsonl(&merged).len(), honest.len());
}
