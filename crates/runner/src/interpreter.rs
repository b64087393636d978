use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Stdio;

use serde::Deserialize;
use thiserror::Error;
use tokio::process::Command;

use crate::benchmarks::{self, Benchmarks};
use crate::language::Language;

/// The Python interpreter candidates run under, resolved once to its real executable
/// (a version manager's shim can cost tens of milliseconds per start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The language whose toolchain this is, and whose driver it runs.
    pub language: &'static Language,
    pub executable: PathBuf,
    pub version: String,
    /// Where its installation lives: prefixes, the standard library and the
    /// executable's directory, which a sandbox must make visible.
    pub paths: Vec<PathBuf>,
    /// The standard library's entries of `sys.path`, as real paths.
    pub stdlib: Vec<PathBuf>,
    /// Where its packages are, as real paths: its site-packages (or dist-packages)
    /// directories and whatever their .pth files add to `sys.path`.
    pub package_dirs: Vec<PathBuf>,
    /// The packages candidates may import besides the standard library.
    pub allowed: Vec<AllowedPackage>,
}

/// A package allowed with `--allow-package`, and what it installed in the package
/// directories: its own directory or module, the libraries it vendors, its compiled
/// extensions and its metadata. Each path is a package directory's real path joined
/// with the entry's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedPackage {
    pub name: String,
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Error)]
pub enum InterpreterError {
    #[error("cannot start the python interpreter `{name}`")]
    Start {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the python interpreter `{name}` failed to report itself: {stderr}")]
    Report { name: String, stderr: String },
    #[error("python {version} at {executable} is too old: passk needs python {minimum} or later")]
    TooOld { executable: String, version: String, minimum: String },
    #[error("--allow-package {name}: {reason} (python {executable})")]
    Package { name: String, reason: String, executable: String },
    #[error("--allow-package {name}: {found} cannot be made visible to candidates, who could read its answers")]
    BenchmarkPackage { name: String, found: String },
}

/// What the interpreter reports (`interpreter_report.py`).
#[derive(Debug, Deserialize)]
struct Report {
    executable: PathBuf,
    version: String,
    #[serde(default)]
    installation: Vec<PathBuf>,
    #[serde(default)]
    stdlib: Vec<PathBuf>,
    #[serde(default)]
    packages: Vec<PathBuf>,
    #[serde(default)]
    allowed: Vec<Allowed>,
}

#[derive(Debug, Deserialize)]
struct Allowed {
    name: String,
    #[serde(default)]
    paths: Vec<PathBuf>,
    error: Option<String>,
}

const REPORT: &str = include_str!("interpreter_report.py");

impl Interpreter {
    /// Finds the interpreter `name` and, with `allow`, the packages candidates may import
    /// (import names, each a Python identifier). A package that is not installed, is
    /// part of the standard library or is a benchmark's is refused.
    pub async fn resolve(name: &OsStr, allow: &[String]) -> Result<Interpreter, InterpreterError> {
        let display = name.to_string_lossy().into_owned();
        // -S: the report sees sys.path before `site` adds the packages to it.
        let output = Command::new(name)
            .args(["-I", "-S", "-c", REPORT])
            .args(allow)
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|source| InterpreterError::Start { name: display.clone(), source })?;
        let report_error = || InterpreterError::Report {
            name: display.clone(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        };
        if !output.status.success() {
            return Err(report_error());
        }
        let report: Report = serde_json::from_slice(&output.stdout).map_err(|_| report_error())?;
        let executable = report.executable.display().to_string();
        let language = Language::python();
        if !language.supports(&report.version) {
            let minimum = language.minimum_version.clone();
            return Err(InterpreterError::TooOld { executable, version: report.version, minimum });
        }
        let mut allowed = Vec::new();
        for package in report.allowed {
            if let Some(reason) = package.error {
                return Err(InterpreterError::Package { name: package.name, reason, executable });
            }
            let paths = package.paths;
            let found = tokio::task::spawn_blocking(move || (Benchmarks::from_policy().find_in_entries(&paths), paths));
            let (found, paths) = found.await.expect("looking for benchmarks does not panic");
            if let Some(found) = found.first() {
                return Err(InterpreterError::BenchmarkPackage { name: package.name, found: found.to_string() });
            }
            allowed.push(AllowedPackage { name: package.name, paths });
        }
        Ok(Interpreter {
            language,
            executable: report.executable,
            version: report.version,
            paths: absolute(report.installation),
            stdlib: absolute(report.stdlib),
            package_dirs: absolute(report.packages),
            allowed,
        })
    }

    /// The benchmarks' packages among the interpreter's packages, which candidates
    /// could read wherever the sandbox cannot hide them. Walks every package directory.
    pub fn benchmarks(&self) -> Vec<benchmarks::Found> {
        Benchmarks::from_policy().find_in_directories(&self.package_dirs)
    }
}

fn absolute(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.into_iter().filter(|path| path.is_absolute()).collect()
}
