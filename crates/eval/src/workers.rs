//! How the workers run candidates, as one value. `evaluate`, `validate` and a service
//! start their pools from it, so that the runner's `PoolOptions` are built in one place
//! and a phase cannot run under limits the run's settings do not record.

use std::ffi::OsString;
use std::time::Duration;

use passk_runner::{Interpreter, InterpreterError, Limits, PoolOptions, SandboxMode, VerdictMode};

use crate::error::EvalError;

/// Bytes of each output stream kept per candidate, for the debug log; the rest is read
/// and discarded.
const OUTPUT_CAP: usize = 4 * 1024;

#[derive(Debug, Clone)]
pub struct WorkerOptions {
    pub jobs: usize,
    /// Each sample's wall-clock limit.
    pub timeout: Duration,
    pub sandbox: SandboxMode,
    pub verdicts: VerdictMode,
    pub limits: Limits,
    /// The Python interpreter, resolved once to its real executable.
    pub python: OsString,
    /// The packages candidates may import besides the standard library, each once.
    pub allowed_packages: Vec<String>,
}

impl WorkerOptions {
    /// Finds the interpreter and the packages candidates may import.
    pub async fn interpreter(&self) -> Result<Interpreter, InterpreterError> {
        Interpreter::resolve(&self.python, &self.allowed_packages).await
    }

    /// The pool's options, under `interpreter` (see [`WorkerOptions::interpreter`]), with
    /// this executable as the sandbox's helper.
    pub fn pool_options(&self, interpreter: Interpreter) -> Result<PoolOptions, EvalError> {
        Ok(PoolOptions {
            interpreter,
            jobs: self.jobs,
            timeout: self.timeout,
            limits: self.limits,
            sandbox: self.sandbox,
            helper: std::env::current_exe().map_err(EvalError::OwnExecutable)?,
            output_cap: OUTPUT_CAP,
            verdicts: self.verdicts,
            shown: Vec::new(),
        })
    }
}
