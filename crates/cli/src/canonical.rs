//! Problems' own canonical solutions: `passk validate`, which runs them to check a problem
//! set before it is used, and `passk canonical`, which writes them as a samples file.

use std::collections::BTreeSet;

use passk_eval::canonical::Validation;
use passk_eval::languages::Toolchains;
use passk_runner::{Pool, Status};

use crate::error::CommandError;
use crate::say::say;
use passk_formats::problems::ProblemSet;
use passk_formats::InputError;
use passk_report::words::{agree, plural};

/// `passk validate`: whether every canonical solution passes, and comfortably.
pub async fn validate(
    pool: &mut Pool,
    problems: &ProblemSet,
    toolchains: &Toolchains,
    close: f64,
) -> Result<(), CommandError> {
    let timeout = pool.options().timeout.as_secs_f64();
    warn_if_placeholders(problems);
    let Validation { failing, slow, missing } =
        passk_eval::canonical::validate(pool, problems, toolchains, close).await?;
    let checked = problems.problems.len() - missing.len();
    let mut report = format!(
        "{} of {}: {} pass, {} fail, {} close to the limit\n",
        plural(checked, "canonical solution"),
        problems.name,
        checked - failing.len(),
        failing.len(),
        slow.len()
    );
    for (task_id, status, detail) in &failing {
        report.push_str(&format!("  fails     {task_id}  {status} ({detail})\n"));
    }
    if failing.iter().any(|(_, status, _)| *status == Status::Timeout) {
        // MBPP's task 123 takes seconds: a slow solution is not a broken one.
        report.push_str(&format!(
            "  a time-out may only want more time: validate again with --timeout above {timeout} s; evaluate runs a \
             sample's time-out again under --time-limit-factor x its canonical solution's time\n"
        ));
    }
    for (task_id, seconds) in &slow {
        report.push_str(&format!("  slow      {task_id}  {seconds:.2} s of the {timeout} s limit\n"));
    }
    if !missing.is_empty() {
        let (problems, have) = (plural(missing.len(), "problem"), agree(missing.len(), "has", "have"));
        report.push_str(&format!("  {problems} {have} no canonical solution: {}\n", missing.join(", ")));
    }
    crate::say::print(report.as_bytes())?;
    if failing.is_empty() {
        Ok(())
    } else {
        Err(CommandError::InvalidProblems { failing: failing.len() })
    }
}

/// Warns where every canonical solution is one program: SandboxFusion's LiveCodeBench
/// sample gives `import sys; sys.exit(0)` for each, which fails every problem.
fn warn_if_placeholders(problems: &ProblemSet) {
    let solutions: BTreeSet<&str> =
        problems.problems.iter().filter_map(|problem| problem.canonical_solution.as_deref()).collect();
    let given = problems.problems.iter().filter(|problem| problem.canonical_solution.is_some()).count();
    if given > 1 && solutions.len() == 1 {
        say!(
            "warning: every one of the {given} canonical solutions is the same program, so they are likely \
             placeholders, not solutions; their samples will fail: {}",
            solutions.first().copied().unwrap_or_default().trim().chars().take(80).collect::<String>()
        );
    }
}

/// `passk canonical`: the set's canonical solutions as a samples file, in set order, to
/// `output` (written whole or not at all) or standard output.
pub fn write_samples(
    problems: &str,
    format: Option<passk_formats::problems::Format>,
    output: Option<&std::path::Path>,
) -> Result<(), CommandError> {
    if let Some(path) = output {
        passk_formats::write::check_writable(path)
            .map_err(|source| InputError::unwritable("--output", path, source))?;
    }
    let problems_path = problems;
    let problems = ProblemSet::load(problems, &passk_formats::problems::SetOptions { format, ..Default::default() })?;
    let mut text = Vec::new();
    let mut missing = Vec::new();
    for problem in &problems.problems {
        match &problem.canonical_solution {
            Some(solution) => {
                let sample = serde_json::json!({ "task_id": problem.task_id, "completion": solution });
                serde_json::to_writer(&mut text, &sample).expect("a sample serializes");
                text.push(b'\n');
            }
            None => missing.push(problem.task_id.clone()),
        }
    }
    if !problems.problems.is_empty() && missing.len() == problems.problems.len() {
        return Err(CommandError::NoCanonicalSolutions { path: problems_path.to_owned(), problems: missing.len() });
    }
    warn_if_placeholders(&problems);
    if !missing.is_empty() {
        say!(
            "warning: {} {} no canonical solution and {} left out (evaluate the samples with --partial): {}",
            plural(missing.len(), "problem"),
            agree(missing.len(), "has", "have"),
            agree(missing.len(), "is", "are"),
            missing.join(", ")
        );
    }
    match output {
        Some(path) => passk_formats::write::write_atomically(path, &text)
            .map_err(|source| CommandError::Write { path: path.display().to_string(), source }),
        None => crate::say::print(&text),
    }
}
