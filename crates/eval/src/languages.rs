//! The languages a run's samples are in, and their toolchains. A sample's language is
//! its `language` field, else the run's `--language`, else its problem set's own; a
//! language other than the host's is built and run by its toolchain, found once, before
//! anything runs, for every language the samples use.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use passk_formats::problems::{Problem, ProblemSet};
use passk_formats::sample::Sample;
use passk_formats::InputError;
use passk_runner::{Candidate, Language, Program, Tests, Toolchain, ToolchainError};

/// The languages whose function completions passk judges.
fn function_languages() -> String {
    let judged: Vec<&str> = Language::all()
        .iter()
        .filter(|language| language.program.as_ref().map_or(true, |rule| rule.judges_functions()))
        .map(|language| language.name.as_str())
        .collect();
    judged.join(", ")
}

/// What tells `events` of a one-time build of what a language's programs use (see
/// `Toolchain::find`): it takes up to a minute, before anything else shows.
pub fn tell_building(events: &crate::events::EventSink) -> impl Fn(&str, &std::path::Path) + '_ {
    move |language, dir| {
        crate::events::info!(events, "building what {language}'s programs use into {} (once)", dir.display());
    }
}

/// The toolchains of the languages a run's samples use, other than the host's.
#[derive(Debug, Default, Clone)]
pub struct Toolchains {
    /// The run's `--language`, for samples that name none.
    default: Option<&'static Language>,
    /// passk's cache directory, where the libraries a toolchain's programs use are built.
    cache: PathBuf,
    found: BTreeMap<String, Arc<Toolchain>>,
}

impl Toolchains {
    pub fn new(default: Option<&'static Language>, cache: PathBuf) -> Toolchains {
        Toolchains { default, cache, found: BTreeMap::new() }
    }

    /// The same toolchains, with `default` for samples that name no language.
    pub fn with_default(&self, default: Option<&'static Language>) -> Toolchains {
        Toolchains { default, ..self.clone() }
    }

    /// The toolchain of `language`, if it was found.
    pub fn toolchain(&self, language: &Language) -> Option<&Arc<Toolchain>> {
        self.found.get(&language.name)
    }

    /// The language `sample` is in: its own field's, else its problem's where the
    /// problem is written in one (HumanEval-X, MultiPL-E), else `--language`'s, else its
    /// set's format's.
    pub fn language_of(&self, sample: &Sample, problems: &ProblemSet) -> &'static Language {
        sample
            .language
            .or_else(|| problems.problems[sample.problem].language())
            .or(self.default)
            .unwrap_or_else(|| problems.format.language())
    }

    /// Checks that `sample`'s language can run its problem; returns the language where it
    /// needs a toolchain.
    pub fn check(
        &self,
        source: &str,
        sample: &Sample,
        problems: &ProblemSet,
    ) -> Result<Option<&'static Language>, InputError> {
        let language = self.language_of(sample, problems);
        let problem = &problems.problems[sample.problem];
        let refused = |why: String| InputError::LanguageRefused {
            path: source.to_owned(),
            line: sample.line,
            task_id: problem.task_id.clone(),
            why,
        };
        if let (None, Some(own), Some(flag)) = (sample.language, problem.language(), self.default) {
            if own != flag {
                return Err(refused(format!(
                    "--language is {}, and the problem's tests are in {}: --language names the language of \
                     standard-input samples that name none; leave it out",
                    flag.name, own.name
                )));
            }
        }
        match (problem.language(), &language.program) {
            (Some(own), _) if own != language => {
                Err(refused(format!("the sample is in {}, and the problem's tests are in {}", language.name, own.name)))
            }
            (Some(_), Some(rule)) if !rule.judges_functions() => Err(refused(format!(
                "passk does not judge function completions in {} yet, only its standard-input programs; it judges \
                 them in {}",
                language.name,
                function_languages()
            ))),
            (None, Some(_)) if !matches!(problem.code.tests, Tests::Stdio(_)) => Err(refused(format!(
                "the sample is in {}, and the problem's tests call a Python function; other languages run \
                 standard-input problems (CodeContests, APPS, LiveCodeBench) and their own suites' problems \
                 (HumanEval-X, MultiPL-E)",
                language.name
            ))),
            (_, Some(_)) => Ok(Some(language)),
            (_, None) => Ok(None),
        }
    }

    /// Finds the toolchain of each of `languages` on the PATH, telling `building` of each
    /// one-time build of what a language's programs use (see `Toolchain::find`).
    pub fn find<'a>(
        &mut self,
        languages: impl IntoIterator<Item = &'a str>,
        building: &dyn Fn(&str, &std::path::Path),
    ) -> Result<(), Box<ToolchainError>> {
        let path = Toolchain::search_path();
        for name in languages {
            let language = Language::named(name).expect("a language of the table");
            if !self.found.contains_key(&language.name) {
                self.found.insert(
                    language.name.clone(),
                    Arc::new(Toolchain::find(language, &path, &self.cache, building).map_err(Box::new)?),
                );
            }
        }
        Ok(())
    }

    /// The toolchains of the languages a problem set's problems are written in, for
    /// running their canonical solutions, with their libraries in `cache`.
    pub fn for_set(
        problems: &ProblemSet,
        cache: PathBuf,
        building: &dyn Fn(&str, &std::path::Path),
    ) -> Result<Toolchains, Box<ToolchainError>> {
        let mut toolchains = Toolchains::new(None, cache);
        let languages: std::collections::BTreeSet<&str> = problems
            .problems
            .iter()
            .filter_map(Problem::language)
            .filter(|language| language.program.is_some())
            .map(|language| language.name.as_str())
            .collect();
        if let Some(language) = languages.iter().find(|name| {
            Language::named(name)
                .and_then(|language| language.program.as_ref())
                .is_some_and(|rule| !rule.judges_functions())
        }) {
            return Err(Box::new(ToolchainError::NoFunctionJudge { language: (*language).to_owned() }));
        }
        toolchains.find(languages, building)?;
        Ok(toolchains)
    }

    /// A problem's own code with `candidate`, in the problem's language.
    pub fn program_of(&self, problem: &Problem, candidate: &Candidate) -> Program {
        let program = Program::new(&problem.code, candidate);
        match problem.language() {
            Some(language) => self.program_in(program, language),
            None => program,
        }
    }

    /// `program` as `language` builds and runs it.
    pub fn program_in(&self, program: Program, language: &Language) -> Program {
        match self.found.get(&language.name) {
            Some(toolchain) => program.in_language(toolchain.clone()),
            None => program,
        }
    }

    /// The toolchains found, by language.
    pub fn found(&self) -> impl Iterator<Item = &Toolchain> {
        self.found.values().map(Arc::as_ref)
    }

    /// The directories of the libraries the toolchains built, which their builds read
    /// in the sandbox (`PoolOptions::shown`).
    pub fn shown(&self) -> Vec<PathBuf> {
        self.found().filter_map(|toolchain| toolchain.prebuilt.clone()).collect()
    }
}
