//! Java's answers, whose functions live in classes. A prompt declares its entry point in
//! a class (`class Solution { public T name(...) {` in HumanEval-X, `class Problem {
//! public static T name(...) {` in MultiPL-E); an answer gives that class whole, or the
//! method alone, perhaps beside a `public class Main` of its own. The program is the
//! prompt's imports and the answer's, then the class that declares the entry point (the
//! answer's, given the prompt's helper methods it does not declare again; or the prompt's
//! class around the answer's methods), then the answer's other classes. `public` comes off
//! them (the serving program's `Main` is the file's public class), and so do the
//! answer's `main` methods and classes named `Main`.

use std::collections::HashSet;

use super::braces::{items, Syntax};
use super::program::{declarations, declares, identifier, java_unmodified, Declaration, Declares};

/// Whether `code` declares the method `entry`, in a class or standing alone.
pub fn defines(code: &str, entry: &str) -> bool {
    let entry = Declares::Function(entry.to_owned());
    declarations(code, Syntax::Java).iter().any(|found| {
        found.declares == entry
            || (matches!(found.declares, Declares::Type(_))
                && members(found.item.text).iter().any(|(kind, _)| *kind == entry))
    })
}

/// A class's header (up to its body's `{`) and its body, without its closing `}` where
/// it is `closed`.
fn split_class(text: &str, closed: bool) -> Option<(&str, &str)> {
    let open = text.find('{')?;
    let body = &text[open + 1..];
    let body = if closed { body.rfind('}').map_or(body, |close| &body[..close]) } else { body };
    Some((&text[..open], body))
}

/// The members of the class `text`, each with what it declares (a method is a
/// `Function`), prose and comments left out.
fn members(text: &str) -> Vec<(Declares, &str)> {
    let Some((_, body)) = split_class(text, true) else { return Vec::new() };
    items(body, Syntax::Java)
        .into_iter()
        .filter(|item| !item.prose)
        .map(|item| (declares(&item, Syntax::Java), item.text))
        .filter(|(kind, _)| *kind != Declares::Nothing)
        .collect()
}

/// The prompt's class: its header, its name, and the members it declares before the
/// entry point (helpers the answer may call without declaring them).
struct PromptClass<'a> {
    header: &'a str,
    name: &'a str,
    helpers: Vec<(Declares, &'a str)>,
}

fn prompt_class(prompt: &str) -> Option<PromptClass<'_>> {
    let last = declarations(prompt, Syntax::Java).into_iter().rev().find(|found| !found.item.prose)?;
    let Declares::Type(_) = last.declares else { return None };
    let (header, body) = split_class(last.item.text, false)?;
    let name = header_name(header);
    let helpers = items(body, Syntax::Java)
        .into_iter()
        .filter(|item| item.closed && !item.prose)
        .map(|item| (declares(&item, Syntax::Java), item.text))
        .collect();
    Some(PromptClass { header: header.trim(), name, helpers })
}

/// The name a type's header declares.
fn header_name(header: &str) -> &str {
    let rest = java_unmodified(header.trim_start());
    let rest = rest.split_once(char::is_whitespace).map_or("", |(_, rest)| rest.trim_start());
    identifier(rest)
}

/// A top-level type's text without `public` (and its leading comments).
fn unpublic(text: &str) -> String {
    let trimmed = text.trim_start();
    let mut at = text.len() - trimmed.len();
    // Past the comments before it.
    loop {
        let rest = &text[at..];
        if rest.starts_with("//") {
            at += rest.find('\n').map_or(rest.len(), |end| end + 1);
        } else if rest.starts_with("/*") {
            at += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else {
            break;
        }
        at += text[at..].len() - text[at..].trim_start().len();
    }
    match text[at..].strip_prefix("public").filter(|rest| rest.starts_with(char::is_whitespace)) {
        Some(rest) => format!("{}{}", &text[..at], rest.trim_start()),
        None => text.to_owned(),
    }
}

/// A class's members, each on its own lines, its first line indented as its others.
fn indented(members: &[String]) -> String {
    members.iter().map(|member| format!("    {member}")).collect::<Vec<_>>().join("\n\n")
}

/// `text` with every whole word `from` made `to`.
fn renamed(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
        let before = rest[..at].chars().next_back().is_some_and(word);
        let after = rest[at + from.len()..].chars().next().is_some_and(word);
        out.push_str(&rest[..at]);
        out.push_str(if before || after { from } else { to });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The program of `answer`, which declares the entry point, for a problem whose prompt
/// is `prompt`; without the prompt's imports and helpers for a `solution`.
pub fn program(answer: &str, prompt: &str, entry: &str, whole_program: bool) -> String {
    let class = prompt_class(prompt);
    let found: Vec<Declaration> =
        declarations(answer, Syntax::Java).into_iter().filter(|found| found.item.closed && !found.item.prose).collect();
    let mut parts: Vec<String> = Vec::new();
    let mut imports = HashSet::new();
    let prompt_imports = if whole_program { Vec::new() } else { declarations(prompt, Syntax::Java) };
    for import in prompt_imports.iter().chain(&found).filter(|found| found.declares == Declares::Import) {
        if imports.insert(import.item.text.trim()) {
            parts.push(import.item.text.trim().to_owned());
        }
    }
    let entry = Declares::Function(entry.to_owned());
    let types: Vec<&Declaration> = found.iter().filter(|found| matches!(found.declares, Declares::Type(_))).collect();
    let owner = types.iter().copied().find(|found| members(found.item.text).iter().any(|(kind, _)| *kind == entry));
    let helpers = |defined: &HashSet<String>| -> Vec<String> {
        let Some(class) = class.as_ref().filter(|_| !whole_program) else { return Vec::new() };
        class
            .helpers
            .iter()
            .filter(|(kind, _)| !kind.name().is_some_and(|name| defined.contains(name)))
            .map(|(_, text)| text.to_string())
            .collect()
    };
    let prompt_name = class.as_ref().map_or("Solution", |class| class.name);
    match owner {
        Some(owner) => {
            let kept: Vec<(Declares, &str)> =
                members(owner.item.text).into_iter().filter(|(kind, _)| *kind != Declares::Main).collect();
            let defined: HashSet<String> = kept.iter().filter_map(|(kind, _)| kind.name().map(str::to_owned)).collect();
            let text = unpublic(owner.item.text);
            let Some((header, _)) = split_class(&text, true) else { return answer.to_owned() };
            let mut body: Vec<String> = helpers(&defined);
            body.extend(kept.iter().map(|(_, text)| text.to_string()));
            let mut class = format!("{}{{\n{}\n}}", header, indented(&body));
            if header_name(header) == "Main" {
                class = renamed(&class, "Main", prompt_name);
            }
            parts.push(class);
        }
        None => {
            // The method alone, with other members perhaps: in the prompt's class.
            let kept: Vec<&Declaration> = found
                .iter()
                .filter(|found| matches!(found.declares, Declares::Function(_) | Declares::Other(_)))
                .collect();
            let defined: HashSet<String> =
                kept.iter().filter_map(|found| found.declares.name().map(str::to_owned)).collect();
            let header = class.as_ref().map_or("class Solution", |class| class.header.trim_end_matches('{').trim_end());
            let mut body = helpers(&defined);
            body.extend(kept.iter().map(|found| found.item.text.to_owned()));
            parts.push(format!("{} {{\n{}\n}}", header.trim(), indented(&body)));
        }
    }
    for other in types {
        let is_owner = owner.is_some_and(|owner| std::ptr::eq(owner, other));
        let only_main = members(other.item.text).iter().all(|(kind, _)| *kind == Declares::Main);
        if !is_owner && !only_main && other.declares != Declares::Type("Main".into()) {
            parts.push(unpublic(other.item.text));
        }
    }
    super::program::joined(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HUMANEVAL_X: &str = "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n    public boolean isEven(int x) {\n        return x % 2 == 0;\n    }\n    /**\n    Doc.\n     */\n    public int countEven(List<Integer> xs) {\n";

    #[test]
    fn a_whole_class_keeps_its_helpers_and_gets_the_prompts_and_loses_its_main() {
        let answer = "import java.util.*;\n\npublic class Solution {\n    private int twice(int x) { return 2 * x; }\n\n    public int countEven(List<Integer> xs) {\n        int n = 0;\n        for (int x : xs) if (isEven(x)) n++;\n        return twice(n) / 2;\n    }\n\n    public static void main(String[] args) {\n        System.exit(0);\n    }\n}\n\npublic class Main {\n    public static void main(String[] args) {\n        System.out.println(new Solution().countEven(List.of(1, 2)));\n    }\n}\n";
        let code = program(answer, HUMANEVAL_X, "countEven", false);
        assert!(code.starts_with("import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n"), "{code}");
        assert!(code.contains("public boolean isEven") && code.contains("private int twice"), "{code}");
        assert!(!code.contains("main") && !code.contains("public class"), "{code}");
        assert_eq!(code.matches("import java.util.*;").count(), 1, "{code}");
    }

    #[test]
    fn a_method_alone_goes_in_the_prompts_class() {
        let answer =
            "public int countEven(List<Integer> xs) {\n    return (int) xs.stream().filter(this::isEven).count();\n}\n";
        let code = program(answer, HUMANEVAL_X, "countEven", false);
        assert!(code.contains("class Solution {\n    public boolean isEven(int x) {"), "{code}");
        assert!(code.trim_end().ends_with("count();\n}\n}"), "{code}");
        assert!(defines(answer, "countEven") && !defines("int x = countEven(xs);", "countEven"));
    }

    #[test]
    fn the_entry_point_in_a_class_named_main_is_the_prompts() {
        let prompt = "import java.util.*;\nclass Problem {\n    public static long f(long x) {\n";
        let answer = "public class Main {\n    public static long f(long x) { return Main.g(x); }\n    static long g(long x) { return x; }\n    public static void main(String[] a) { f(1); }\n}\n";
        let code = program(answer, prompt, "f", false);
        assert!(code.contains("class Problem {") && code.contains("return Problem.g(x)"), "{code}");
        assert!(!code.contains("Main") && !code.contains("void main"), "{code}");
    }
}
