//! The pipeline as a library, used as a service would use it: a problem set and samples
//! in memory, verdicts out as they are decided, no samples file, no results file, no
//! lock and no journal. Its verdicts must be the CLI's on the same samples.

use std::time::Duration;

use passk_eval::events::{EventSink, Unwatched};
use passk_eval::judge::{Judge, Submission};
use passk_eval::workers::WorkerOptions;
use passk_formats::problems::{ProblemSet, SetOptions};
use passk_runner::{CancellationToken, Candidate, Limits, SandboxMode, Verdict, VerdictMode};
use passk_tests::{finish, passk, passk_binary, read_jsonl, repo_root};

/// Every verdict sent for a batch, by the sample's position.
async fn judged(judge: &mut Judge, samples: Vec<Submission>) -> Vec<Verdict> {
    let count = samples.len();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    judge.judge(samples, sender, &CancellationToken::new()).await.unwrap();
    let mut verdicts: Vec<Option<Verdict>> = vec![None; count];
    while let Ok((index, verdict)) = receiver.try_recv() {
        assert!(verdicts[index].replace(verdict).is_none(), "sample {index} got two verdicts");
    }
    verdicts
        .into_iter()
        .enumerate()
        .map(|(index, verdict)| verdict.unwrap_or_else(|| panic!("no verdict for {index}")))
        .collect()
}

#[test]
fn a_judge_in_memory_gives_the_clis_verdicts_and_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let samples_path = repo_root().join("problems/basic-samples.jsonl");
    let results = dir.path().join("results.jsonl");
    let cli = finish(passk(["evaluate"]).arg(&samples_path).args(["--problems", "basic", "--results"]).arg(&results));
    assert_eq!(cli.code, Some(0), "{}", cli.stderr);
    let cli_statuses: Vec<String> =
        read_jsonl(&results).iter().map(|line| line["status"].as_str().unwrap().to_owned()).collect();

    let problems = ProblemSet::load("basic", &SetOptions::default()).unwrap();
    let samples: Vec<Submission> = read_jsonl(&samples_path)
        .iter()
        .map(|sample| Submission {
            problem: problems.position(sample["task_id"].as_str().unwrap()).unwrap(),
            candidate: Candidate::Completion(sample["completion"].as_str().unwrap().to_owned()),
            timeout: None,
        })
        .collect();
    // The only folder the library is given, for expected outputs, which this set has none of.
    let cache = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let workers = WorkerOptions {
            jobs: 2,
            timeout: Duration::from_secs(3),
            sandbox: SandboxMode::Auto,
            verdicts: VerdictMode::Judge,
            limits: Limits::default(),
            python: "python3".into(),
            allowed_packages: Vec::new(),
        };
        let mut pool = workers.pool_options(workers.interpreter().await.unwrap()).unwrap();
        // This test's executable is not passk's, whose helper commands the sandbox runs.
        pool.helper = passk_binary().to_owned();
        let events: EventSink = std::sync::Arc::new(Unwatched);
        let set = SetOptions::default();
        let mut judge =
            Judge::start(problems, &set, pool, cache.path(), &CancellationToken::new(), &events).await.unwrap();
        let first = judged(&mut judge, samples.clone()).await;
        let statuses: Vec<String> = first.iter().map(|verdict| verdict.status.as_str().to_owned()).collect();
        assert_eq!(statuses, cli_statuses, "the library's verdicts are the CLI's");

        // The same workers judge the next batch.
        let again = judged(&mut judge, samples[..6].to_vec()).await;
        let statuses_again: Vec<&str> = again.iter().map(|verdict| verdict.status.as_str()).collect();
        assert_eq!(statuses_again, cli_statuses[..6].iter().map(String::as_str).collect::<Vec<_>>());

        // A sample for a problem the set lacks is refused, not run.
        let stray = Submission { problem: 10_000, candidate: Candidate::Completion(String::new()), timeout: None };
        let (sender, _receiver) = tokio::sync::mpsc::unbounded_channel();
        let refused = judge.judge(vec![stray], sender, &CancellationToken::new()).await;
        assert!(matches!(refused, Err(passk_eval::EvalError::NoSuchProblem { problem: 10_000, .. })), "{refused:?}");
        judge.stop().await;
    });
    let written: Vec<std::path::PathBuf> =
        std::fs::read_dir(cache.path()).unwrap().map(|entry| entry.unwrap().path()).collect();
    assert!(written.is_empty(), "the library wrote {written:?}");
}
