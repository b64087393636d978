use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::Stdio;

use thiserror::Error;
use tokio::process::Command;

/// The Python interpreter candidates run under, resolved once to its real executable
/// (a version manager's shim can cost tens of milliseconds per start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    pub executable: PathBuf,
    pub version: String,
    /// Where its installation lives: prefixes, site-packages and the executable's
    /// directory, which a sandbox must make visible.
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
    #[error("python {version} at {executable} is too old: passk needs python 3.9 or later")]
    TooOld { executable: String, version: String },
}

const REPORT: &str = "import os, site, sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3]); \
                      print(int(sys.version_info >= (3, 9))); \
                      print(os.pathsep.join(sorted({sys.prefix, sys.exec_prefix, sys.base_prefix, \
                      sys.base_exec_prefix, os.path.dirname(sys.executable), \
                      os.path.dirname(os.path.realpath(sys.executable)), \
                      *site.getsitepackages()})))";

impl Interpreter {
    pub async fn resolve(name: &OsStr) -> Result<Interpreter, InterpreterError> {
        let display = name.to_string_lossy().into_owned();
        let output = Command::new(name)
            .args(["-I", "-c", REPORT])
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
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        let [executable, version, recent_enough, paths] = lines[..] else {
            return Err(report_error());
        };
        if recent_enough != "1" {
            return Err(InterpreterError::TooOld { executable: executable.to_owned(), version: version.to_owned() });
        }
        Ok(Interpreter {
            executable: PathBuf::from(OsString::from(executable)),
            version: version.to_owned(),
            paths: paths.split(':').filter(|p| p.starts_with('/')).map(PathBuf::from).collect(),
        })
    }
}
