//! What is wrong with a file passk reads: every message names the file and, where there
//! is one, the line and the field or value at fault.

use std::path::Path;

use thiserror::Error;

/// A problem in a file or record that cannot be used. Every message names the file and,
/// where there is one, the line and the field or value at fault.
#[derive(Debug, Error)]
pub enum InputError {
    #[error("{path}: cannot open")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: cannot read the line")]
    Read {
        path: String,
        line: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: not valid JSON: {message}")]
    Json { path: String, line: usize, message: String },
    #[error("{path}:{line}: expected a JSON object")]
    NotObject { path: String, line: usize },
    #[error("{path}:{line}: field `{field}` is missing")]
    Missing { path: String, line: usize, field: &'static str },
    #[error("{path}:{line}: field `{field}` must be {expected}")]
    WrongType { path: String, line: usize, field: &'static str, expected: &'static str },
    #[error("{path}:{line}: field `{field}` {message}")]
    Field { path: String, line: usize, field: &'static str, message: String },
    #[error("{path}:{line}: field `language` is {language:?}: passk runs Python problems only")]
    OtherLanguage { path: String, line: usize, language: String },
    #[error("{path}:{line}: field `language` is {language:?}, which passk does not run; it runs {known}")]
    UnknownLanguage { path: String, line: usize, language: String, known: String },
    #[error("{path}:{line}: task {task_id}: {why}")]
    LanguageRefused { path: String, line: usize, task_id: String, why: String },
    #[error("{path}:{line}: cannot tell the format from the fields ({fields}); name it with --format")]
    UnknownFormat { path: String, line: usize, fields: String },
    #[error(
        "{path}:{line}: this is a samples file (fields {fields}), given as --problems, which takes a problem set{hint}"
    )]
    SamplesAsProblems { path: String, line: usize, fields: String, hint: &'static str },
    #[error("{path}:{line}: this is a samples file (fields {fields}), which has no verdicts; `passk evaluate {path} --problems PROBLEMS` runs its samples and writes their results")]
    SamplesAsResults { path: String, line: usize, fields: String },
    #[error("{path}:{line}: this is a problem set (fields {fields}), which has no verdicts; results are what `passk evaluate SAMPLES --problems {path}` writes (SAMPLES_results.jsonl)")]
    ProblemsAsResults { path: String, line: usize, fields: String },
    #[error("{path}:{line}: this is a problem set (fields {fields}), given as the samples; are the two files swapped? the command is `passk evaluate SAMPLES --problems PROBLEMS`")]
    ProblemsAsSamples { path: String, line: usize, fields: String },
    #[error("{path}:{line}: task {task_id}: none of the functions the reference `code` defines is called by `test_list`, so the entry point is unknown")]
    NoEntryPoint { path: String, line: usize, task_id: String },
    #[error("--verdicts in-process runs test code with the candidate; {path} is in the {format} format, whose tests are inputs and expected outputs, judged by passk's judge")]
    InProcessFormat { path: String, format: &'static str },
    #[error("--verdicts in-process runs the tests in the candidate's Python interpreter; {path} has samples in {languages}, which passk always judges apart from the candidate: leave --verdicts out")]
    InProcessLanguage { path: String, languages: String },
    #[error("{path}: cannot read --checker")]
    Checker {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: field `entry_point` is {value:?}, which is not a Python identifier")]
    EntryPoint { path: String, line: usize, value: String },
    #[error("{path}:{line}: task_id {task_id:?} appears again (first on line {first})")]
    DuplicateTask { path: String, line: usize, task_id: String, first: usize },
    #[error("{path}:{line}: field `task_id` is {task_id:?}, which is not in the problem set {problems}{hint}")]
    UnknownTask { path: String, line: usize, task_id: String, problems: String, hint: String },
    #[error("{path}:{line}: field `task_id` is the number {task_id}, and the ids of {problems} are strings such as {example:?}: these samples belong to another problem set (MBPP's and APPS's ids are numbers)")]
    ForeignNumericTask { path: String, line: usize, task_id: String, problems: String, example: String },
    #[error("{path}:{line}: has both `completion` and `solution`; a sample gives one")]
    BothCandidates { path: String, line: usize },
    #[error("{path}:{line}: field `completion` (or `solution`) is missing; the line's fields are {fields}")]
    NoCandidate { path: String, line: usize, fields: String },
    #[error("{path}: contains no {what}")]
    Empty { path: String, what: &'static str },
    #[error("{path}: changed while it was being evaluated (line {line})")]
    Changed { path: String, line: usize },
    #[error("--results {path} is the samples file; results are written beside the samples, not over them")]
    ResultsOverSamples { path: String },
    #[error("--results {path} holds something other than passk's results (its first line's fields: {fields}), which the run would overwrite; name another file, or remove it")]
    ResultsOverOther { path: String, fields: String },
    #[error("{path} holds an interrupted run with other settings ({differences}); run with those settings to resume it, or add --restart to start over")]
    ResumeMismatch { path: String, differences: String },
    #[error("{path} holds an interrupted run whose input has changed: {changed}; add --restart to start over on the files as they are now, or put back the files it began with to resume it{also}")]
    ResumeChanged { path: String, changed: String, also: String },
    #[error("--problems {name}: no such file, nor a bundled problem set (bundled: {bundled}){hint}")]
    UnknownProblemSet { name: String, bundled: String, hint: String },
    #[error("--problems {name}: a folder, not a problem file{holds}")]
    ProblemsFolder { name: String, holds: String },
    #[error("--problems {name}: no such file{beside}{hint}")]
    NoProblemFile { name: String, beside: String, hint: String },
    #[error(
        "{path}: starts with a UTF-8 byte-order mark, which JSON Lines does not allow; remove the byte-order mark"
    )]
    ByteOrderMark { path: String },
    #[error("{path}: this is the record of a run's settings that passk keeps beside its results; give the results file, {results}")]
    SettingsRecord { path: String, results: String },
    #[error("{path}: this is an interrupted run's own record, not its results; the same passk evaluate command, run again, completes the run and writes its results to {results}")]
    InterruptedRun { path: String, results: String },
    #[error("{path}:{line}: JSON Lines expected (one JSON object per line), this is {shape}; write each object on a line of its own")]
    NotJsonLines { path: String, line: usize, shape: &'static str },
    #[error("{path}:{line}: this is {what} (fields {fields}), which --format {format} does not read; give --format {right}, or no --format: passk tells the format from the file")]
    OtherFormat {
        path: String,
        line: usize,
        what: &'static str,
        fields: String,
        format: &'static str,
        right: &'static str,
    },
    /// `which`: the first few problems left out, and what the samples may be instead.
    #[error("{path} leaves out {missing} of the {total} in {set}: {which}; pass@k over a subset is not comparable with the whole set's, so add --partial if the subset is what you mean")]
    MissingProblems { path: String, missing: String, total: usize, set: String, which: String },
    #[error(
        "{path}:{line}: field `{field}` (of --cluster-by) {problem}; every sample of a problem needs the same group"
    )]
    Grouping { path: String, line: usize, field: String, problem: String },
    #[error("{path}:{line}: {message}; each line is `n,c` or a JSON object with `n` and `c`")]
    Calc { path: String, line: usize, message: String },
    #[error("--report {path}: the name must end in .html or .md, which says which report to write")]
    ReportFormat { path: String },
    #[error("cannot write {option} {path}: {reason}{advice}")]
    Unwritable { option: &'static str, path: String, reason: std::io::Error, advice: String },
}

impl InputError {
    /// The error as `passk evaluate` gives it, which takes a samples file beside the
    /// problems: a samples file given as the problems may be the two swapped.
    pub fn for_evaluate(self) -> InputError {
        match self {
            InputError::SamplesAsProblems { path, line, fields, .. } => InputError::SamplesAsProblems {
                path,
                line,
                fields,
                hint: "; are the two files swapped? the command is `passk evaluate SAMPLES --problems PROBLEMS`",
            },
            other => other,
        }
    }

    /// `path`, given as `option`, cannot be written: with what to do about it where the
    /// folder refuses this user or does not exist.
    pub fn unwritable(option: &'static str, path: &Path, reason: std::io::Error) -> InputError {
        let folder = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let advice = if reason.kind() == std::io::ErrorKind::NotFound && !folder.exists() {
            format!(
                "; the folder {} does not exist: create it (`mkdir -p {}`) or choose another {option}",
                folder.display(),
                folder.display()
            )
        } else if reason.kind() == std::io::ErrorKind::PermissionDenied {
            let uid = nix::unistd::geteuid();
            let fix = if in_container() {
                // The image's user is rarely the owner of a folder mounted from the host.
                "run the container as the folder's owner (`docker run --user \"$(id -u):$(id -g)\" ...`) or \
                 choose another"
            } else {
                "make it writable or choose another"
            };
            format!("; this user (uid {uid}) cannot write in {}: {fix} {option}", folder.display())
        } else {
            String::new()
        };
        InputError::Unwritable { option, path: path.display().to_string(), reason, advice }
    }
}

/// Whether passk runs in a container made by Docker or Podman, which mark their
/// containers' roots.
fn in_container() -> bool {
    Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists()
}
