//! `--extract` in every language of function completions: chat answers (prose, a fence
//! tagged or not, the prompt repeated, helpers and a `main` of the answer's own) run as
//! programs that keep the answer's helpers and drop its main, on the released suites
//! (`../shared/benchmarks`). Right answers pass; a wrong one fails, even where its own
//! main exits 0 first.

use std::path::Path;

use passk_tests::{evaluate_set, shared_benchmark};
use serde_json::{json, Value};

/// The records of a gzipped JSON Lines file.
fn records(path: &Path) -> Vec<Value> {
    let mut text = String::new();
    let file = std::fs::File::open(path).unwrap();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text).unwrap();
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// A chat answer that holds `code` and a main of its own, in one of three shapes by
/// `shape`: a tagged fence between prose, an untagged fence after a heading, or the code
/// alone (which, holding the prompt, repeats it).
fn chat_answer(code: &str, tag: &str, shape: usize) -> String {
    match shape % 3 {
        0 => format!("Here is a solution to the problem.\n\n```{tag}\n{code}```\n\nIt runs in linear time."),
        1 => format!("**Solution**\n\n```\n{code}```\n"),
        _ => code.to_owned(),
    }
}

/// Each language's main that a chat answer adds to try its function.
fn own_main(language: &str) -> &'static str {
    match language {
        "cpp" => "\nint main() {\n    printf(\"done\\n\");\n    return 0;\n}\n",
        "java" => "\npublic class Main {\n    public static void main(String[] args) {\n        System.out.println(\"done\");\n    }\n}\n",
        "go" => "\nfunc main() {\n    fmt.Println(\"done\")\n}\n",
        "rust" => "\nfn main() {\n    println!(\"done\");\n}\n",
        _ => "\nconsole.log('done');\n",
    }
}

/// HumanEval-X's first `count` problems in `language`, each answered in chat style with
/// its canonical solution: the whole function (the prompt and the solution), its own
/// main after it, and for Go a package clause and import of its own.
fn humaneval_x_answers(records: &[Value], language: &str, count: usize) -> Vec<Value> {
    records
        .iter()
        .take(count)
        .enumerate()
        .map(|(at, record)| {
            let mut prompt = record["prompt"].as_str().unwrap().to_owned();
            if language == "rust" {
                prompt = format!("{}{prompt}", record["declaration"].as_str().unwrap());
            }
            let mut code = format!("{prompt}{}", record["canonical_solution"].as_str().unwrap());
            if language == "go" && at % 3 != 2 {
                code = format!("package main\n\nimport \"fmt\"\n\n{code}");
            }
            let code = format!("{}\n{}", code.trim_end(), own_main(language));
            json!({"task_id": record["task_id"], "completion": chat_answer(&code, language, at)})
        })
        .collect()
}

/// Answers to HumanEval-X's problem 0 that define the entry point wrongly, with a main
/// that ends the program at once with status 0.
fn wrong_answer(language: &str) -> String {
    let code = match language {
        "cpp" => "#include <cstdlib>\nbool has_close_elements(vector<float> numbers, float threshold){\n    return false;\n}\nint main() {\n    exit(0);\n}\n",
        "java" => "class Solution {\n    public boolean hasCloseElements(List<Double> numbers, double threshold) {\n        return false;\n    }\n}\n\npublic class Main {\n    public static void main(String[] args) {\n        System.exit(0);\n    }\n}\n",
        "go" => "package main\n\nimport \"os\"\n\nfunc HasCloseElements(numbers []float64, threshold float64) bool {\n    return false\n}\n\nfunc main() {\n    os.Exit(0)\n}\n",
        "rust" => "fn has_close_elements(numbers:Vec<f32>, threshold: f32) -> bool{\n    false\n}\n\nfn main() {\n    std::process::exit(0);\n}\n",
        _ => "const hasCloseElements = (numbers, threshold) => {\n  return false\n}\nprocess.exit(0)\n",
    };
    format!("Sure! Here it is:\n\n```{language}\n{code}```\n")
}

/// HumanEval-X, released: in C++, Java, Go, Rust and JavaScript, chat answers built from
/// the first 20 canonical solutions (tagged and untagged fences, the code alone, an own
/// main, Go's own package clause) pass with `--extract`, as the canonical solutions do
/// raw; a wrong answer whose own main exits 0 at once fails. (The code alone repeats the
/// prompt: it runs as the completion up to the function's end, the main left out.)
#[test]
fn humaneval_x_chat_answers_pass_in_every_language() {
    for (language, file) in [("cpp", "cpp"), ("java", "java"), ("go", "go"), ("rust", "rust"), ("javascript", "js")] {
        let Some(problems) = shared_benchmark(&format!("humaneval-x/humaneval_{file}.jsonl.gz")) else { return };
        let mut samples = humaneval_x_answers(&records(&problems), language, 20);
        let task = samples[0]["task_id"].clone();
        samples.push(json!({"task_id": task, "completion": wrong_answer(language), "wrong": true}));
        let dir = tempfile::tempdir().unwrap();
        let (_, results) =
            evaluate_set(dir.path(), &problems, &samples, &["--extract", "--no-dedup", "--timeout", "20"]);
        for result in &results {
            let wrong = result["wrong"] == true;
            assert_eq!(result["passed"] == true, !wrong, "{language}: {result}");
            assert!(!result["extracted"]["code"].as_str().unwrap().contains("done"), "{language}: the main is dropped");
        }
    }
}

/// MultiPL-E, released: answers written here for TypeScript and Bash (which have no
/// canonical solutions), and for C++, Java and Rust, whose tests close the function a
/// completion leaves open: a whole function, a method alone, helpers and types of the
/// answer's own, tests and prints around it. Each right one passes; a wrong one fails
/// though the answer exits 0 at its top level.
#[test]
fn multipl_e_chat_answers_pass_with_their_helpers() {
    let answers: [(&str, &str, &str, bool); 11] = [
        (
            "ts",
            "HumanEval_0_has_close_elements",
            "Here's a TypeScript version:\n\n```typescript\ninterface Pair { a: number; b: number }\n\nfunction pairs(xs: number[]): Pair[] {\n  const out: Pair[] = [];\n  for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) out.push({ a: xs[i], b: xs[j] });\n  return out;\n}\n\nexport function has_close_elements(numbers: number[], threshold: number): boolean {\n  return pairs(numbers).some((p) => Math.abs(p.a - p.b) < threshold);\n}\n\nconsole.log(has_close_elements([1, 2, 3], 0.5));\n```\n",
            true,
        ),
        (
            "ts",
            "HumanEval_12_longest",
            "```ts\nfunction longest(strings: string[]): string | undefined {\n  let best: string | undefined = undefined;\n  for (const s of strings) if (best === undefined || s.length > best.length) best = s;\n  return best;\n}\n```",
            true,
        ),
        ("ts", "HumanEval_23_strlen", "```ts\nfunction strlen(string: string): number {\n  return string.length + 1;\n}\nprocess.exit(0);\n```", false),
        (
            "sh",
            "HumanEval_0_has_close_elements",
            "You can use awk:\n\n```bash\n#!/bin/bash\nclose() {\n    awk -v a=\"$1\" -v b=\"$2\" -v t=\"$3\" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < t) }'\n}\n\nhas_close_elements() {\n    local xs=($1)\n    for ((i = 0; i < ${#xs[@]}; i++)); do\n        for ((j = i + 1; j < ${#xs[@]}; j++)); do\n            if close \"${xs[i]}\" \"${xs[j]}\" \"$2\"; then echo true; return; fi\n        done\n    done\n    echo false\n}\n\nhas_close_elements \"1.0 2.0 3.0\" 0.5\n```\n",
            true,
        ),
        ("sh", "HumanEval_23_strlen", "```sh\nstrlen() {\n    echo \"${#1}\"\n}\n```\nUsage: `strlen abc`.", true),
        ("sh", "HumanEval_2_truncate_number", "```bash\ntruncate_number() {\n    echo 0.5\n}\nexit 0\n```", false),
        (
            "cpp",
            "HumanEval_23_strlen",
            "```cpp\n#include <string>\nstruct Counter { long n = 0; };\nlong string_length(std::string string) {\n    Counter c;\n    for (char ch : string) { (void)ch; c.n++; }\n    return c.n;\n}\n\nint main() {\n    return string_length(\"abc\") == 3 ? 0 : 1;\n}\n```",
            true,
        ),
        (
            "java",
            "HumanEval_23_strlen",
            "Just the method:\n\n```java\npublic static long strlen(String string) {\n    return count(string);\n}\n\nprivate static long count(String s) {\n    return s.length();\n}\n```",
            true,
        ),
        (
            "java",
            "HumanEval_2_truncate_number",
            "```java\nimport java.util.*;\n\npublic class Problem {\n    public static float truncateNumber(float number) {\n        return number - (float) Math.floor(number);\n    }\n\n    public static void main(String[] args) {\n        System.out.println(truncateNumber(3.5f));\n    }\n}\n```",
            true,
        ),
        (
            "rs",
            "HumanEval_23_strlen",
            "```rust\nuse std::collections::HashMap;\n\nfn strlen(string: String) -> isize {\n    let mut seen: HashMap<usize, char> = HashMap::new();\n    for (at, c) in string.chars().enumerate() { seen.insert(at, c); }\n    seen.len() as isize\n}\n\nfn main() {\n    println!(\"{}\", strlen(String::from(\"abc\")));\n}\n```",
            true,
        ),
        (
            "rs",
            "HumanEval_2_truncate_number",
            "```rust\nfn truncate_number(number: f64) -> f64 {\n    number\n}\n\nfn main() {\n    std::process::exit(0);\n}\n```",
            false,
        ),
    ];
    for file in ["ts", "sh", "cpp", "java", "rs"] {
        let Some(problems) = shared_benchmark(&format!("multipl-e/humaneval-{file}.jsonl.gz")) else { return };
        let samples: Vec<Value> = answers
            .iter()
            .filter(|(language, ..)| *language == file)
            .map(|(_, task, answer, right)| json!({"task_id": task, "completion": answer, "right": right}))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let (_, results) =
            evaluate_set(dir.path(), &problems, &samples, &["--extract", "--no-dedup", "--timeout", "20"]);
        for result in &results {
            assert_eq!(result["passed"], result["right"], "{file}: {result}");
            assert_eq!(result["extracted"]["run_as"], "solution", "{file}: {}", result["extracted"]);
        }
    }
}
