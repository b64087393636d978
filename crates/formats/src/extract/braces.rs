//! A small scanner for the brace languages (C++, Java, Go, Rust, JavaScript and
//! TypeScript) and Bash: where a source's top-level items begin and end, and where the
//! function a prompt leaves open closes. Strings, characters and comments are skipped,
//! so that a brace in a string is not a block's; nothing else of the grammar is read.

/// How a language writes its literals, comments and statement ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Cpp,
    Java,
    Go,
    Rust,
    /// JavaScript and TypeScript.
    JavaScript,
    Shell,
}

impl Syntax {
    /// The syntax of a language of `sandbox/languages.toml`, by its name.
    pub fn of(language: &str) -> Option<Syntax> {
        Some(match language {
            "cpp" => Syntax::Cpp,
            "java" => Syntax::Java,
            "go" => Syntax::Go,
            "rust" => Syntax::Rust,
            "javascript" | "typescript" => Syntax::JavaScript,
            "bash" => Syntax::Shell,
            _ => return None,
        })
    }
}

/// A top-level item: a declaration, definition or statement with the comments before
/// it, or a line of prose between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    pub text: &'a str,
    /// Where it starts in the scanned source.
    pub start: usize,
    /// Whether it ends before the source does, every block it opens closed.
    pub closed: bool,
    /// A line of English between items, not code.
    pub prose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Open(u8),
    Close(u8),
    Semicolon,
    Newline,
    /// An identifier or keyword.
    Word,
    /// A string, character or number literal.
    Value,
    Punct(u8),
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// Significant tokens, one at a time, with comments and whitespace left out.
struct Tokens<'a> {
    code: &'a [u8],
    text: &'a str,
    syntax: Syntax,
    at: usize,
    last: Option<Token>,
    /// Shell: here-documents whose bodies begin at the next line, by terminator.
    heredocs: Vec<(String, bool)>,
    /// Shell: whether the next word is a command's (where keywords are keywords).
    command: bool,
    /// Shell: `case` blocks open, where a pattern's `)` opens nothing.
    cases: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str, syntax: Syntax) -> Tokens<'a> {
        Tokens { code: text.as_bytes(), text, syntax, at: 0, last: None, heredocs: Vec::new(), command: true, cases: 0 }
    }

    fn byte(&self, at: usize) -> u8 {
        self.code.get(at).copied().unwrap_or(0)
    }

    fn next_token(&mut self) -> Option<Token> {
        let token = if self.syntax == Syntax::Shell { self.shell_token() } else { self.c_token() };
        if let Some(token) = token {
            self.last = Some(token);
        }
        token
    }

    fn c_token(&mut self) -> Option<Token> {
        loop {
            let start = self.at;
            let c = *self.code.get(start)?;
            if c == b'\n' {
                self.at += 1;
                return Some(Token { kind: Kind::Newline, start, end: start + 1 });
            }
            if c.is_ascii_whitespace() {
                self.at += 1;
                continue;
            }
            if let Some(end) = self.comment_end(start) {
                self.at = end;
                continue;
            }
            if let Some(end) = self.literal_end(start) {
                self.at = end;
                return Some(Token { kind: Kind::Value, start, end });
            }
            let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
            let kind = if word(c) {
                let mut end = start;
                while end < self.code.len() && word(self.code[end]) {
                    end += 1;
                }
                self.at = end;
                let kind = if c.is_ascii_digit() { Kind::Value } else { Kind::Word };
                return Some(Token { kind, start, end });
            } else {
                match c {
                    b'(' | b'[' | b'{' => Kind::Open(c),
                    b')' | b']' | b'}' => Kind::Close(c),
                    b';' => Kind::Semicolon,
                    _ => Kind::Punct(c),
                }
            };
            self.at = start + 1;
            return Some(Token { kind, start, end: start + 1 });
        }
    }

    /// Where a comment starting at `at` ends (before its line's end, for a line comment).
    fn comment_end(&self, at: usize) -> Option<usize> {
        let rest = &self.code[at..];
        if rest.starts_with(b"//") {
            return Some(line_end(self.code, at));
        }
        if !rest.starts_with(b"/*") {
            return None;
        }
        // Rust's block comments nest.
        let mut depth = 0;
        let mut at = at;
        while at < self.code.len() {
            if self.code[at..].starts_with(b"/*") {
                depth += 1;
                at += 2;
            } else if self.code[at..].starts_with(b"*/") {
                at += 2;
                if self.syntax != Syntax::Rust || depth == 1 {
                    return Some(at);
                }
                depth -= 1;
            } else {
                at += 1;
            }
        }
        Some(at)
    }

    /// Where a string or character literal starting at `at` ends.
    fn literal_end(&self, at: usize) -> Option<usize> {
        let c = self.code[at];
        let before = if at == 0 { b' ' } else { self.code[at - 1] };
        let identifier_before = before.is_ascii_alphanumeric() || before == b'_';
        match (self.syntax, c) {
            (Syntax::Java, b'"') if self.code[at..].starts_with(b"\"\"\"") => {
                Some(find(self.code, at + 3, b"\"\"\"").map_or(self.code.len(), |end| end + 3))
            }
            (Syntax::Rust, b'"') => Some(quoted_end(self.code, at, b'"', true)),
            (_, b'"') => Some(quoted_end(self.code, at, b'"', false)),
            (Syntax::Go, b'`') => Some(find(self.code, at + 1, b"`").map_or(self.code.len(), |end| end + 1)),
            (Syntax::JavaScript, b'`') => Some(self.template_end(at)),
            (Syntax::JavaScript, b'\'') => Some(quoted_end(self.code, at, b'\'', false)),
            (Syntax::JavaScript, b'/') if self.regex_may_start() => {
                (!matches!(self.byte(at + 1), b'/' | b'*')).then(|| regex_end(self.code, at))
            }
            (Syntax::Rust, b'\'') => {
                // A character ('a', '\n', 'é'), or a lifetime ('a), which does not close.
                if self.byte(at + 1) == b'\\' {
                    return Some(quoted_end(self.code, at, b'\'', false));
                }
                let next = self.text.get(at + 1..)?.chars().next()?;
                (self.byte(at + 1 + next.len_utf8()) == b'\'').then_some(at + 2 + next.len_utf8())
            }
            (Syntax::Cpp, b'\'') if self.in_number(at) => None,
            (_, b'\'') => Some(quoted_end(self.code, at, b'\'', false)),
            (Syntax::Cpp, b'R') if self.byte(at + 1) == b'"' && !identifier_before => Some(self.cpp_raw_end(at + 1)),
            (Syntax::Rust, b'r' | b'b') if !identifier_before => self.rust_raw_end(at),
            _ => None,
        }
    }

    /// Whether a `'` at `at` separates a C++ number's digits (1'000'000).
    fn in_number(&self, at: usize) -> bool {
        let mut start = at;
        while start > 0 && (self.code[start - 1].is_ascii_alphanumeric() || self.code[start - 1] == b'.') {
            start -= 1;
        }
        start < at && self.code[start].is_ascii_digit()
    }

    /// `R"delimiter(...)delimiter"`, from its opening quote.
    fn cpp_raw_end(&self, quote: usize) -> usize {
        let Some(open) = find(self.code, quote, b"(") else { return self.code.len() };
        let mut closing = b")".to_vec();
        closing.extend_from_slice(&self.code[quote + 1..open]);
        closing.push(b'"');
        find(self.code, open, &closing).map_or(self.code.len(), |end| end + closing.len())
    }

    /// `r"..."`, `r#"..."#`, `b"..."`, `br"..."` and `b'x'`.
    fn rust_raw_end(&self, at: usize) -> Option<usize> {
        let mut next = at + 1;
        if self.code[at] == b'b' {
            match self.byte(next) {
                b'"' => return Some(quoted_end(self.code, next, b'"', true)),
                b'\'' => return Some(quoted_end(self.code, next, b'\'', false)),
                b'r' => next += 1,
                _ => return None,
            }
        }
        let hashes = self.code[next..].iter().take_while(|&&c| c == b'#').count();
        if self.byte(next + hashes) != b'"' {
            return None;
        }
        let mut closing = vec![b'"'];
        closing.extend(std::iter::repeat(b'#').take(hashes));
        Some(find(self.code, next + hashes + 1, &closing).map_or(self.code.len(), |end| end + closing.len()))
    }

    /// A JavaScript template literal, its `${...}` parts scanned as code.
    fn template_end(&self, at: usize) -> usize {
        let mut at = at + 1;
        while at < self.code.len() {
            match self.code[at] {
                b'\\' => at += 2,
                b'`' => return at + 1,
                b'$' if self.byte(at + 1) == b'{' => at = nested_end(self.text, self.syntax, at + 2, b'{', b'}'),
                _ => at += 1,
            }
        }
        self.code.len()
    }

    /// Whether a `/` here begins a regular expression rather than a division: after an
    /// operator, an opening bracket or a keyword, not after a value.
    fn regex_may_start(&self) -> bool {
        match self.last {
            None => true,
            Some(Token { kind: Kind::Word, start, end }) => [
                "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield",
                "await",
            ]
            .contains(&&self.text[start..end]),
            Some(Token { kind: Kind::Value | Kind::Close(_), .. }) => false,
            Some(_) => true,
        }
    }

    fn shell_token(&mut self) -> Option<Token> {
        loop {
            let start = self.at;
            let c = *self.code.get(start)?;
            match c {
                b'\n' => {
                    self.at = self.heredoc_bodies_end(start + 1);
                    self.command = true;
                    return Some(Token { kind: Kind::Newline, start, end: start + 1 });
                }
                b'\\' => {
                    // A line continued, or a character quoted.
                    self.at += 2;
                    if self.byte(start + 1) != b'\n' {
                        self.command = false;
                        return Some(Token { kind: Kind::Word, start, end: (start + 2).min(self.code.len()) });
                    }
                    continue;
                }
                _ if c.is_ascii_whitespace() => {
                    self.at += 1;
                    continue;
                }
                b'#' if start == 0
                    || matches!(self.code[start - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(') =>
                {
                    self.at = line_end(self.code, start);
                    continue;
                }
                _ => {}
            }
            let (kind, end) = match c {
                b'\'' => (Kind::Value, find(self.code, start + 1, b"'").map_or(self.code.len(), |end| end + 1)),
                b'"' => (Kind::Value, shell_double_quoted_end(self.code, start + 1)),
                b'`' => (Kind::Value, find(self.code, start + 1, b"`").map_or(self.code.len(), |end| end + 1)),
                b'$' if self.byte(start + 1) == b'\'' => (Kind::Value, quoted_end(self.code, start + 1, b'\'', true)),
                b'{' | b'}' => {
                    let kind = if c == b'{' { Kind::Open(c) } else { Kind::Close(c) };
                    self.command = true;
                    (kind, start + 1)
                }
                b'(' | b')' if self.cases > 0 && !(c == b'(' && self.byte(start.wrapping_sub(1)) == b'$') => {
                    self.command = c == b')';
                    (Kind::Punct(c), start + 1)
                }
                b'(' | b')' => {
                    let kind = if c == b'(' { Kind::Open(c) } else { Kind::Close(c) };
                    self.command = true;
                    (kind, start + 1)
                }
                b';' | b'&' | b'|' => {
                    self.command = true;
                    (if c == b';' { Kind::Semicolon } else { Kind::Punct(c) }, start + 1)
                }
                b'<' if self.code[start..].starts_with(b"<<") && !self.code[start..].starts_with(b"<<<") => {
                    (Kind::Punct(c), self.heredoc(start + 2))
                }
                _ => {
                    let mut end = start;
                    while end < self.code.len() && !b" \t\n;&|(){}<>\"'`".contains(&self.code[end]) {
                        end += 1;
                    }
                    let end = end.max(start + 1);
                    let word = &self.text[start..end];
                    let kind = if self.command { keyword(word) } else { None };
                    self.command = matches!(word, "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "!");
                    match kind {
                        Some(Kind::Open(b'c')) => self.cases += 1,
                        Some(Kind::Close(b'c')) => self.cases = self.cases.saturating_sub(1),
                        _ => {}
                    }
                    (kind.unwrap_or(Kind::Word), end)
                }
            };
            if matches!(kind, Kind::Value) {
                self.command = false;
            }
            self.at = end;
            return Some(Token { kind, start, end });
        }
    }

    /// A here-document's redirection, from after its `<<`: its terminator noted, for
    /// the body that begins at the next line.
    fn heredoc(&mut self, at: usize) -> usize {
        let mut at = at;
        let strip_tabs = self.byte(at) == b'-';
        at += usize::from(strip_tabs);
        while matches!(self.byte(at), b' ' | b'\t') {
            at += 1;
        }
        let quote = self.byte(at);
        let quoted = matches!(quote, b'\'' | b'"');
        let start = at + usize::from(quoted);
        let mut end = start;
        while end < self.code.len()
            && !(b" \t\n;&|<>()".contains(&self.code[end]) || (quoted && self.code[end] == quote))
        {
            end += 1;
        }
        if end > start {
            self.heredocs.push((self.text[start..end].to_owned(), strip_tabs));
        }
        end + usize::from(quoted && self.byte(end) == quote)
    }

    /// Where the bodies of the here-documents noted on the line ending at `at` end.
    fn heredoc_bodies_end(&mut self, at: usize) -> usize {
        let mut at = at;
        for (terminator, strip_tabs) in std::mem::take(&mut self.heredocs) {
            while at < self.code.len() {
                let end = line_end(self.code, at);
                let line = &self.text[at..end];
                let line = if strip_tabs { line.trim_start_matches('\t') } else { line };
                at = (end + 1).min(self.code.len());
                if line == terminator {
                    break;
                }
            }
        }
        at
    }
}

/// A shell word's meaning where it is a command's: a block's opening or closing keyword
/// (`case` and `esac` as `c`), or nothing.
fn keyword(word: &str) -> Option<Kind> {
    Some(match word {
        "if" | "for" | "while" | "until" | "select" => Kind::Open(b'k'),
        "case" => Kind::Open(b'c'),
        "fi" | "done" => Kind::Close(b'k'),
        "esac" => Kind::Close(b'c'),
        _ => return None,
    })
}

fn find(code: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    code.get(from..)?.windows(needle.len()).position(|window| window == needle).map(|at| at + from)
}

fn line_end(code: &[u8], from: usize) -> usize {
    find(code, from, b"\n").unwrap_or(code.len())
}

/// Where a literal quoted by `quote`, from its opening one at `at`, ends; at its line's
/// end, unclosed, where the literal cannot span lines.
fn quoted_end(code: &[u8], at: usize, quote: u8, multiline: bool) -> usize {
    let mut at = at + 1;
    while at < code.len() {
        match code[at] {
            b'\\' => at += 2,
            b'\n' if !multiline => return at,
            c if c == quote => return at + 1,
            _ => at += 1,
        }
    }
    code.len()
}

fn regex_end(code: &[u8], at: usize) -> usize {
    let mut at = at + 1;
    let mut class = false;
    while at < code.len() {
        match code[at] {
            b'\\' => at += 2,
            b'\n' => return at,
            b'[' => (class, at) = (true, at + 1),
            b']' => (class, at) = (false, at + 1),
            b'/' if !class => return at + 1,
            _ => at += 1,
        }
    }
    code.len()
}

/// Where code nested in a string ends (`${...}` in a template literal, `$(...)` in a
/// shell string): scanned as code from `at`, just inside its `open`, to past the
/// `close` that balances it.
fn nested_end(text: &str, syntax: Syntax, at: usize, open: u8, close: u8) -> usize {
    let mut inner = Tokens::new(text, syntax);
    inner.at = at;
    let mut depth = 1;
    while let Some(token) = inner.next_token() {
        match token.kind {
            Kind::Open(byte) if byte == open => depth += 1,
            Kind::Close(byte) if byte == close => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            break;
        }
    }
    inner.at
}

/// A shell double-quoted string, from after its opening quote, with `$(...)` inside.
fn shell_double_quoted_end(code: &[u8], at: usize) -> usize {
    let mut at = at;
    while at < code.len() {
        match code[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            b'$' if code.get(at + 1) == Some(&b'(') => {
                at = nested_end(std::str::from_utf8(code).unwrap_or_default(), Syntax::Shell, at + 2, b'(', b')');
            }
            _ => at += 1,
        }
    }
    code.len()
}

/// The top-level items of `code`, in order, with prose lines between them as items of
/// their own. An item ends at a `;` or a closing `}` at the top level (a `}` followed by
/// more on its line, as `};` or `} s;`, goes on to the end of that); in Go, JavaScript
/// and Bash also at a line's end that ends a statement there; a C++ preprocessor line is
/// one.
pub fn items<'a>(code: &'a str, syntax: Syntax) -> Vec<Item<'a>> {
    let mut tokens = Tokens::new(code, syntax);
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    let push = |items: &mut Vec<Item<'a>>, from: usize, to: usize, closed: bool| {
        let text = &code[from..to];
        if !text.trim().is_empty() {
            items.push(Item { text, start: from, closed, prose: false });
        }
    };
    loop {
        if start.is_none() {
            let from = tokens.at + code[tokens.at..].len() - code[tokens.at..].trim_start().len();
            if from >= code.len() {
                break;
            }
            let end = line_end(code.as_bytes(), from);
            let line = &code[from..end];
            if is_prose_line(line, syntax) {
                items.push(Item { text: line, start: from, closed: true, prose: true });
                tokens.at = end;
                continue;
            }
            if syntax == Syntax::Cpp && line.starts_with('#') {
                let mut end = end;
                while code[..end].ends_with('\\') && end < code.len() {
                    end = line_end(code.as_bytes(), end + 1);
                }
                push(&mut items, from, end, true);
                tokens.at = end;
                continue;
            }
            start = Some(from);
            tokens.at = from;
            tokens.last = None;
        }
        let Some(from) = start else { break };
        let previous = tokens.last;
        if syntax == Syntax::Cpp && previous.map_or(true, |token| token.kind == Kind::Newline) {
            // Comments before a preprocessor line are an item of their own.
            let next = tokens.at + code[tokens.at..].len() - code[tokens.at..].trim_start().len();
            if next > from
                && code[next..].starts_with('#')
                && code[..next].trim_end_matches([' ', '\t']).ends_with('\n')
            {
                push(&mut items, from, next, true);
                start = None;
                tokens.at = next;
                continue;
            }
        }
        let Some(token) = tokens.next_token() else { break };
        match token.kind {
            Kind::Open(_) => depth += 1,
            Kind::Close(closing) => {
                depth = depth.saturating_sub(1);
                if depth == 0 && closing == b'}' && syntax != Syntax::Shell {
                    let rest = &code[token.end..line_end(code.as_bytes(), token.end)];
                    let rest = rest.trim();
                    if rest.is_empty() || rest.starts_with("//") || rest.starts_with("/*") {
                        push(&mut items, from, token.end, true);
                        start = None;
                    }
                }
            }
            Kind::Semicolon if depth == 0 && syntax != Syntax::Shell => {
                push(&mut items, from, token.end, true);
                start = None;
            }
            Kind::Newline if depth == 0 && statement_ends(syntax, previous, code, token.end) => {
                push(&mut items, from, token.start, true);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        push(&mut items, from, code.len(), depth == 0);
    }
    items
}

/// Whether a line's end at the top level ends the statement on it, where a language
/// ends statements so (Go's and JavaScript's automatic semicolons; Bash's commands).
fn statement_ends(syntax: Syntax, last: Option<Token>, code: &str, next: usize) -> bool {
    let Some(last) = last else { return false };
    let ends_value = matches!(last.kind, Kind::Word | Kind::Value | Kind::Close(_));
    match syntax {
        Syntax::Go => ends_value,
        Syntax::JavaScript => {
            let following = code[next..].trim_start();
            let continues = following.starts_with(|c: char| ".([{+-*/%=&|^?:,<>".contains(c))
                && !following.starts_with("++")
                && !following.starts_with("--")
                && !following.starts_with("//")
                && !following.starts_with("/*");
            ends_value && !continues
        }
        Syntax::Shell => !matches!(last.kind, Kind::Punct(b'|' | b'&')),
        Syntax::Cpp | Syntax::Java | Syntax::Rust => false,
    }
}

/// A line of English where an item could begin: a sentence, a markdown list item, or a
/// heading or label ending in a colon, with none of the language's code about it.
fn is_prose_line(line: &str, syntax: Syntax) -> bool {
    let line = line.trim();
    if line.ends_with(['{', ';', '}', ',', '(', '\\'])
        || line.starts_with('/')
        || (line.starts_with('*') && !line.starts_with("**"))
    {
        return false;
    }
    let label = line.ends_with(':')
        && !line.contains(|c: char| "(){}[];=<>\"'$`".contains(c))
        && !["public:", "private:", "protected:", "default:"].contains(&line);
    let listed = line.starts_with("- ") || line.starts_with("**") || line.starts_with("1. ");
    let heading = line.starts_with("## ") && syntax != Syntax::Shell && syntax != Syntax::Cpp;
    if line.starts_with('#') {
        return heading;
    }
    super::markdown::is_prose(line) || label || listed
}

/// The words of `code` directly followed by a `.`: the packages (Go's) it qualifies
/// names with, among others.
pub fn qualifiers(code: &str, syntax: Syntax) -> std::collections::HashSet<String> {
    let mut tokens = Tokens::new(code, syntax);
    let mut found = std::collections::HashSet::new();
    let mut previous: Option<Token> = None;
    while let Some(token) = tokens.next_token() {
        if let (Kind::Punct(b'.'), Some(word)) = (token.kind, previous.filter(|previous| previous.kind == Kind::Word)) {
            found.insert(code[word.start..word.end].to_owned());
        }
        if token.kind != Kind::Newline {
            previous = Some(token);
        }
    }
    found
}

/// How many blocks are open at the end of `code`: braces in literals and comments are
/// not counted.
pub fn open_blocks(code: &str, syntax: Syntax) -> usize {
    let mut tokens = Tokens::new(code, syntax);
    let mut depth = 0usize;
    while let Some(token) = tokens.next_token() {
        match token.kind {
            Kind::Open(b'{') => depth += 1,
            Kind::Close(b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Where the function a prompt leaves open (its body's `{` the last opened before
/// `from`, the prompt's end) closes in `code`, the prompt and what follows it: the
/// offset of its closing `}`, and where every block open at `from` has closed (the
/// class a Java method is in), if they do.
pub fn function_end(code: &str, from: usize, syntax: Syntax) -> Option<(usize, Option<usize>)> {
    let mut tokens = Tokens::new(code, syntax);
    let mut depth = 0usize;
    let mut open_at_prompt = None;
    let mut function = None;
    while let Some(token) = tokens.next_token() {
        if token.start >= from && open_at_prompt.is_none() {
            open_at_prompt = Some(depth);
        }
        match token.kind {
            Kind::Open(b'{') => depth += 1,
            Kind::Close(b'}') => {
                depth = depth.saturating_sub(1);
                if let Some(open) = open_at_prompt {
                    if function.is_none() && depth + 1 == open {
                        function = Some(token.start);
                    }
                    if depth == 0 {
                        return function.map(|function| (function, Some(token.end)));
                    }
                }
            }
            _ => {}
        }
    }
    function.map(|function| (function, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(code: &str, syntax: Syntax) -> Vec<&str> {
        items(code, syntax).iter().map(|item| item.text).collect()
    }

    #[test]
    fn cpp_items_end_at_their_braces_and_semicolons_and_skip_literals() {
        let code = "#include <vector>\nusing namespace std;\n// doc\nstruct P { int x; };\n\
                    int f(char c) {\n    if (c == '}') return 1; // }\n    return \"}\"[0] + R\"x(})x\"[0] + 1'000;\n}\n\
                    int main() { return f('{'); }\n";
        assert_eq!(
            texts(code, Syntax::Cpp),
            [
                "#include <vector>",
                "using namespace std;",
                "// doc\nstruct P { int x; };",
                "int f(char c) {\n    if (c == '}') return 1; // }\n    return \"}\"[0] + R\"x(})x\"[0] + 1'000;\n}",
                "int main() { return f('{'); }",
            ]
        );
    }

    #[test]
    fn prose_between_items_is_an_item_of_its_own() {
        let code = "Here is the function you asked for:\nint f() {\n    return 1;\n}\nThis runs in constant time.\n";
        let found = items(code, Syntax::Cpp);
        assert_eq!(found.iter().map(|item| item.prose).collect::<Vec<_>>(), [true, false, true]);
    }

    #[test]
    fn go_and_javascript_statements_end_at_a_lines_end() {
        assert_eq!(
            texts("package main\n\nimport (\n\t\"fmt\"\n)\n\n// F doubles.\nfunc F(x int) int {\n\treturn 2 * x\n}\nvar y = F(1)\n", Syntax::Go),
            ["package main", "import (\n\t\"fmt\"\n)", "// F doubles.\nfunc F(x int) int {\n\treturn 2 * x\n}", "var y = F(1)"]
        );
        assert_eq!(
            texts("const f = (s) => {\n  return s.replace(/[{]/g, `${'}'}`)\n}\nconst g = f\n  .bind(null)\nconsole.log(f('{'))\n", Syntax::JavaScript),
            ["const f = (s) => {\n  return s.replace(/[{]/g, `${'}'}`)\n}", "const g = f\n  .bind(null)", "console.log(f('{'))"]
        );
    }

    #[test]
    fn rust_lifetimes_characters_and_raw_strings() {
        assert_eq!(
            texts(
                "fn f<'a>(s: &'a str) -> char {\n    if s == r#\"}\"# { '}' } else { '{' }\n}\nfn main() {}\n",
                Syntax::Rust
            ),
            ["fn f<'a>(s: &'a str) -> char {\n    if s == r#\"}\"# { '}' } else { '{' }\n}", "fn main() {}"]
        );
    }

    #[test]
    fn shell_items_are_commands_and_functions() {
        let code = "#!/bin/bash\nf() {\n    echo \"}\" # }\n    cat <<EOF\n}\nEOF\n}\nfor x in 1 2; do\n    f \"$x\"\ndone\nX=1\n";
        assert_eq!(
            texts(code, Syntax::Shell),
            [
                "#!/bin/bash\nf() {\n    echo \"}\" # }\n    cat <<EOF\n}\nEOF\n}",
                "for x in 1 2; do\n    f \"$x\"\ndone",
                "X=1"
            ]
        );
    }

    #[test]
    fn the_prompts_function_closes_where_its_braces_do() {
        let prompt = "class Solution {\n    public int f(int x) {\n";
        let code = format!("{prompt}        return x;\n    }}\n}}\npublic class Main {{}}\n");
        let (function, all) = function_end(&code, prompt.len(), Syntax::Java).unwrap();
        assert_eq!(&code[function..function + 2], "}\n");
        assert_eq!(&code[all.unwrap()..], "\npublic class Main {}\n");
        assert_eq!(function_end("int f() {\n    return 1;\n", 10, Syntax::Cpp), None);
    }
}
