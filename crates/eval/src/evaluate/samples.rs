//! The samples file: where it is read from, what it covers, and the programs it holds.
//!
//! A run reads its samples twice, once to check every line before anything runs and
//! once to feed the workers, and hashes them to tie the results to them. Standard input
//! and other streams can be read only once, so they are first copied to a file beside
//! the results, which is removed when the run ends.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use passk_runner::{Candidate, Program, Tests};
use tokio::sync::mpsc;

use crate::dedup::{self, Key, Sample};
use crate::languages::Toolchains;
use passk_formats::extract;
use passk_formats::jsonl::JsonlReader;
use passk_formats::problems::{Format, ProblemSet};
use passk_formats::sample;
use passk_formats::shard::Shard;
use passk_formats::InputError;

/// The name the command line gives standard input.
pub const STDIN: &str = "-";

/// Samples ready to be read as often as needed.
#[derive(Debug)]
pub struct SamplesFile {
    path: PathBuf,
    /// What errors call it: the path given, or "standard input".
    name: String,
    /// The copy of a stream, removed when dropped.
    _copy: Option<tempfile::TempPath>,
}

impl SamplesFile {
    /// `given` as a file that can be read again: itself when it is a regular file, else a
    /// copy of it made in `beside`.
    pub fn open(given: &Path, beside: &Path) -> Result<SamplesFile, InputError> {
        let name = if given == Path::new(STDIN) { "standard input".to_owned() } else { given.display().to_string() };
        if !is_stream(given) {
            return Ok(SamplesFile { path: given.to_owned(), name, _copy: None });
        }
        let copy_error = |source| InputError::Open { path: name.clone(), source };
        let mut copy = tempfile::Builder::new().prefix(".passk-samples-").tempfile_in(beside).map_err(copy_error)?;
        if given == Path::new(STDIN) {
            std::io::copy(&mut std::io::stdin().lock(), copy.as_file_mut()).map_err(copy_error)?;
        } else {
            std::io::copy(&mut std::fs::File::open(given).map_err(copy_error)?, copy.as_file_mut())
                .map_err(copy_error)?;
        }
        let copy = copy.into_temp_path();
        Ok(SamplesFile { path: copy.to_path_buf(), name, _copy: Some(copy) })
    }

    /// The samples of `shard`'s problems, in their order, as a file of their own beside
    /// the results, removed when dropped: the run then reads, numbers and journals them
    /// as it would a whole samples file, and a resumed shard finds the same file again.
    /// Returns it with how many samples it holds and the positions of their problems.
    pub fn shard(
        &self,
        problems: &ProblemSet,
        covered: &BTreeSet<usize>,
        shard: Shard,
        beside: &Path,
    ) -> Result<(SamplesFile, usize, BTreeSet<usize>), InputError> {
        let held: BTreeSet<usize> =
            covered.iter().enumerate().filter(|(rank, _)| shard.holds(*rank)).map(|(_, problem)| *problem).collect();
        let reader = self.reader()?;
        let source = reader.source().to_owned();
        let copy_error =
            |source| InputError::Open { path: format!("a copy of shard {shard} of {}", self.name), source };
        let copy = tempfile::Builder::new().prefix(".passk-samples-").tempfile_in(beside).map_err(copy_error)?;
        let mut out = std::io::BufWriter::new(copy.as_file());
        let mut total = 0;
        for record in reader {
            let (line, fields) = record?;
            let text = serde_json::to_string(&fields).expect("a JSON object serializes");
            if held.contains(&sample::sample(&source, problems, (line, fields))?.problem) {
                writeln!(out, "{text}").map_err(copy_error)?;
                total += 1;
            }
        }
        out.into_inner().map_err(|error| copy_error(error.into_error()))?.sync_all().map_err(copy_error)?;
        let copy = copy.into_temp_path();
        let file = SamplesFile { path: copy.to_path_buf(), name: self.name.clone(), _copy: Some(copy) };
        Ok((file, total, held))
    }

    pub fn reader(&self) -> Result<JsonlReader, InputError> {
        JsonlReader::open_as(&self.path, &self.name)
    }

    pub fn sha256(&self) -> Result<String, InputError> {
        passk_formats::provenance::sha256_file(&self.path)
            .map_err(|source| InputError::Open { path: self.name.clone(), source })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Whether `path` names something that may be readable only once: standard input, a
/// pipe, a device, or a name under /dev or /proc (`/dev/stdin` leads to whatever
/// standard input is, a file only by chance).
pub fn is_stream(path: &Path) -> bool {
    path == Path::new(STDIN)
        || path.starts_with("/dev")
        || path.starts_with("/proc")
        || std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir())
}

/// Where results go when `--results` is not given: beside the samples, or for a stream
/// in the current directory, named after it (`stdin_results.jsonl`), never in /dev. A
/// shard's are named for it (`samples.jsonl_shard-2-of-8_results.jsonl`), so that shards
/// sharing a folder never share a results file.
pub fn default_results(samples: &Path, shard: Option<Shard>) -> PathBuf {
    let mut name = if is_stream(samples) {
        let stem = samples.file_name().filter(|_| samples != Path::new(STDIN)).unwrap_or("stdin".as_ref());
        stem.to_owned()
    } else {
        samples.as_os_str().to_owned()
    };
    if let Some(Shard { index, count }) = shard {
        name.push(format!("_shard-{index}-of-{count}"));
    }
    name.push("_results.jsonl");
    PathBuf::from(name)
}

/// What a check of every sample found.
#[derive(Debug)]
pub struct Checked {
    pub total: usize,
    /// The positions in the set of the problems the samples answer.
    pub covered: BTreeSet<usize>,
    /// Samples whose text looks like a chat model's raw answer (counted without
    /// `--extract`, to suggest it).
    pub chat_like: usize,
    /// The first line that is one of passk's results (`passed`, `result`, `status`): a
    /// results file given as the samples, whose completions run again.
    pub results_like: Option<usize>,
    /// The languages other than the host's that samples are in, whose toolchains the
    /// run needs.
    pub languages: BTreeSet<&'static str>,
    /// Standard-input samples that run in the host's language and look written in
    /// another (a C++ solution that names no language), to suggest naming it.
    pub resembling: Option<Resembling>,
}

/// Standard-input samples that run as Python and look written in another language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resembling {
    /// The language the first of them looks written in, and the mark that says so.
    pub language: &'static str,
    pub mark: &'static str,
    /// The first one's line in the samples file.
    pub line: usize,
    /// How many do.
    pub count: usize,
}

/// Checks every sample against the problem set.
pub fn check(
    samples: &SamplesFile,
    problems: &ProblemSet,
    extracting: bool,
    toolchains: &Toolchains,
) -> Result<Checked, InputError> {
    let reader = samples.reader()?;
    let source = reader.source().to_owned();
    let mut checked = Checked {
        total: 0,
        covered: BTreeSet::new(),
        chat_like: 0,
        results_like: None,
        languages: BTreeSet::new(),
        resembling: None,
    };
    for record in reader {
        let sample = sample::sample(&source, problems, record?)?;
        let language = toolchains.check(&source, &sample, problems)?;
        if let Some(language) = language {
            checked.languages.insert(&language.name);
        }
        checked.covered.insert(sample.problem);
        let text = match &sample.candidate {
            Candidate::Completion(text) | Candidate::Solution(text) => text,
        };
        let stdio = matches!(problems.problems[sample.problem].code.tests, Tests::Stdio(_));
        if let Some((other, mark)) = extract::resembles(text).filter(|_| language.is_none() && stdio) {
            let first = Resembling { language: other, mark, line: sample.line, count: 0 };
            checked.resembling.get_or_insert(first).count += 1;
        }
        checked.chat_like += usize::from(!extracting && extract::looks_like_chat(text));
        if checked.results_like.is_none()
            && ["passed", "result", "status"].iter().all(|key| sample.fields.contains_key(*key))
        {
            checked.results_like = Some(sample.line);
        }
        checked.total += 1;
    }
    if checked.total == 0 {
        return Err(InputError::Empty { path: source, what: "samples" });
    }
    Ok(checked)
}

/// The task ids of the set's problems that no sample covers.
pub fn missing_task_ids(problems: &ProblemSet, covered: &BTreeSet<usize>) -> Vec<String> {
    (0..problems.problems.len())
        .filter(|index| !covered.contains(index))
        .map(|index| problems.problems[index].task_id.clone())
        .collect()
}

/// The refusal of a samples file that leaves out problems of the set, naming them.
pub fn missing_problems(samples: &SamplesFile, problems: &ProblemSet, covered: &BTreeSet<usize>) -> InputError {
    let missing = missing_task_ids(problems, covered);
    let named = passk_report::words::first_few(&missing, 10);
    InputError::MissingProblems {
        path: samples.name().to_owned(),
        missing: passk_report::words::plural(missing.len(), "problem"),
        total: problems.problems.len(),
        set: problems.name.clone(),
        which: format!("{named}{}", sanitized_mbpp_hint(problems, covered)),
    }
}

/// Sanitized MBPP numbers its problems as the original does, so its samples given
/// against the original are all found there, and refused only as leaving out most of
/// it: where every problem they answer is sanitized MBPP's, say so. Fewer than
/// `AT_LEAST` prove nothing, as nearly half the original's problems are sanitized MBPP's.
fn sanitized_mbpp_hint(problems: &ProblemSet, covered: &BTreeSet<usize>) -> String {
    const AT_LEAST: usize = 10;
    let sanitized = |&index: &usize| passk_formats::problems::mbpp::in_sanitized(&problems.problems[index].task_id);
    if problems.format != Format::Mbpp || covered.len() < AT_LEAST || !covered.iter().all(sanitized) {
        return String::new();
    }
    format!(
        "; every problem these samples answer is one of sanitized MBPP's, numbered as in the original: samples \
         of sanitized MBPP are evaluated against its own file: {}",
        passk_formats::problems::fetch_benchmark("mbpp-sanitized", "sanitized-mbpp.json")
    )
}

/// A sample read and checked, with the program it stands for.
#[derive(Debug)]
pub struct Pending {
    pub sample: Sample,
    pub key: Key,
    pub program: Program,
    /// Its problem's position in the problem set.
    pub problem: usize,
    /// Whether it has its verdict already, from before a resume, and is sent only to be
    /// run again with the other time-outs (see `timeouts`).
    pub only_retry: bool,
}

/// What `feed` skips and what it sends.
#[derive(Debug)]
pub struct Feed {
    /// Samples with a verdict already.
    pub decided: BTreeSet<usize>,
    /// Samples among those that timed out and were not run again.
    pub retry: BTreeSet<usize>,
    pub total: usize,
    pub extract: bool,
    pub toolchains: Toolchains,
}

/// Reads every sample again, in file order, and sends on each that `feed` does not skip,
/// with its program.
pub fn feed(
    samples: &SamplesFile,
    problems: &ProblemSet,
    feed: &Feed,
    pending: &mpsc::Sender<Pending>,
) -> Result<(), InputError> {
    each_pending(samples, problems, feed, |pending_sample| pending.blocking_send(pending_sample).is_ok())
}

/// The programs of samples `indices` (in order), read again from the samples file.
pub fn programs(
    samples: &SamplesFile,
    problems: &ProblemSet,
    total: usize,
    indices: &[usize],
    extract: bool,
    toolchains: &Toolchains,
) -> Result<Vec<(usize, Program)>, InputError> {
    let wanted: BTreeSet<usize> = indices.iter().copied().collect();
    let decided = (0..total).filter(|i| !wanted.contains(i)).collect();
    let feed = Feed { decided, retry: BTreeSet::new(), total, extract, toolchains: toolchains.clone() };
    let mut programs = Vec::with_capacity(indices.len());
    each_pending(samples, problems, &feed, |pending| {
        programs.push((pending.sample.index, pending.program));
        true
    })?;
    Ok(programs)
}

/// Each sample `feed` wants run, as a Pending, to `take` until it says to stop.
fn each_pending(
    samples: &SamplesFile,
    problems: &ProblemSet,
    feed: &Feed,
    mut take: impl FnMut(Pending) -> bool,
) -> Result<(), InputError> {
    let reader = samples.reader()?;
    let source = reader.source().to_owned();
    for (index, record) in reader.enumerate() {
        // A line that was valid a moment ago and is not now means the file changed.
        let mut sample = sample::sample(&source, problems, record?)?;
        if index >= feed.total {
            return Err(InputError::Changed { path: source, line: sample.line });
        }
        let only_retry = feed.retry.contains(&index);
        if feed.decided.contains(&index) && !only_retry {
            continue;
        }
        let program = crate::sample_program::program(&mut sample, problems, &feed.toolchains, feed.extract);
        let pending_sample = Pending {
            sample: Sample { index, fields: sample.fields },
            key: dedup::key(&program),
            program,
            problem: sample.problem,
            only_retry,
        };
        if !take(pending_sample) {
            // The run stopped; its error is the one to report.
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_of_a_stream_go_to_the_current_directory() {
        assert_eq!(default_results(Path::new("-"), None), PathBuf::from("stdin_results.jsonl"));
        assert_eq!(default_results(Path::new("/dev/stdin"), None), PathBuf::from("stdin_results.jsonl"));
        assert_eq!(default_results(Path::new("/dev/null"), None), PathBuf::from("null_results.jsonl"));
        assert_eq!(default_results(Path::new("out/s.jsonl"), None), PathBuf::from("out/s.jsonl_results.jsonl"));
    }

    #[test]
    fn each_shard_has_results_of_its_own() {
        let shard = "2/3".parse().ok();
        assert_eq!(
            default_results(Path::new("out/s.jsonl"), shard),
            PathBuf::from("out/s.jsonl_shard-2-of-3_results.jsonl")
        );
    }
}
