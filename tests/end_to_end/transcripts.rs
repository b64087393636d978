//! Every command's whole standard output and standard error, pinned: what a user sees is
//! part of passk's behaviour, so a change to it shows in review as a changed snapshot.
//! Paths, times and the machine's control groups are redacted; everything else is as
//! printed.

use std::path::Path;

use passk_tests::{finish, passk, repo_root, Finished};

/// One command as a user would see it in a terminal log.
fn transcript(command: &mut std::process::Command) -> String {
    let shown: Vec<String> = command.get_args().map(|arg| arg.to_string_lossy().into_owned()).collect();
    let Finished { code, stdout, stderr } = finish(command);
    let code = code.map_or("a signal".to_owned(), |code| code.to_string());
    format!("$ passk {}\n[exit {code}]\n--- stdout\n{stdout}--- stderr\n{stderr}", shown.join(" "))
}

/// Pins `transcripts` (joined) as the snapshot `name`, with `dir` and the checkout's
/// path, times and the machine's control groups redacted.
fn pin(name: &str, dir: &Path, transcripts: &[String]) {
    let dir = dir.display().to_string();
    let root = repo_root().display().to_string();
    let filters = vec![
        (dir.as_str(), "[dir]"),
        (root.as_str(), "[repo]"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[time]"),
        (r"\(\d+\.\d s\)", "([seconds])"),
        (r"(?m)^(  cgroups +).*$", "$1[redacted]"),
    ];
    insta::with_settings!({ filters => filters, prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, transcripts.join("\n"));
    });
}

/// `evaluate` on the bundled set, then the same command again, which runs nothing.
#[test]
fn evaluate_and_its_repeat_say_what_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let samples = repo_root().join("problems/basic-samples.jsonl");
    let run = || {
        let mut command = passk(["evaluate"]);
        command.arg(&samples).args(["--problems", "basic", "--results"]).arg(&results);
        command.arg("--report").arg(dir.path().join("report.md"));
        command
    };
    let first = transcript(&mut run());
    let again = transcript(&mut run());
    pin("evaluate", dir.path(), &[first, again]);
}

/// `score` and `compare` on results of the bundled set, executing nothing.
#[test]
fn score_and_compare_print_their_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let samples = repo_root().join("problems/basic-samples.jsonl");
    let answers = repo_root().join("problems/basic-chat-answers.jsonl");
    for (input, results, extra) in [(&samples, &a, &[][..]), (&answers, &b, &["--extract", "--partial"][..])] {
        let mut command = passk(["evaluate"]);
        command.arg(input).args(["--problems", "basic", "--results"]).arg(results).args(extra);
        let finished = finish(&mut command);
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    }
    let mut score = passk(["score"]);
    score.arg(&a).args(["--k", "1,2"]);
    let mut compare = passk(["compare"]);
    compare.arg(&a).arg(&b).arg("--intersect");
    pin("score-and-compare", dir.path(), &[transcript(&mut score), transcript(&mut compare)]);
}

/// `calc`, in words and as JSON, and a count it refuses.
#[test]
fn calc_prints_its_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let transcripts = [
        transcript(passk(["calc", "--n", "10", "--c", "3", "--k", "1,5"]).current_dir(dir.path())),
        transcript(passk(["calc", "--n", "10", "--c", "3", "--k", "5", "--json"]).current_dir(dir.path())),
        transcript(passk(["calc", "--n", "3", "--c", "5", "--k", "1"]).current_dir(dir.path())),
    ];
    pin("calc", dir.path(), &transcripts);
}

/// `validate` and `canonical` on the bundled set and a committed MBPP fixture.
#[test]
fn validate_and_canonical_report_the_canonical_solutions() {
    let dir = tempfile::tempdir().unwrap();
    let mbpp = repo_root().join("problems/formats/mbpp.jsonl");
    let mut validate = passk(["validate", "--problems", "basic"]);
    let mut canonical = passk(["canonical", "--problems"]);
    canonical.arg(&mbpp);
    pin("validate-and-canonical", dir.path(), &[transcript(&mut validate), transcript(&mut canonical)]);
}

/// `help` and its commands' help: the whole command line, as users read it.
#[test]
fn help_shows_every_command_and_option() {
    let dir = tempfile::tempdir().unwrap();
    let mut transcripts = vec![transcript(&mut passk(["help"]))];
    for command in ["evaluate", "score", "compare", "calc", "validate", "canonical"] {
        transcripts.push(transcript(&mut passk(["help", command])));
    }
    pin("help", dir.path(), &transcripts);
}

/// Mistakes, each with its one message and exit code.
#[test]
fn mistakes_get_one_message_and_their_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let samples = repo_root().join("problems/basic-samples.jsonl");
    let missing = dir.path().join("missing.jsonl");
    let mut no_samples = passk(["evaluate"]);
    no_samples.arg(&missing).args(["--problems", "basic"]);
    let mut samples_as_results = passk(["score"]);
    samples_as_results.arg(&samples);
    let transcripts = [
        transcript(&mut no_samples),
        transcript(&mut samples_as_results),
        transcript(passk(["evaluate"]).arg(&samples).args(["--problems", "humaneval-plus"])),
        transcript(&mut passk(["help", "nonsense"])),
        transcript(&mut passk(["nonsense"])),
    ];
    pin("mistakes", dir.path(), &transcripts);
}
