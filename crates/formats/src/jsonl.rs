//! Line-numbered reading of JSON Lines files, plain or gzip-compressed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::InputError;

/// The first bytes of every gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A JSON object and the line it came from (counting from 1).
pub type Record = (usize, Map<String, Value>);

/// Reads JSON objects one line at a time. Blank lines are skipped, as the reference
/// harness does, but still counted, so line numbers match what an editor shows.
pub struct JsonlReader {
    source: String,
    lines: Box<dyn BufRead + Send>,
    line: usize,
    buffer: String,
    /// Whether a line that is not blank has been read: the format mistakes recognized
    /// below show on the first.
    started: bool,
}

impl std::fmt::Debug for JsonlReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlReader").field("source", &self.source).field("line", &self.line).finish()
    }
}

impl JsonlReader {
    /// Opens `path`, decompressing it if it is gzip-compressed.
    pub fn open(path: &Path) -> Result<JsonlReader, InputError> {
        JsonlReader::open_as(path, &path.display().to_string())
    }

    /// Opens `path`, naming it `source` in errors (standard input is read from a copy).
    /// Compression is told by the file's first bytes, not its name, so that a copy of
    /// compressed standard input reads as well as a `.gz` file.
    pub fn open_as(path: &Path, source: &str) -> Result<JsonlReader, InputError> {
        let open_error = |error| InputError::Open { path: source.to_owned(), source: error };
        let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(open_error)?);
        let compressed = file.fill_buf().map_err(open_error)?.starts_with(&GZIP_MAGIC);
        let reader: Box<dyn BufRead + Send> = if compressed {
            Box::new(BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(file)))
        } else {
            Box::new(file)
        };
        Ok(JsonlReader::new(source.to_owned(), reader))
    }

    /// Reads from text already in memory, naming it `source` in errors.
    pub fn from_text(source: &str, text: &'static str) -> JsonlReader {
        JsonlReader::new(source.to_owned(), Box::new(text.as_bytes()))
    }

    /// Reads from text handed over, naming it `source` in errors.
    pub fn from_string(source: &str, text: String) -> JsonlReader {
        JsonlReader::new(source.to_owned(), Box::new(std::io::Cursor::new(text.into_bytes())))
    }

    fn new(source: String, lines: Box<dyn BufRead + Send>) -> JsonlReader {
        JsonlReader { source, lines, line: 0, buffer: String::new(), started: false }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The next line that is not blank, as text, with its number; the first is refused
    /// when it shows the file is not JSON Lines.
    pub fn next_text(&mut self) -> Option<Result<(usize, &str), InputError>> {
        loop {
            self.buffer.clear();
            self.line += 1;
            let line = self.line;
            match self.lines.read_line(&mut self.buffer) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(error) => return Some(Err(InputError::Read { path: self.source.clone(), line, source: error })),
            }
            if line == 1 && self.buffer.starts_with('\u{feff}') {
                return Some(Err(InputError::ByteOrderMark { path: self.source.clone() }));
            }
            if self.buffer.trim().is_empty() {
                continue;
            }
            if !std::mem::replace(&mut self.started, true) {
                if let Some(shape) = whole_document(self.buffer.trim()) {
                    return Some(Err(InputError::NotJsonLines { path: self.source.clone(), line, shape }));
                }
            }
            return Some(Ok((line, &self.buffer)));
        }
    }

    fn next_record(&mut self) -> Option<Result<Record, InputError>> {
        let source = self.source.clone();
        Some(self.next_text()?.and_then(|(line, text)| match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => Ok((line, object)),
            Ok(_) => Err(InputError::NotObject { path: source, line }),
            Err(error) => Err(InputError::Json { path: source, line, message: within_line(&error) }),
        }))
    }

    /// The whole of what is left to read, as text.
    pub fn rest(mut self) -> Result<String, InputError> {
        let mut text = String::new();
        self.lines.read_to_string(&mut text).map_err(|source| InputError::Read {
            path: self.source.clone(),
            line: self.line + 1,
            source,
        })?;
        Ok(text)
    }
}

/// What a first line says the file is, when it is one JSON document rather than JSON
/// Lines: an array of samples, or an object spread over several lines.
fn whole_document(first: &str) -> Option<&'static str> {
    let array_of_objects = || match serde_json::from_str::<Value>(first) {
        // The first line of an array spread over several lines.
        Err(_) => true,
        Ok(Value::Array(items)) => items.iter().all(Value::is_object),
        Ok(_) => false,
    };
    if first.starts_with('[') && array_of_objects() {
        Some("a JSON array")
    } else if first == "{" {
        Some("a JSON object spread over several lines")
    } else {
        None
    }
}

impl Iterator for JsonlReader {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}
/// serde_json's message for an error in one line's text, placed by its column: its own
/// "line 2 column 0" counts within the text, beside the file's line number the error
/// already names.
fn within_line(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let bare = text.rsplit_once(" at line ").map_or(text.as_str(), |(bare, _)| bare);
    if error.is_eof() {
        format!("{bare}: the line ends before its JSON value does")
    } else {
        format!("{bare} at column {}", error.column())
    }
}
