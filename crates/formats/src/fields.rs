//! Typed access to a record's fields, with errors that name the file, line and field.

use serde_json::{Map, Value};

use crate::error::InputError;

/// Reads a required string field.
pub fn string_field(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<String, InputError> {
    match object.get(field) {
        None => Err(InputError::Missing { path: source.to_owned(), line, field }),
        Some(Value::String(value)) => Ok(value.clone()),
        Some(_) => Err(InputError::WrongType { path: source.to_owned(), line, field, expected: "a string" }),
    }
}

/// Reads a string field that may be missing or null.
pub fn optional_string_field(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<String>, InputError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string_field(source, line, object, field).map(Some),
    }
}

/// A list of strings, which must be there.
pub fn strings(
    source: &str,
    line: usize,
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Vec<String>, InputError> {
    let wrong = || InputError::WrongType { path: source.to_owned(), line, field, expected: "a list of strings" };
    match object.get(field) {
        None => Err(InputError::Missing { path: source.to_owned(), line, field }),
        Some(Value::Array(items)) => {
            items.iter().map(|item| item.as_str().map(str::to_owned).ok_or_else(wrong)).collect()
        }
        Some(_) => Err(wrong()),
    }
}
