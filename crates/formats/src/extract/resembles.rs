//! Which language a program that runs as Python looks written in: a standard-input
//! solution in C++ or Java that names no language runs as Python, and every sample then
//! fails as a syntax error, a verdict that says nothing of the code. Only marks no Python
//! program has at the start of a line count, so that a Python sample is never taken for
//! another language's.

/// The marks, each at the start of a (trimmed) line, and the language they say.
const MARKS: &[(&str, &str)] = &[
    ("#include", "cpp"),
    ("using namespace std", "cpp"),
    ("public static void main(", "java"),
    ("import java.", "java"),
    ("package main", "go"),
    ("func main()", "go"),
    ("fn main()", "rust"),
    ("use std::", "rust"),
    ("#!/bin/bash", "bash"),
    ("#!/usr/bin/env bash", "bash"),
    ("const readline = require(", "javascript"),
    ("process.stdin.", "javascript"),
    ("console.log(", "javascript"),
];

/// The language `program`'s lines say it is written in, and the mark that says so, if
/// one of them does.
pub fn resembles(program: &str) -> Option<(&'static str, &'static str)> {
    program.lines().map(str::trim_start).find_map(|line| {
        MARKS.iter().find(|(mark, _)| line.starts_with(mark)).map(|&(mark, language)| (language, mark))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_of_other_languages_are_told_and_python_is_not() {
        let cpp = "#include <bits/stdc++.h>\nint main() { return 0; }\n";
        assert_eq!(resembles(cpp), Some(("cpp", "#include")));
        let java = "import java.util.*;\npublic class Main {\n    public static void main(String[] a) {}\n}\n";
        assert_eq!(resembles(java), Some(("java", "import java.")));
        assert_eq!(resembles("package main\nimport \"fmt\"\n"), Some(("go", "package main")));
        assert_eq!(resembles("use std::io;\nfn main() {}\n"), Some(("rust", "use std::")));
        let python = "import sys\n# #include is C's\nprint('fn main()')\nfor line in sys.stdin:\n    print(line)\n";
        assert_eq!(resembles(python), None);
    }
}
