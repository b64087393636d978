//! The languages passk runs, as data: `sandbox/languages.toml` says how each one's
//! toolchain is found, how the host language's starts its driver, how every other
//! language's program is built and run, and how a base model's completion in it ends;
//! `build.rs` compiles in each driver's files. The rest of the runner asks a
//! [`Language`] rather than naming one, so that a new language is a table (and, for a
//! host, a driver), not edits wherever Python was assumed.

use std::sync::LazyLock;

use serde::Deserialize;

pub(crate) const TABLE: &str = include_str!("../../../sandbox/languages.toml");

// The drivers' files, by directory (see build.rs).
include!(concat!(env!("OUT_DIR"), "/drivers.rs"));

/// One language's table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Language {
    pub name: String,
    /// The toolchain's executable, unless the user names another.
    pub toolchain: String,
    /// The Debian package that provides the toolchain.
    pub package: String,
    /// The oldest toolchain version the driver supports, as `major.minor`.
    pub minimum_version: String,
    /// Other names a sample or a run may give it.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The toolchain's arguments that print its version.
    pub version: Vec<String>,
    /// Where a base model's completion ends.
    pub stop_sequences: Vec<String>,
    /// How the host language's toolchain starts its driver.
    pub host: Option<Host>,
    /// How a program in this language is built and run by the host's driver.
    pub program: Option<ProgramRule>,
}

/// How a toolchain starts the driver a worker slot runs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// The driver's directory in `sandbox/`.
    pub driver: String,
    /// The toolchain's arguments that start the driver, before the driver's directory and
    /// its own arguments.
    pub start: Vec<String>,
}

/// How a program in a language other than the host's is built and run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramRule {
    /// The file the program is written to.
    pub source: String,
    /// The build's command (empty where nothing is built); `{source}` is the source's name.
    pub compile: Vec<String>,
    /// What the build leaves that runs.
    pub artifact: Artifact,
    /// The run's command (empty: the artifact itself); `{artifact}` is its path.
    pub run: Vec<String>,
    /// For function completions, the command that serves calls of the candidate's entry
    /// point (`{entry}`) in its process, from the driver's directory (`{driver}`); empty
    /// where the language has none.
    #[serde(default)]
    pub serve: Vec<String>,
    /// The command that runs a problem's tests against that server, in the judge's process.
    #[serde(default)]
    pub judge: Vec<String>,
    /// For function completions in a compiled language, the module of the driver's
    /// directory that makes the candidate's code a program serving calls of the entry
    /// point, and the tests a program of their own with a stand-in for it.
    pub assembly: Option<String>,
    /// The command that builds a function completion's serving program, where it is not
    /// `compile`.
    #[serde(default)]
    pub serve_compile: Vec<String>,
    /// The command that builds the tests' program, where it is not `compile`.
    #[serde(default)]
    pub judge_compile: Vec<String>,
    /// The command that runs the tests' program, where it is not `run`.
    #[serde(default)]
    pub judge_run: Vec<String>,
    /// For function completions, where the serving code is compiled apart from the
    /// candidate's (C++'s: see programs.py): the command that compiles a source
    /// (`{source}`) to an object (`{object}`), and the one that links the objects that
    /// follow it into the program. Empty: the serving code is compiled with the
    /// candidate's, in one source.
    #[serde(default)]
    pub object_compile: Vec<String>,
    #[serde(default)]
    pub link: Vec<String>,
    /// A compiler kept running for a worker slot's builds, which builds as `compile`
    /// would (the driver's resident.py); `{toolchain}` is the toolchain's path. Empty
    /// where every build runs its compiler afresh.
    #[serde(default)]
    pub resident: Vec<String>,
    /// The program that runs what the toolchain builds, where it is not the toolchain
    /// itself (Java's `java` beside `javac`, TypeScript's `node` beside `tsc`): its
    /// version is the run's too.
    pub runtime: Option<Runtime>,
    /// Libraries a program is linked with when it includes their headers (or imports
    /// their classes).
    #[serde(default)]
    pub libraries: Vec<Library>,
    /// Options a command takes where each process's address space is limited (no
    /// control group bounds the sample's memory), sized from the limit.
    #[serde(default)]
    pub address_limited: Vec<AddressLimited>,
    /// Libraries passk builds itself for the language's programs, once per toolchain.
    pub prebuilt: Option<Prebuilt>,
}

/// The program a language's builds run on, found and its version read with the toolchain.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runtime {
    /// Its executable, looked up on the PATH.
    pub command: String,
    /// Its arguments that print its version.
    pub version: Vec<String>,
}

/// Libraries passk builds from the system's sources for a language's programs (Rust's
/// crates, which have no system-wide build), once per toolchain version, into a
/// directory of passk's cache that the sandbox shows read-only: `{prebuilt}` in the
/// build and run commands.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prebuilt {
    /// The Debian packages whose sources are built, named when a build fails.
    pub packages: Vec<String>,
    /// The command each build starts with (not empty); its first word is looked up
    /// with the toolchain.
    pub start: Vec<String>,
    /// Each build's arguments after `start`, run in order, outside the sandbox.
    pub builds: Vec<Vec<String>>,
    /// Headers written into the directory before the builds, which precompile them.
    #[serde(default)]
    pub headers: Vec<Header>,
    /// Files of the driver's directory copied into it before the builds (Java's wire,
    /// compiled once rather than with every program).
    #[serde(default)]
    pub driver_files: Vec<String>,
}

/// A header of the lines a suite's programs begin with (C++'s includes), precompiled
/// once: a source that begins with exactly those lines is built with one line that
/// includes this header in their place, so that the compiler loads what it would
/// otherwise parse anew for every sample. Where the precompiled form does not fit the
/// build, the compiler reads the header, whose lines are the source's own: the program
/// is the same either way.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The header's file name in the prebuilt directory.
    pub name: String,
    /// The lines it holds, as a source's first lines say them (spacing aside).
    pub lines: Vec<String>,
}

/// A library a build links where the program includes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Library {
    /// The start of the path the program's `#include` names, or of the name its
    /// `import` does (Java).
    pub include: String,
    /// The compiler's arguments that link it.
    pub link: Vec<String>,
}

/// Options for one of a language's commands under an address-space limit: put before
/// the word `at` (or after the command's first word), with `{address_space/N}` an Nth of
/// the limit in MiB.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct AddressLimited {
    /// The command's executable, as its first word names it.
    pub command: String,
    pub at: Option<String>,
    pub options: Vec<String>,
}

impl ProgramRule {
    /// Whether problems whose tests call a function can be judged in this language.
    pub fn judges_functions(&self) -> bool {
        (!self.serve.is_empty() && !self.judge.is_empty()) || self.assembly.is_some()
    }
}

/// What a build leaves that runs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Artifact {
    /// An executable.
    Binary { path: String },
    /// Classes below a directory, packed into a jar whose main class is the public one.
    Jar { path: String },
    /// A file the run command reads (TypeScript's JavaScript), put back in the run's
    /// directory under its name.
    File { path: String },
    /// The source itself, which an interpreter runs.
    Source,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    language: Vec<Language>,
}

static LANGUAGES: LazyLock<Vec<Language>> = LazyLock::new(|| {
    toml::from_str::<Table>(TABLE).expect("sandbox/languages.toml is valid; a unit test parses it").language
});

impl Language {
    /// Every language, in the table's order.
    pub fn all() -> &'static [Language] {
        &LANGUAGES
    }

    /// The language a sample or a run calls `name`, by its name or an alias, in any case.
    pub fn named(name: &str) -> Option<&'static Language> {
        let wanted = name.trim().to_lowercase();
        LANGUAGES.iter().find(|language| language.name == wanted || language.aliases.contains(&wanted))
    }

    /// Every language's name, for a message that lists them.
    pub fn names() -> Vec<&'static str> {
        LANGUAGES.iter().map(|language| language.name.as_str()).collect()
    }

    /// How the host's toolchain starts its driver.
    pub fn host(&self) -> &Host {
        self.host.as_ref().expect("only the host language starts a driver; a unit test checks python is one")
    }

    /// Python, which every problem format read today is written in.
    pub fn python() -> &'static Language {
        Language::named("python").expect("the table has python; a unit test checks")
    }

    /// The driver's files, by name.
    pub fn driver_files(&self) -> &'static [(&'static str, &'static str)] {
        DRIVERS
            .iter()
            .find(|(directory, _)| *directory == self.host().driver)
            .map(|(_, files)| *files)
            .expect("every language's driver is compiled in; a unit test checks")
    }

    /// The host driver's file `name`.
    pub fn driver_file(&self, name: &str) -> Option<&'static str> {
        self.driver_files().iter().find(|(file, _)| *file == name).map(|(_, text)| *text)
    }

    /// Whether a toolchain of `version` (`major.minor[.patch]`) is recent enough.
    pub fn supports(&self, version: &str) -> bool {
        major_minor(version) >= major_minor(&self.minimum_version)
    }
}

fn major_minor(version: &str) -> (u32, u32) {
    let mut parts = version.split('.').map(|part| part.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_every_language_has_its_driver_compiled_in() {
        assert!(!Language::all().is_empty());
        for language in Language::all() {
            assert!(!language.toolchain.is_empty() && !language.version.is_empty(), "{language:?}");
            assert!(language.host.is_some() != language.program.is_some(), "a host or a program: {language:?}");
            if language.host.is_some() {
                assert!(!language.driver_files().is_empty(), "{}", language.name);
                assert!(!language.host().start.is_empty(), "{language:?}");
            }
            if let Some(prebuilt) = language.program.as_ref().and_then(|rule| rule.prebuilt.as_ref()) {
                assert!(!prebuilt.start.is_empty() && !prebuilt.builds.is_empty(), "{language:?}");
                for file in &prebuilt.driver_files {
                    assert!(Language::python().driver_file(file).is_some(), "{file} of {language:?}");
                }
            }
            assert_eq!(Language::named(&language.name), Some(language), "names are unique");
            for alias in &language.aliases {
                assert_eq!(Language::named(alias), Some(language), "aliases are unique");
            }
        }
        assert_eq!(Language::python().toolchain, "python3");
        assert_eq!(Language::named(" C++ ").map(|language| language.name.as_str()), Some("cpp"));
    }

    /// Guards against a file of a driver's directory left out of the binary.
    #[test]
    fn every_file_of_a_drivers_directory_is_compiled_in() {
        let sandbox = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sandbox");
        for language in Language::all().iter().filter(|language| language.host.is_some()) {
            let mut on_disk: Vec<String> = std::fs::read_dir(sandbox.join(&language.host().driver))
                .unwrap()
                .map(|entry| entry.unwrap())
                .filter(|entry| entry.file_type().unwrap().is_file())
                .map(|entry| entry.file_name().into_string().unwrap())
                .filter(|name| !name.starts_with('.') && !name.ends_with(".pyc"))
                .collect();
            on_disk.sort();
            let compiled: Vec<&str> = language.driver_files().iter().map(|(name, _)| *name).collect();
            assert_eq!(compiled, on_disk, "{}", language.name);
        }
    }

    #[test]
    fn versions_from_the_minimum_on_are_supported() {
        let python = Language::python();
        assert!(python.supports("3.9.0") && python.supports("3.12.1") && python.supports("4.0.0"));
        assert!(!python.supports("3.8.18") && !python.supports("2.7.18") && !python.supports(""));
    }
}
