//! What passk writes on the terminal: messages on standard error, tables on standard
//! output. Either may be a pipe whose reader stops early (`passk ... 2>&1 | head`,
//! `grep -m1`): that ends what is shown, not the command. A message nobody can read any
//! more is dropped, a table whose reader is gone ends quietly, and the run goes on to
//! write its results as it would have.

use std::io::{ErrorKind, Write};

use std::path::Path;

use passk_report::document::{ReportPath, Written};
use passk_report::summary::Report;

use crate::error::CommandError;

/// One line on standard error, dropped if standard error is closed.
pub fn line(message: std::fmt::Arguments) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

/// `eprintln!` that never panics: a line on standard error, or nothing if nobody reads it.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::say::line(format_args!($($arg)*))
    };
}
pub(crate) use say;

/// Writes `text` on standard output. A reader that went away (a broken pipe) has all it
/// wanted, so that is no error; any other failure (a full disk behind a redirection) is.
pub fn print(text: &[u8]) -> Result<(), CommandError> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != ErrorKind::BrokenPipe => {
            Err(CommandError::Write { path: "standard output".into(), source: error })
        }
        _ => Ok(()),
    }
}

/// Warns of what pass@k leaves out, and prints the table.
pub fn table(report: &Report<'_>) -> Result<(), CommandError> {
    for warning in report.warnings() {
        say!("warning: {warning}");
    }
    let mut table = Vec::new();
    report.print_table(&mut table).map_err(|source| CommandError::Write { path: "standard output".into(), source })?;
    print(&table)
}

/// Prints the table, and writes the JSON summary to `summary` if asked.
pub fn publish(report: &Report<'_>, summary: Option<&Path>) -> Result<(), CommandError> {
    table(report)?;
    match summary {
        Some(path) => {
            report.write_json(path).map_err(|source| CommandError::Write { path: path.display().to_string(), source })
        }
        None => Ok(()),
    }
}

/// Says why a report asked for was not written.
pub fn written(written: Written, target: &ReportPath) {
    match written {
        Written::Report => say!("report: {}", target.path.display()),
        Written::NothingToReport => {
            say!("warning: no report written to {}: there is no pass@k to report", target.path.display())
        }
    }
}
