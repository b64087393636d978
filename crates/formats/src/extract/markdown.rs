//! The markdown and prose of a chat model's answer: its fenced code blocks, and lines
//! of English before or between the code.

/// The contents of the markdown code blocks of `text`, in order. A block the answer
/// never closed (cut off at a token limit) runs to the end.
pub fn fenced_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let fence = ["```", "~~~"].into_iter().find(|fence| trimmed.starts_with(fence));
        match (&mut open, fence) {
            (None, Some(fence)) => open = Some((fence.to_owned(), Vec::new())),
            (Some((opened, lines)), Some(fence)) if *opened == fence && trimmed.trim_end() == fence => {
                blocks.push(join_lines(lines));
                open = None;
            }
            (Some((_, lines)), _) => lines.push(line),
            (None, None) => {}
        }
    }
    if let Some((_, lines)) = open {
        if !lines.is_empty() {
            blocks.push(join_lines(&lines));
        }
    }
    blocks
}

fn join_lines(lines: &[&str]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A line of English rather than code: a capitalised word followed by more words, with
/// none of Python's assignment, call or block syntax.
pub fn is_prose(line: &str) -> bool {
    let line = line.trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let first = words.first().copied().unwrap_or_default();
    const KEYWORDS: [&str; 12] =
        ["def", "class", "import", "from", "return", "if", "for", "while", "with", "try", "assert", "print"];
    words.len() >= 3
        && first.starts_with(|c: char| c.is_ascii_uppercase())
        && !KEYWORDS.contains(&first)
        && !first.contains(['(', '=', '.', '['])
        && words[1].chars().all(|c| c.is_alphabetic() || "',".contains(c))
        && !line.contains(" = ")
}

/// A completion from its first line of code on: a base model sometimes restates the
/// task in a sentence before the body.
pub fn after_leading_prose(text: &str) -> &str {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() || (is_prose(line) && !line.starts_with([' ', '\t'])) {
            offset += line.len();
        } else {
            break;
        }
    }
    if offset == 0 || offset == text.len() {
        text
    } else {
        &text[offset..]
    }
}
