//! The formats passk reads, as data: each format's name, how a record shows it, how its
//! file is read, and what its task ids are. A new format is a variant of [`Format`], a
//! row of [`REGISTRY`] and the module that turns its records into problems.

use passk_runner::Language;

use super::{contests, each_line, evalplus, humaneval, mbpp, multilingual, Problem, SetOptions};
use crate::error::InputError;
use crate::jsonl::JsonlReader;

/// The formats passk reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    // JSON Lines of `task_id, prompt, entry_point, test` (and `canonical_solution`); also
    // HumanEval-X's Python file, whose test ends in `check(<entry point>)`.
    Humaneval,
    // JSON Lines of `task_id, text, code, test_setup_code, test_list, challenge_test_list`.
    Mbpp,
    // A JSON array of `source_file, task_id, prompt, code, test_imports, test_list`.
    MbppSanitized,
    // EvalPlus's HumanEval+ and MBPP+: `base_input`, `plus_input`, `atol`, ...
    Evalplus,
    // APPS: `problem_id`, `input_output` (standard input, or calls with `fn_name`).
    Apps,
    // CodeContests: `name`, `public_tests`, `private_tests`, `generated_tests`.
    CodeContests,
    // LiveCodeBench: `question_id`, `public_test_cases`, `private_test_cases`.
    Livecodebench,
    // SandboxFusion's files of CodeContests and LiveCodeBench: `id`, `content`, `labels`, `test`.
    Sandboxfusion,
    // HumanEval-X: `task_id` (`CPP/0`, `Java/0`, `JavaScript/0`, ...), `prompt`,
    // `declaration`, `canonical_solution`, `test`, `example_test`.
    #[serde(rename = "humaneval-x")]
    HumanevalX,
    // MultiPL-E: `name, language, prompt, tests, stop_tokens`.
    #[serde(rename = "multipl-e")]
    MultiplE,
}

type Read = fn(JsonlReader, &SetOptions) -> Result<Vec<(usize, Problem)>, InputError>;

/// Whether a record has a field.
type Has<'a> = dyn Fn(&str) -> bool + 'a;

/// What passk knows of one format.
struct Registered {
    format: Format,
    /// As `--format` and the results name it.
    name: &'static str,
    /// Whether a record with the fields `has` says it has is of this format. Formats are
    /// tried in [`DETECTION`]'s order.
    detect: fn(&Has) -> bool,
    read: Read,
    /// Whether its own task ids are numbers, so that samples may give them as JSON numbers.
    numeric_ids: bool,
    /// The language its programs are written in.
    language: fn() -> &'static Language,
}

/// Every format, in the order a listing of them shows.
const REGISTRY: [Registered; 10] = [
    Registered {
        format: Format::Humaneval,
        name: "humaneval",
        detect: |has| has("prompt") && has("test") && (has("entry_point") || has("declaration")),
        read: |reader, _| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| humaneval::problem(&source, line, object))
        },
        numeric_ids: false,
        language: Language::python,
    },
    Registered {
        format: Format::Mbpp,
        name: "mbpp",
        detect: |has| has("test_list") && has("text"),
        read: |reader, options| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| mbpp::original(&source, line, object, options))
        },
        numeric_ids: true,
        language: Language::python,
    },
    Registered {
        format: Format::MbppSanitized,
        name: "mbpp-sanitized",
        detect: |has| has("test_list") && has("prompt"),
        read: |reader, _| mbpp::sanitized(reader),
        numeric_ids: true,
        language: Language::python,
    },
    Registered {
        format: Format::Evalplus,
        name: "evalplus",
        detect: |has| has("base_input") && has("plus_input"),
        read: |reader, _| evalplus::read(reader),
        numeric_ids: false,
        language: Language::python,
    },
    Registered {
        format: Format::Apps,
        name: "apps",
        detect: |has| has("input_output"),
        read: |reader, options| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| contests::apps(&source, line, object, options))
        },
        numeric_ids: true,
        language: Language::python,
    },
    Registered {
        format: Format::CodeContests,
        name: "code-contests",
        detect: |has| has("public_tests") || has("private_tests") || has("generated_tests"),
        read: |reader, options| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| contests::code_contests(&source, line, object, options))
        },
        numeric_ids: false,
        language: Language::python,
    },
    Registered {
        format: Format::Livecodebench,
        name: "livecodebench",
        detect: |has| has("public_test_cases") || has("question_id"),
        read: |reader, options| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| contests::livecodebench(&source, line, object, options))
        },
        numeric_ids: false,
        language: Language::python,
    },
    Registered {
        format: Format::Sandboxfusion,
        name: "sandboxfusion",
        detect: |has| has("content") && has("test") && has("labels"),
        read: |reader, options| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| contests::sandboxfusion(&source, line, object, options))
        },
        numeric_ids: true,
        language: Language::python,
    },
    Registered {
        format: Format::HumanevalX,
        name: "humaneval-x",
        // HumanEval's fields less `entry_point`, with CodeGeeX's own.
        detect: |has| has("declaration") && has("example_test") && has("test") && !has("entry_point"),
        read: |reader, _| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| multilingual::humaneval_x(&source, line, object))
        },
        numeric_ids: false,
        // Each file is one language, which its task ids name.
        language: Language::python,
    },
    Registered {
        format: Format::MultiplE,
        name: "multipl-e",
        detect: |has| has("stop_tokens") && has("tests") && has("prompt"),
        read: |reader, _| {
            let source = reader.source().to_owned();
            each_line(reader, |line, object| multilingual::multipl_e(&source, line, object))
        },
        numeric_ids: false,
        // Each record names its language.
        language: Language::python,
    },
];

/// The order formats are tried in when told from a record's fields, most specific
/// first: EvalPlus's records have HumanEval's fields too, and MBPP's original has
/// sanitized MBPP's `test_list`.
const DETECTION: [Format; 10] = [
    Format::Evalplus,
    Format::MultiplE,
    Format::HumanevalX,
    Format::Mbpp,
    Format::MbppSanitized,
    Format::Apps,
    Format::CodeContests,
    Format::Livecodebench,
    Format::Sandboxfusion,
    Format::Humaneval,
];

impl Format {
    fn registered(self) -> &'static Registered {
        REGISTRY.iter().find(|registered| registered.format == self).expect("every format is registered")
    }

    /// Every format, in the order a listing of them shows.
    pub fn all() -> impl Iterator<Item = Format> {
        REGISTRY.iter().map(|registered| registered.format)
    }

    /// The format named `name`, as [`Format::name`] spells it.
    pub fn named(name: &str) -> Option<Format> {
        REGISTRY.iter().find(|registered| registered.name == name).map(|registered| registered.format)
    }

    pub fn name(self) -> &'static str {
        self.registered().name
    }

    /// Whether the format's own task ids are numbers (MBPP's, APPS's).
    pub fn numeric_ids(self) -> bool {
        self.registered().numeric_ids
    }

    /// The language the format's programs are written in.
    pub fn language(self) -> &'static Language {
        (self.registered().language)()
    }

    /// Reads a whole file of this format.
    pub(super) fn read(self, reader: JsonlReader, options: &SetOptions) -> Result<Vec<(usize, Problem)>, InputError> {
        (self.registered().read)(reader, options)
    }

    /// The format whose fields a record has.
    pub(super) fn of_fields(names: &[&str]) -> Option<Format> {
        let has = |field: &str| names.contains(&field);
        DETECTION.into_iter().find(|format| (format.registered().detect)(&has))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_registered_once_and_tried_once() {
        for format in DETECTION {
            assert_eq!(REGISTRY.iter().filter(|registered| registered.format == format).count(), 1, "{format:?}");
        }
        let mut names: Vec<&str> = REGISTRY.iter().map(|registered| registered.name).collect();
        names.dedup();
        assert_eq!(names.len(), DETECTION.len());
        assert!(Format::all().all(|format| Format::named(format.name()) == Some(format)));
    }

    /// Each released schema's first record is told as its own format, not as one whose
    /// fields it also has.
    #[test]
    fn records_are_told_by_their_most_specific_fields() {
        let told = |fields: &[&str]| Format::of_fields(fields);
        let humaneval_plus =
            ["task_id", "prompt", "entry_point", "canonical_solution", "test", "base_input", "plus_input"];
        assert_eq!(told(&humaneval_plus), Some(Format::Evalplus));
        assert_eq!(told(&["task_id", "prompt", "entry_point", "canonical_solution", "test"]), Some(Format::Humaneval));
        assert_eq!(told(&["task_id", "prompt", "declaration", "test"]), Some(Format::Humaneval));
        assert_eq!(told(&["task_id", "text", "code", "test_setup_code", "test_list"]), Some(Format::Mbpp));
        assert_eq!(
            told(&["source_file", "task_id", "prompt", "code", "test_imports", "test_list"]),
            Some(Format::MbppSanitized)
        );
        assert_eq!(told(&["problem_id", "question", "solutions", "input_output"]), Some(Format::Apps));
        assert_eq!(told(&["name", "description", "public_tests", "private_tests"]), Some(Format::CodeContests));
        assert_eq!(told(&["question_id", "public_test_cases", "private_test_cases"]), Some(Format::Livecodebench));
        assert_eq!(told(&["id", "content", "labels", "test"]), Some(Format::Sandboxfusion));
        assert_eq!(told(&["task_id", "completion"]), None);
    }
}
