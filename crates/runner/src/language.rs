//! The languages passk runs, as data: `sandbox/languages.toml` says how each one's
//! toolchain is found and starts its driver, and how a base model's completion in it
//! ends; `build.rs` compiles in each driver's files. The rest of the runner asks a
//! [`Language`] rather than naming one, so that a new language is a table and a driver,
//! not edits wherever Python was assumed.

use std::sync::LazyLock;

use serde::Deserialize;

const TABLE: &str = include_str!("../../../sandbox/languages.toml");

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
    /// The driver's directory in `sandbox/`.
    pub driver: String,
    /// The toolchain's arguments that start the driver, before the driver's directory and
    /// its own arguments.
    pub start: Vec<String>,
    /// Where a base model's completion ends.
    pub stop_sequences: Vec<String>,
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

    pub fn named(name: &str) -> Option<&'static Language> {
        LANGUAGES.iter().find(|language| language.name == name)
    }

    /// Python, which every problem format read today is written in.
    pub fn python() -> &'static Language {
        Language::named("python").expect("the table has python; a unit test checks")
    }

    /// The driver's files, by name.
    pub fn driver_files(&self) -> &'static [(&'static str, &'static str)] {
        DRIVERS
            .iter()
            .find(|(directory, _)| *directory == self.driver)
            .map(|(_, files)| *files)
            .expect("every language's driver is compiled in; a unit test checks")
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
            assert!(!language.driver_files().is_empty(), "{}", language.name);
            assert!(!language.start.is_empty() && !language.toolchain.is_empty(), "{language:?}");
            assert_eq!(Language::named(&language.name), Some(language), "names are unique");
        }
        assert_eq!(Language::python().toolchain, "python3");
    }

    /// Guards against a file of a driver's directory left out of the binary.
    #[test]
    fn every_file_of_a_drivers_directory_is_compiled_in() {
        let sandbox = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sandbox");
        for language in Language::all() {
            let mut on_disk: Vec<String> = std::fs::read_dir(sandbox.join(&language.driver))
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
