//! An answer that holds the whole function, made a program, in a language other than
//! Python: the answer's top-level items that define something (includes and imports,
//! helper functions, types, constants) are kept, its `main`, its statements (calls,
//! prints, tests) and its prose are not; before them the prompt's own preamble (its
//! package clause, includes, imports and helpers), less what the answer defines again.

use std::collections::HashSet;

use super::braces::{items, Item, Syntax};

/// What a top-level item is, as far as keeping it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declares {
    /// Prose, comments or nothing.
    Nothing,
    /// Go's package clause, Java's package declaration.
    Package,
    /// An include, import or `use`.
    Import,
    Function(String),
    /// The program's own entry: C++'s, Go's, Rust's and Java's `main`.
    Main,
    /// A class, struct, enum, interface, trait, type alias or module.
    Type(String),
    /// Any other declaration: a constant, a global, an `impl`, a `typedef`; named where
    /// a second one of its name would not compile.
    Other(Option<String>),
    /// Code that runs: a call, a print, a loop, a test; Rust's `#[cfg(test)]` module.
    Statement,
}

impl Declares {
    pub fn name(&self) -> Option<&str> {
        match self {
            Declares::Function(name) | Declares::Type(name) | Declares::Other(Some(name)) => Some(name),
            _ => None,
        }
    }

    /// Whether an answer's program keeps it.
    pub fn kept(&self) -> bool {
        matches!(self, Declares::Import | Declares::Function(_) | Declares::Type(_) | Declares::Other(_))
    }
}

/// A top-level item of an answer or prompt, with what it declares.
#[derive(Debug, Clone)]
pub struct Declaration<'a> {
    pub item: Item<'a>,
    pub declares: Declares,
}

/// The top-level items of `code`, each with what it declares.
pub fn declarations(code: &str, syntax: Syntax) -> Vec<Declaration<'_>> {
    items(code, syntax).into_iter().map(|item| Declaration { declares: declares(&item, syntax), item }).collect()
}

/// Whether `code` defines the function `entry` at its top level (Java: in a class, or a
/// method standing alone).
pub fn defines(code: &str, entry: &str, syntax: Syntax) -> bool {
    if syntax == Syntax::Java {
        return super::java::defines(code, entry);
    }
    declarations(code, syntax).iter().any(|found| found.declares == Declares::Function(entry.to_owned()))
}

/// What `item` declares, in `syntax`.
pub fn declares(item: &Item, syntax: Syntax) -> Declares {
    if item.prose {
        return Declares::Nothing;
    }
    let (attributes, head) = head(item.text, syntax);
    if head.is_empty() {
        return Declares::Nothing;
    }
    match syntax {
        Syntax::Cpp => cpp(head, item.text),
        Syntax::Java => java(head, item.text),
        Syntax::Go => go(head),
        Syntax::Rust if attributes.contains("#[cfg(test)]") => Declares::Statement,
        Syntax::Rust => rust(head),
        Syntax::JavaScript => javascript(head),
        Syntax::Shell => shell(head),
    }
}

/// An item's attributes (Rust's `#[...]`) and its text after them and its comments.
fn head(text: &str, syntax: Syntax) -> (&str, &str) {
    let mut rest = text.trim_start();
    let mut attributes_end = 0;
    loop {
        let line_comment = if syntax == Syntax::Shell { "#" } else { "//" };
        if rest.starts_with(line_comment) {
            rest = rest.find('\n').map_or("", |end| &rest[end..]).trim_start();
        } else if rest.starts_with("/*") && syntax != Syntax::Shell {
            rest = rest.find("*/").map_or("", |end| &rest[end + 2..]).trim_start();
        } else if syntax == Syntax::Rust && rest.starts_with("#") {
            let Some(end) = rest.find(']') else { break };
            rest = rest[end + 1..].trim_start();
            attributes_end = text.len() - rest.len();
        } else {
            break;
        }
    }
    (&text[..attributes_end], rest)
}

/// The identifier at the start of `text`.
pub fn identifier(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(text.len());
    &text[..end]
}

/// `text` without the first of `prefixes` it starts with (each followed by a space),
/// repeatedly.
fn without_words<'a>(mut text: &'a str, words: &[&str]) -> &'a str {
    while let Some(rest) = words.iter().find_map(|word| {
        text.strip_prefix(word).filter(|rest| rest.starts_with(char::is_whitespace)).map(str::trim_start)
    }) {
        text = rest;
    }
    text
}

/// The name of a C-like function whose head is `head`: the last identifier before its
/// first parenthesis, where the item is a definition with a body (no `=` before it).
fn c_function(head: &str, text: &str) -> Option<String> {
    let open = head.find('(')?;
    let brace = head.find('{')?;
    if brace < open || head[..open].contains('=') || !text.trim_end().ends_with('}') {
        return None;
    }
    let before = head[..open].trim_end();
    let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).map_or(0, |at| at + 1);
    let name = &before[start..];
    (!name.is_empty()).then(|| name.to_owned())
}

fn cpp(head: &str, text: &str) -> Declares {
    if head.starts_with("#include") || head.starts_with("#import") {
        return Declares::Import;
    }
    if let Some(directive) = head.strip_prefix('#') {
        let directive = identifier(directive.trim_start());
        let known = ["define", "undef", "pragma", "if", "ifdef", "ifndef", "else", "elif", "endif", "line", "error"];
        return if known.contains(&directive) { Declares::Other(None) } else { Declares::Nothing };
    }
    let mut rest = head;
    if let Some(after) = rest.strip_prefix("template") {
        // `template <typename T>`: what follows its angle brackets.
        let mut depth = 0;
        for (at, c) in after.char_indices() {
            match c {
                '<' => depth += 1,
                '>' if depth == 1 => {
                    rest = after[at + 1..].trim_start();
                    break;
                }
                '>' => depth -= 1,
                _ => {}
            }
        }
    }
    let rest = without_words(rest, &["static", "inline", "constexpr", "extern", "typedef"]);
    for keyword in ["struct", "class", "union", "enum"] {
        if let Some(after) = rest.strip_prefix(keyword).filter(|after| after.starts_with(char::is_whitespace)) {
            let after = without_words(after.trim_start(), &["class", "struct"]);
            let name = identifier(after);
            let has_body = text.contains('{');
            if !name.is_empty() && has_body {
                return Declares::Type(name.to_owned());
            }
            return Declares::Other(None);
        }
    }
    match c_function(head, text) {
        Some(name) if name == "main" => Declares::Main,
        Some(name) => Declares::Function(name),
        None => Declares::Other(None),
    }
}

const JAVA_MODIFIERS: [&str; 11] = [
    "public",
    "private",
    "protected",
    "static",
    "final",
    "abstract",
    "synchronized",
    "strictfp",
    "sealed",
    "non-sealed",
    "default",
];

/// A Java item's text after its annotations and modifiers.
pub fn java_unmodified(head: &str) -> &str {
    let mut rest = head;
    loop {
        let next = without_words(rest, &JAVA_MODIFIERS);
        let next = match next.strip_prefix('@') {
            // An annotation, perhaps with arguments.
            Some(annotation) if !annotation.starts_with("interface") => {
                let name = identifier(annotation.trim_start());
                let after = annotation.trim_start()[name.len()..].trim_start();
                let after = match after.strip_prefix('(') {
                    Some(arguments) => arguments.find(')').map_or("", |end| &arguments[end + 1..]),
                    None => after,
                };
                after.trim_start()
            }
            _ => next,
        };
        if next.len() == rest.len() {
            return rest;
        }
        rest = next;
    }
}

fn java(head: &str, text: &str) -> Declares {
    if head.starts_with("import ") {
        return Declares::Import;
    }
    if head.starts_with("package ") {
        return Declares::Package;
    }
    let rest = java_unmodified(head);
    for keyword in ["class", "interface", "enum", "record", "@interface"] {
        if let Some(after) = rest.strip_prefix(keyword).filter(|after| after.starts_with(char::is_whitespace)) {
            return Declares::Type(identifier(after.trim_start()).to_owned());
        }
    }
    match c_function(head, text) {
        Some(name) if name == "main" && rest.contains("void") => Declares::Main,
        Some(name) => Declares::Function(name),
        None => Declares::Other(None),
    }
}

fn go(head: &str) -> Declares {
    let keyword = identifier(head);
    let rest = head[keyword.len()..].trim_start();
    match keyword {
        "package" => Declares::Package,
        "import" => Declares::Import,
        "func" if rest.starts_with('(') => Declares::Other(None),
        "func" => match identifier(rest) {
            "main" | "init" => Declares::Main,
            name => Declares::Function(name.to_owned()),
        },
        "type" => Declares::Type(identifier(rest).to_owned()),
        "var" | "const" => Declares::Other(Some(identifier(rest).to_owned()).filter(|name| !name.is_empty())),
        _ => Declares::Statement,
    }
}

fn rust(head: &str) -> Declares {
    let mut rest = head;
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.trim_start().strip_prefix('(') {
            Some(scoped) => scoped.find(')').map_or("", |end| scoped[end + 1..].trim_start()),
            None if after.starts_with(char::is_whitespace) => after.trim_start(),
            None => rest,
        };
    }
    let rest = without_words(rest, &["const", "async", "unsafe", "default"]);
    let rest = match rest.strip_prefix("extern") {
        Some(after) if !after.trim_start().starts_with("crate") => {
            let after = after.trim_start();
            // `extern "C" fn`: past the ABI's string.
            let after = match after.strip_prefix('"') {
                Some(abi) => abi.find('"').map_or("", |end| &abi[end + 1..]),
                None => after,
            };
            after.trim_start()
        }
        _ => rest,
    };
    let keyword = identifier(rest);
    let after = rest[keyword.len()..].trim_start();
    let name = identifier(after).to_owned();
    match keyword {
        "use" | "extern" => Declares::Import,
        "fn" if name == "main" => Declares::Main,
        "fn" => Declares::Function(name),
        "struct" | "enum" | "trait" | "union" | "type" | "mod" => Declares::Type(name),
        "static" | "const" => Declares::Other(Some(identifier(without_words(after, &["mut"])).to_owned())),
        "impl" => Declares::Other(None),
        "macro_rules" => Declares::Other(Some(identifier(after.trim_start_matches('!').trim_start()).to_owned())),
        _ => Declares::Statement,
    }
}

/// A JavaScript or TypeScript item's text without `export` or `export default`.
pub fn unexported(head: &str) -> &str {
    let rest = without_words(head, &["export"]);
    without_words(rest, &["default", "declare"])
}

fn javascript(head: &str) -> Declares {
    let rest = unexported(head);
    if head.starts_with("import ") || head.starts_with("import{") {
        return Declares::Import;
    }
    if rest.starts_with("'use strict'") || rest.starts_with("\"use strict\"") {
        return Declares::Other(None);
    }
    let rest = without_words(rest, &["async", "abstract"]);
    let keyword = identifier(rest);
    let after = rest[keyword.len()..].trim_start();
    match keyword {
        "function" => {
            let name = identifier(after.trim_start_matches('*').trim_start());
            if name.is_empty() {
                Declares::Statement
            } else {
                Declares::Function(name.to_owned())
            }
        }
        "const" | "let" | "var" => {
            let name = identifier(after);
            if name.is_empty() {
                return Declares::Other(None);
            }
            // `const f = (...) => ...` or `= function`: a function, however declared.
            let value = after.find('=').map_or("", |at| after[at + 1..].trim_start());
            let value = without_words(value, &["async"]);
            let arrow = value.starts_with('(') || value.starts_with("function") || {
                let parameter = identifier(value);
                !parameter.is_empty() && value[parameter.len()..].trim_start().starts_with("=>")
            };
            if arrow && !after[name.len()..].trim_start().starts_with("=>") {
                Declares::Function(name.to_owned())
            } else {
                Declares::Other(Some(name.to_owned()))
            }
        }
        "class" | "interface" | "enum" | "namespace" | "module" | "type" if !identifier(after).is_empty() => {
            Declares::Type(identifier(after).to_owned())
        }
        _ => Declares::Statement,
    }
}

fn shell(head: &str) -> Declares {
    if let Some(rest) = head.strip_prefix("function").filter(|rest| rest.starts_with(char::is_whitespace)) {
        return Declares::Function(identifier(rest.trim_start()).to_owned());
    }
    let name = identifier(head);
    let rest = head[name.len()..].trim_start();
    if !name.is_empty() && rest.starts_with("()") {
        return Declares::Function(name.to_owned());
    }
    if ["declare", "typeset", "readonly", "export", "shopt", "alias", "local"].contains(&name) {
        return Declares::Other(None);
    }
    // `NAME=value` (or `NAME[key]=value`, `NAME+=value`) with nothing run after it.
    let assigned = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && (rest.starts_with('=') || rest.starts_with("+=") || rest.starts_with('['))
        && head[name.len()..].starts_with(['=', '+', '[']);
    if assigned {
        Declares::Other(None)
    } else {
        Declares::Statement
    }
}

/// The program of `answer`, an answer holding the whole function, in `syntax`, with
/// `preamble` (the prompt's code before its entry point; empty for a `solution`) before
/// it.
pub fn program(answer: &str, preamble: &str, syntax: Syntax) -> String {
    let answer = kept(answer, syntax);
    let defined: HashSet<String> = answer.iter().filter_map(|found| found.declares.name().map(str::to_owned)).collect();
    let texts: HashSet<&str> = answer.iter().map(|found| found.item.text.trim()).collect();
    let preamble: Vec<Declaration> = declarations(preamble, syntax)
        .into_iter()
        .filter(|found| found.item.closed && !found.item.prose)
        .filter(|found| !found.declares.name().is_some_and(|name| defined.contains(name)))
        .filter(|found| !texts.contains(found.item.text.trim()))
        .collect();
    let mut parts: Vec<String> = Vec::new();
    match syntax {
        Syntax::Go => {
            // A package clause, then every import, then the rest: Go's order.
            let used = super::braces::qualifiers(
                &answer
                    .iter()
                    .filter(|found| found.declares != Declares::Import)
                    .map(|found| found.item.text)
                    .collect::<Vec<_>>()
                    .join("\n"),
                syntax,
            );
            let (imports, rest): (Vec<_>, Vec<_>) = answer.iter().partition(|found| found.declares == Declares::Import);
            let (first, others): (Vec<_>, Vec<_>) =
                preamble.iter().partition(|found| matches!(found.declares, Declares::Package | Declares::Import));
            parts.extend(first.iter().map(|found| found.item.text.to_owned()));
            let specs: Vec<String> = imports.iter().flat_map(|found| go_import_specs(found.item.text)).collect();
            let specs: Vec<String> = specs.into_iter().filter(|spec| go_spec_used(spec, &used)).collect();
            if !specs.is_empty() {
                parts.push(format!(
                    "import (\n{}\n)",
                    specs.iter().map(|spec| format!("\t{spec}")).collect::<Vec<_>>().join("\n")
                ));
            }
            parts.extend(others.iter().map(|found| found.item.text.to_owned()));
            parts.extend(rest.iter().map(|found| found.item.text.to_owned()));
        }
        Syntax::Rust => {
            let mut bound = defined.clone();
            for found in answer.iter().filter(|found| found.declares == Declares::Import) {
                bound.extend(rust_use_leaves(found.item.text).into_iter().map(|(_, name)| name));
            }
            for found in &preamble {
                if found.declares == Declares::Import && found.item.text.trim_start().starts_with("use ") {
                    parts.extend(
                        rust_use_leaves(found.item.text)
                            .into_iter()
                            .filter(|(_, name)| name == "*" || !bound.contains(name))
                            .map(|(path, _)| format!("use {path};")),
                    );
                } else {
                    parts.push(found.item.text.to_owned());
                }
            }
            parts.extend(answer.iter().map(|found| without_inner_attributes(found.item.text)));
        }
        Syntax::JavaScript => {
            parts.extend(preamble.iter().map(|found| found.item.text.to_owned()));
            parts.extend(answer.iter().map(|found| {
                let (comments, head) = head(found.item.text, syntax);
                let at = found.item.text.len() - head.len();
                format!("{comments}{}{}", &found.item.text[comments.len()..at], unexported(head))
            }));
        }
        Syntax::Cpp | Syntax::Shell | Syntax::Java => {
            parts.extend(preamble.iter().map(|found| found.item.text.to_owned()));
            parts.extend(answer.iter().map(|found| found.item.text.to_owned()));
        }
    }
    joined(&parts)
}

/// The parts of a program, a blank line between them but between imports.
pub fn joined(parts: &[String]) -> String {
    let import = |part: &str| ["use ", "import ", "#include"].iter().any(|start| part.starts_with(start));
    let mut program = String::new();
    for (at, part) in parts.iter().enumerate() {
        if at > 0 {
            program.push_str(if import(&parts[at - 1]) && import(part) { "\n" } else { "\n\n" });
        }
        program.push_str(part);
    }
    program.push('\n');
    program
}

/// The items of an answer its program keeps: not its prose, its `main`, its statements,
/// nor an item it never finished (cut off at a token limit).
fn kept(answer: &str, syntax: Syntax) -> Vec<Declaration<'_>> {
    declarations(answer, syntax).into_iter().filter(|found| found.item.closed && found.declares.kept()).collect()
}

/// A Rust item without the inner attributes (`#![allow(...)]`) before it, which only a
/// crate's first lines may hold.
fn without_inner_attributes(text: &str) -> String {
    let mut rest = text;
    let mut kept = String::new();
    while let Some(at) = rest.find("#![") {
        kept.push_str(&rest[..at]);
        rest = rest[at..].find(']').map_or("", |end| &rest[at + end + 1..]);
    }
    kept.push_str(rest);
    kept
}

/// What a Rust `use` declaration binds: each leaf of its tree as a path of its own (with
/// its `as`), and the name it binds (`*` for a glob).
fn rust_use_leaves(text: &str) -> Vec<(String, String)> {
    let (_, head) = head(text, Syntax::Rust);
    let head = head.strip_prefix("pub").map_or(head, str::trim_start);
    let tree = head.strip_prefix("use").unwrap_or(head).trim().trim_end_matches(';');
    let mut leaves = Vec::new();
    use_tree("", tree, &mut leaves);
    leaves
}

fn use_tree(prefix: &str, tree: &str, leaves: &mut Vec<(String, String)>) {
    let tree = tree.trim();
    let join = |path: &str| if prefix.is_empty() { path.to_owned() } else { format!("{prefix}::{path}") };
    if let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) {
        let path = join(tree[..open].trim().trim_end_matches("::"));
        let mut depth = 0;
        let mut start = open + 1;
        for (at, c) in tree[..close].char_indices().skip(open + 1) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_tree(&path, &tree[start..at], leaves);
                    start = at + 1;
                }
                _ => {}
            }
        }
        use_tree(&path, &tree[start..close], leaves);
    } else if tree == "self" {
        let name = prefix.rsplit("::").next().unwrap_or(prefix).to_owned();
        leaves.push((prefix.to_owned(), name));
    } else if !tree.is_empty() {
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path.trim(), Some(alias.trim())),
            None => (tree, None),
        };
        let full = join(path);
        let name = alias.unwrap_or_else(|| path.rsplit("::").next().unwrap_or(path)).to_owned();
        leaves.push((alias.map_or(full.clone(), |alias| format!("{full} as {alias}")), name));
    }
}

/// The import specs of a Go import declaration (`"fmt"`, `str "strings"`).
fn go_import_specs(text: &str) -> Vec<String> {
    let (_, head) = head(text, Syntax::Go);
    let body = head.trim_start_matches("import").trim();
    let body = body.strip_prefix('(').and_then(|body| body.strip_suffix(')')).unwrap_or(body);
    body.lines()
        .flat_map(|line| line.split(';'))
        .map(|spec| spec.split("//").next().unwrap_or_default().trim().to_owned())
        .filter(|spec| spec.contains('"'))
        .collect()
}

/// Whether a Go import spec's package is used in code that qualifies `used` names (Go
/// refuses an import that is not).
fn go_spec_used(spec: &str, used: &HashSet<String>) -> bool {
    let name = identifier(spec);
    if name == "_" || spec.starts_with('.') {
        return true;
    }
    let path = spec[spec.find('"').unwrap_or(0)..].trim_matches('"');
    let name = if name.is_empty() { path.rsplit('/').next().unwrap_or(path) } else { name };
    used.contains(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(code: &str, syntax: Syntax) -> Vec<Declares> {
        declarations(code, syntax).into_iter().map(|found| found.declares).collect()
    }

    fn function(name: &str) -> Declares {
        Declares::Function(name.to_owned())
    }

    #[test]
    fn what_each_languages_items_declare() {
        assert_eq!(
            kinds("#include <map>\nusing namespace std;\ntemplate <typename T>\nT twice(T x) {\n    return 2 * x;\n}\nstruct P {\n    int x;\n};\nconst int N = 3;\nint main() {\n    return 0;\n}\n", Syntax::Cpp),
            [Declares::Import, Declares::Other(None), function("twice"), Declares::Type("P".into()), Declares::Other(None), Declares::Main]
        );
        assert_eq!(
            kinds("package main\nimport \"fmt\"\ntype P struct{ x int }\nfunc (p P) X() int { return p.x }\nfunc F() int {\n\treturn 1\n}\nfunc main() {\n\tfmt.Println(F())\n}\n", Syntax::Go),
            [Declares::Package, Declares::Import, Declares::Type("P".into()), Declares::Other(None), function("F"), Declares::Main]
        );
        assert_eq!(
            kinds("use std::collections::HashMap;\n#[derive(Debug)]\npub struct P(i32);\nimpl P {}\npub fn f() -> i32 {\n    1\n}\nfn main() {}\n#[cfg(test)]\nmod tests {}\n", Syntax::Rust),
            [Declares::Import, Declares::Type("P".into()), Declares::Other(None), function("f"), Declares::Main, Declares::Statement]
        );
        assert_eq!(
            kinds("const assert = require('assert');\nconst f = (x) => {\n  return x;\n};\nexport function g(y: number): number {\n  return y;\n}\ninterface Q { a: number }\nconsole.log(f(1));\nmodule.exports = { f };\n", Syntax::JavaScript),
            [Declares::Other(Some("assert".into())), function("f"), function("g"), Declares::Type("Q".into()), Declares::Statement, Declares::Statement]
        );
        assert_eq!(
            kinds("#!/bin/bash\nf() {\n    echo 1\n}\nfunction g {\n    echo 2\n}\nLIMIT=3\nf \"$@\"\n", Syntax::Shell),
            [function("f"), function("g"), Declares::Other(None), Declares::Statement]
        );
    }

    #[test]
    fn the_answers_definitions_win_over_the_preambles_and_its_main_goes() {
        let preamble = "#include<vector>\nusing namespace std;\nbool helper(int x){\n    return x > 0;\n}\n";
        let answer = "#include <vector>\nusing namespace std;\nbool helper(int x) { return x >= 0; }\nint f(int x) {\n    return helper(x);\n}\nint main() {\n    return f(1);\n}\n";
        let code = program(answer, preamble, Syntax::Cpp);
        assert_eq!(code.matches("bool helper").count(), 1, "{code}");
        assert!(code.contains("x >= 0") && !code.contains("main"), "{code}");
        assert!(code.starts_with("#include<vector>"), "{code}");
    }

    #[test]
    fn go_imports_gather_before_the_code_and_unused_ones_go() {
        let preamble = "package f_test\n\nimport (\n    \"testing\"\n    \"fmt\"\n)\n\n";
        let answer = "package main\n\nimport (\n\t\"fmt\"\n\t\"sort\"\n\t\"os\"\n)\n\nfunc F(xs []int) []int {\n\tsort.Ints(xs)\n\treturn xs\n}\n\nfunc main() {\n\tfmt.Println(F(nil))\n\tos.Exit(0)\n}\n";
        let code = program(answer, preamble, Syntax::Go);
        assert!(code.starts_with("package f_test\n\nimport (\n    \"testing\""), "{code}");
        assert!(code.contains("import (\n\t\"sort\"\n)\n\nfunc F"), "{code}");
        assert!(!code.contains("package main") && !code.contains("\"os\"") && !code.contains("func main"), "{code}");
    }

    #[test]
    fn rusts_preamble_uses_give_way_to_the_answers_names() {
        let preamble = "use std::{cmp::{max, self}, collections::{HashSet, HashMap}};\nuse md5;\n";
        let answer = "#![allow(unused)]\nuse std::collections::HashMap;\nfn max(a: i32) -> i32 { a }\nfn f() -> i32 { max(1) }\nfn main() {}\n";
        let code = program(answer, preamble, Syntax::Rust);
        assert!(code.contains("use std::cmp;\nuse std::collections::HashSet;\nuse md5;"), "{code}");
        assert!(
            !code.contains("use std::cmp::max;") && !code.contains("std::collections::HashMap;\nuse md5"),
            "{code}"
        );
        assert!(!code.contains("#![allow") && !code.contains("fn main"), "{code}");
    }
}
