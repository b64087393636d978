//! Line-numbered reading of JSON Lines files, plain or gzip-compressed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::input::InputError;

/// A JSON object and the line it came from (counting from 1).
pub type Record = (usize, Map<String, Value>);

/// Reads JSON objects one line at a time. Blank lines are skipped, as the reference
/// harness does, but still counted, so line numbers match what an editor shows.
pub struct JsonlReader {
    source: String,
    lines: Box<dyn BufRead + Send>,
    line: usize,
    buffer: String,
}

impl std::fmt::Debug for JsonlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlReader").field("source", &self.source).field("line", &self.line).finish()
    }
}

impl JsonlReader {
    /// Opens `path`, decompressing it if its name ends in `.gz`.
    pub fn open(path: &Path) -> Result<JsonlReader, InputError> {
        let source = path.display().to_string();
        let file = File::open(path).map_err(|error| InputError::Open { path: source.clone(), source: error })?;
        let reader: Box<dyn Read + Send> = if path.extension().is_some_and(|e| e == "gz") {
            Box::new(flate2::read::MultiGzDecoder::new(file))
        } else {
            Box::new(file)
        };
        Ok(JsonlReader::new(source, Box::new(BufReader::with_capacity(1 << 16, reader))))
    }

    /// Reads from text already in memory, naming it `source` in errors.
    pub fn from_text(source: &str, text: &'static str) -> JsonlReader {
        JsonlReader::new(source.to_owned(), Box::new(text.as_bytes()))
    }

    fn new(source: String, lines: Box<dyn BufRead + Send>) -> JsonlReader {
        JsonlReader { source, lines, line: 0, buffer: String::new() }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    fn next_record(&mut self) -> Option<Result<Record, InputError>> {
        loop {
            self.buffer.clear();
            self.line += 1;
            let line = self.line;
            match self.lines.read_line(&mut self.buffer) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(error) => return Some(Err(InputError::Read { path: self.source.clone(), line, source: error })),
            }
            if self.buffer.trim().is_empty() {
                continue;
            }
            return Some(match serde_json::from_str::<Value>(&self.buffer) {
                Ok(Value::Object(object)) => Ok((line, object)),
                Ok(_) => Err(InputError::NotObject { path: self.source.clone(), line }),
                Err(error) => Err(InputError::Json { path: self.source.clone(), line, message: error.to_string() }),
            });
        }
    }
}

impl Iterator for JsonlReader {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}
