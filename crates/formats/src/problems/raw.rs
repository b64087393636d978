//! The top-level fields of a JSON object, each kept as its own text.
//!
//! EvalPlus's released files hold what strict JSON does not: the token `Infinity`, and
//! integers far beyond 64 bits. Their inputs go to the interpreter as text, where
//! Python's own JSON reader takes them as EvalPlus does, so here a line is only cut into
//! fields: strings and brackets are followed, nothing is converted, and a line of
//! hundreds of kilobytes costs one pass.

/// The fields of the object `text`, in order, as (name, the value's text); an error
/// says what is wrong and where.
pub fn fields(text: &str) -> Result<Vec<(String, &str)>, String> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err("expected a JSON object".into());
    }
    at = skip_space(bytes, at + 1);
    let mut fields = Vec::new();
    if bytes.get(at) == Some(&b'}') {
        return Ok(fields);
    }
    loop {
        let key_end = string_end(bytes, at).ok_or_else(|| format!("expected a field name at column {}", at + 1))?;
        let name: String = serde_json::from_str(&text[at..key_end]).map_err(|error| error.to_string())?;
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return Err(format!("expected `:` after field `{name}`"));
        }
        let start = skip_space(bytes, at + 1);
        let end = value_end(bytes, start).ok_or_else(|| format!("field `{name}` is cut short"))?;
        fields.push((name, text[start..end].trim_end()));
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return Ok(fields),
            _ => return Err(format!("expected `,` or `}}` at column {}", at + 1)),
        }
    }
}

/// How many items the JSON array `text` holds (tolerant in the same way).
pub fn array_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b']') {
        return Some(0);
    }
    let mut count = 0;
    loop {
        at = skip_space(bytes, value_end(bytes, at)?);
        count += 1;
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b']') => return Some(count),
            _ => return None,
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the string starting at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end (exclusive) of the value starting at `at`: a string, a bracketed value, or a
/// bare token (a number, `true`, `Infinity`, ...) running to the next `,`, `}` or `]`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let end = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                .map_or(bytes.len(), |p| at + p);
            (end > at).then_some(end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_standard_tokens_and_huge_integers_are_kept_as_text() {
        let line = r#"{"task_id": "HumanEval/1", "base_input": [[Infinity, -Infinity, NaN], [123456789012345678901234567890]], "atol": 0, "s": "a,\"}]"}"#;
        let fields = fields(line).unwrap();
        let names: Vec<_> = fields.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["task_id", "base_input", "atol", "s"]);
        assert_eq!(fields[1].1, "[[Infinity, -Infinity, NaN], [123456789012345678901234567890]]");
        assert_eq!(fields[2].1, "0");
        assert_eq!(fields[3].1, r#""a,\"}]""#);
        assert_eq!(array_len(fields[1].1), Some(2));
        assert_eq!(array_len("[]"), Some(0));
    }

    #[test]
    fn broken_objects_are_refused_not_misread() {
        assert!(fields(r#"{"a": [1, 2"#).is_err());
        assert!(fields(r#"{"a" 1}"#).is_err());
        assert!(fields("[1]").is_err());
        assert!(fields(r#"{"a": 1 "b": 2}"#).is_err());
    }
}
