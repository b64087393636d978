use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::toolchain::Toolchain;

/// What a sample offers to be tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// Text that continues the problem's prompt, as in HumanEval.
    Completion(String),
    /// A whole program that replaces the prompt, as in EvalPlus.
    Solution(String),
}

/// A problem's own code: the prompt (its imports and helpers, which the tests may use),
/// the tests, and the name the tests check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProblemCode {
    pub prompt: String,
    pub tests: Tests,
    pub entry_point: String,
}

/// How a problem tests a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tests {
    /// Test code that defines `check(candidate)`, as in HumanEval (and MBPP's asserts,
    /// put in that form), with the prompt whose imports and helpers it may use: a suite
    /// whose data is that code (see `Tests::check`), so that in judge mode it too goes
    /// to the judge alone.
    Check(Arc<Suite>),
    /// Calls of the entry point with inputs, each answer compared with an expected
    /// output by the judge (EvalPlus, LeetCode-style problems).
    Calls(Arc<Suite>),
    /// Runs of the whole program on standard input, its output compared with the
    /// expected output (CodeContests, APPS, LiveCodeBench).
    Stdio(Arc<Suite>),
}

impl Tests {
    /// The id of the tests' suite: the problem's, as far as its tests go.
    pub fn suite_id(&self) -> &str {
        match self {
            Tests::Check(suite) | Tests::Calls(suite) | Tests::Stdio(suite) => &suite.id,
        }
    }

    /// See `Suite::expected_time`.
    pub fn expected_time(&self) -> Option<Duration> {
        match self {
            Tests::Check(suite) | Tests::Calls(suite) | Tests::Stdio(suite) => suite.expected_time,
        }
    }

    /// HumanEval-style tests: `test` defines `check(candidate)`, run with the prompt's
    /// code. The driver's part holds the entry point alone: a candidate forked from a
    /// driver that had held the tests could find them in its memory, run them against a
    /// recorder and answer every call from what it recorded. `solution`, the problem's
    /// own whole program if it has one, tells the judge what the names its imports bind
    /// stand for (it is parsed there, never run).
    pub fn check(prompt: &str, test: &str, entry_point: &str, solution: Option<&str>) -> Tests {
        Tests::check_calling(prompt, test, entry_point, "check", "", solution, &[])
    }

    /// As `check`, with the test code's function named `call` rather than `check` (for
    /// tests written here, whose entry point may itself be named `check`), and `setup`,
    /// code at the start of `test` that the candidate's own process also runs after the
    /// candidate in judge mode, as it would share the candidate's namespace in process
    /// (MBPP's setup code, whose imports a solution may use). `asserts`, where `test` was
    /// written here from a list of asserts, holds the line of `test` each begins on, so
    /// that a failure is named by its assert ("test 2 of 3") rather than by a line the
    /// user never saw.
    pub fn check_calling(
        prompt: &str,
        test: &str,
        entry_point: &str,
        call: &str,
        setup: &str,
        solution: Option<&str>,
        asserts: &[usize],
    ) -> Tests {
        let mut check = serde_json::json!({"prompt": prompt, "test": test});
        if !asserts.is_empty() {
            check["asserts"] = asserts.into();
        }
        if let Some(solution) = solution {
            check["solution"] = solution.into();
        }
        if call != "check" {
            check["call"] = call.into();
        }
        if !setup.is_empty() {
            check["setup"] = setup.into();
        }
        let data = serde_json::json!({"entry_point": entry_point, "check": check});
        Tests::Check(Arc::new(Suite::new(data, 1, None)))
    }
}

impl Tests {
    /// No tests: the program runs once, as it is, on `stdin`, and how it ended and what
    /// it printed are the result (in the verdict's `runs`), as a code-execution service
    /// answers. `files`, paths to contents in base64, are put in its working directory
    /// before it runs, and the files `fetch` names are read back from there after.
    pub fn plain(stdin: &str, files: &std::collections::BTreeMap<String, String>, fetch: &[String]) -> Tests {
        let data = serde_json::json!({
            "tests": [{"input": stdin, "output": ""}],
            "plain": true,
            "files": files,
            "fetch": fetch,
        });
        Tests::Stdio(Arc::new(Suite::new(data, 1, None)))
    }
}

/// Tests that travel as data: inputs, expected outputs, and how to compare them (read by
/// `sandbox/passk_driver/calls.py` and `stdio.py`). The judge gets the whole suite, the
/// driver only the part it needs to run the candidate (see `judge_link`). Each keeps the
/// suites it was sent, by id, so a suite crosses once, not once per sample.
#[derive(Debug, PartialEq, Eq)]
pub struct Suite {
    /// The SHA-256 of the data.
    pub id: String,
    pub data: serde_json::Value,
    /// What the driver gets: never an expected output, which a candidate forked from the
    /// driver could find in its memory.
    pub driver_part: serde_json::Value,
    /// Runs of a candidate it takes: phases of calls, or tests on standard input.
    pub runs: usize,
    /// For calls, the time all its phases may take together (each phase has its own
    /// limit, in the data); for standard input each run has the job's limit.
    pub budget: Option<Duration>,
    /// How long a right candidate may be expected to take, where the problem's canonical
    /// solution was timed on these tests: a run starts the longest first.
    pub expected_time: Option<Duration>,
}

/// What a driver keeps of a suite: how to call or run the candidate, and its limits.
const DRIVER_FIELDS: [&str; 10] = [
    "entry_point",
    "declaration",
    "prompt_helpers",
    "all",
    "record",
    "unjudgeable",
    "exit_compared",
    "plain",
    "files",
    "fetch",
];
const DRIVER_PHASE_FIELDS: [&str; 3] = ["name", "count", "timeout"];
/// Bytes of output a program may print beyond twice the longest expected output; past
/// that no answer can be right, and the rest is counted, not kept.
const OUTPUT_SLACK: usize = 1 << 20;

impl Suite {
    pub fn new(data: serde_json::Value, runs: usize, budget: Option<Duration>) -> Suite {
        use sha2::Digest;
        // Hashed as it is written: a suite may be tens of megabytes of JSON, which need
        // not be held to be hashed.
        let mut hasher = std::io::BufWriter::with_capacity(1 << 16, sha2::Sha256::new());
        serde_json::to_writer(&mut hasher, &data).expect("a JSON value always serializes");
        let hasher = hasher.into_inner().map_err(|_| ()).expect("hashing never fails");
        let id = format!("{:x}", hasher.finalize());
        let driver_part = driver_part(&data);
        Suite { id, data, driver_part, runs, budget, expected_time: None }
    }

    pub fn with_expected_time(self, expected_time: Duration) -> Suite {
        Suite { expected_time: Some(expected_time), ..self }
    }
}

impl Suite {
    /// The test code of HumanEval-style tests (`Tests::check`).
    pub fn check_code(&self) -> Option<&str> {
        self.data.get("check")?.get("test")?.as_str()
    }

    /// Code of HumanEval-style tests that the candidate's process runs after the candidate
    /// in judge mode (see `Tests::check_calling`).
    pub fn check_setup(&self) -> Option<&str> {
        self.data.get("check")?.get("setup")?.as_str()
    }

    /// For tests in another language that begin by closing the candidate's function
    /// (MultiPL-E's C++, Rust and Bash tests begin with `}`): what the candidate's
    /// process adds after the candidate, as the suite's harness has it.
    pub fn candidate_suffix(&self) -> Option<&str> {
        self.data.get("program")?.get("candidate_suffix")?.as_str()
    }

    /// For tests in another language whose harness puts code before every candidate
    /// (the includes CodeGeeX adds to HumanEval-X's C++): that code.
    pub fn candidate_prefix(&self) -> Option<&str> {
        self.data.get("program")?.get("candidate_prefix")?.as_str()
    }

    /// Code the suite's own harness puts before every program (LiveCodeBench's and
    /// APPS's imports), which the candidate's process runs first.
    pub fn preamble(&self) -> Option<&str> {
        self.data.get("preamble")?.as_str()
    }

    /// The function the test code of HumanEval-style tests defines and the harness calls
    /// with the candidate: `check`, unless named otherwise.
    pub fn check_call(&self) -> &str {
        self.data.get("check").and_then(|check| check.get("call")?.as_str()).unwrap_or("check")
    }
}

fn driver_part(data: &serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let only = |value: &Value, fields: &[&str]| -> Value {
        let kept = fields.iter().filter_map(|&field| Some((field.to_owned(), value.get(field)?.clone())));
        Value::Object(kept.collect::<Map<_, _>>())
    };
    let mut part = only(data, &DRIVER_FIELDS);
    if let Some(phases) = data.get("phases").and_then(Value::as_array) {
        part["phases"] = phases.iter().map(|phase| only(phase, &DRIVER_PHASE_FIELDS)).collect();
    }
    if let Some(tests) = data.get("tests").and_then(Value::as_array) {
        part["tests"] = tests.iter().map(|test| only(test, &["input"])).collect();
        // One cap for the whole suite, so that no test's cap tells its output's length.
        let longest = tests.iter().filter_map(|test| test.get("output")?.as_str().map(str::len)).max().unwrap_or(0);
        part["output_cap"] = json!((2 * longest + OUTPUT_SLACK).next_power_of_two());
    }
    part
}

/// Who decides a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictMode {
    /// A judge process runs the problem's code and tests, and reaches the candidate's
    /// process only through plain data: nothing the candidate does can touch the tests.
    Judge,
    /// Candidate and tests run as one program in one interpreter, exactly as the
    /// reference harness runs them.
    InProcess,
}

/// One sample's program: the candidate's code and its problem's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    problem: Arc<ProblemCode>,
    candidate: String,
    /// Whether the candidate is a whole program (a `Candidate::Solution`), which closes
    /// its function itself.
    solution: bool,
    /// The candidate followed by the setup code its process runs in judge mode, if any.
    judged: Option<String>,
    /// The toolchain that builds and runs it, where it is not in the host's language.
    toolchain: Option<Arc<Toolchain>>,
}

impl Program {
    pub fn new(problem: &Arc<ProblemCode>, candidate: &Candidate) -> Program {
        let (candidate, solution) = match candidate {
            Candidate::Completion(completion) => (format!("{}{completion}", problem.prompt), false),
            Candidate::Solution(solution) => (solution.clone(), true),
        };
        Program {
            problem: problem.clone(),
            judged: judged(problem, &candidate, solution, true),
            candidate,
            solution,
            toolchain: None,
        }
    }

    /// The same program in another language, which `toolchain` builds and runs.
    pub fn in_language(self, toolchain: Arc<Toolchain>) -> Program {
        let judged = judged(&self.problem, &self.candidate, self.solution, false);
        Program { toolchain: Some(toolchain), judged, ..self }
    }

    /// Who decides this program's verdict when `asked` is: a program in another language
    /// than the host's is always judged, as it has no in-process form.
    pub fn verdicts(&self, asked: VerdictMode) -> VerdictMode {
        if self.toolchain.is_some() {
            VerdictMode::Judge
        } else {
            asked
        }
    }

    /// The toolchain of a program not in the host's language.
    pub fn toolchain(&self) -> Option<&Toolchain> {
        self.toolchain.as_deref()
    }

    /// The same candidate against other tests of its problem: `problem` differs from
    /// the one this program was made for in its tests alone (EvalPlus's, whose expected
    /// outputs were computed while the problem's samples waited).
    pub fn retested(&self, problem: &Arc<ProblemCode>) -> Program {
        debug_assert_eq!((&problem.prompt, &problem.entry_point), (&self.problem.prompt, &self.problem.entry_point));
        Program {
            problem: problem.clone(),
            judged: judged(problem, &self.candidate, self.solution, self.toolchain.is_none()),
            candidate: self.candidate.clone(),
            solution: self.solution,
            toolchain: self.toolchain.clone(),
        }
    }

    /// What the candidate's process runs: the prompt and completion, or the solution;
    /// after it the problem's setup code where it has some for the candidate (in judge
    /// mode), or before it the suite's preamble where it has one.
    pub fn candidate_code(&self) -> &str {
        self.judged.as_deref().unwrap_or(&self.candidate)
    }

    pub fn problem(&self) -> &ProblemCode {
        &self.problem
    }

    /// The candidate, then the problem's tests, then the call that runs them, exactly as
    /// the reference harness assembles them (in-process mode); None for tests that are
    /// not code.
    pub fn in_process_text(&self) -> Option<String> {
        match &self.problem.tests {
            Tests::Check(suite) => {
                let test = suite.check_code()?;
                Some(format!("{}\n{}\n{}({})", self.candidate, test, suite.check_call(), self.problem.entry_point))
            }
            Tests::Calls(_) | Tests::Stdio(_) => None,
        }
    }
}

/// The candidate with the setup code or preamble its process runs in judge mode, where
/// the tests have some. The suffix that closes a completion's function (MultiPL-E's `}`)
/// follows a completion only: a `solution` is a whole program, its function closed. A
/// suite's preamble is what its harness puts before a Python program (APPS's and
/// LiveCodeBench's imports): a program in another language (`host` false) runs as it is.
fn judged(problem: &ProblemCode, candidate: &str, solution: bool, host: bool) -> Option<String> {
    match &problem.tests {
        Tests::Check(suite) => {
            let suffix = suite.candidate_suffix().filter(|_| !solution);
            match (suite.check_setup().or(suffix), suite.candidate_prefix()) {
                (None, None) => None,
                (setup, prefix) => Some(format!(
                    "{}{candidate}{}",
                    prefix.unwrap_or_default(),
                    setup.map(|setup| format!("\n{setup}")).unwrap_or_default()
                )),
            }
        }
        Tests::Calls(suite) | Tests::Stdio(suite) => {
            suite.preamble().filter(|_| host).map(|preamble| format!("{preamble}{candidate}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(prompt: &str, test: &str, entry_point: &str) -> Arc<ProblemCode> {
        Arc::new(ProblemCode {
            prompt: prompt.into(),
            tests: Tests::check(prompt, test, entry_point, None),
            entry_point: entry_point.into(),
        })
    }

    #[test]
    fn a_completion_continues_the_prompt_like_the_reference() {
        let program = Program::new(
            &problem("def f(x):\n", "def check(c):\n    assert c(1) == 1", "f"),
            &Candidate::Completion("    return x\n".into()),
        );
        assert_eq!(program.candidate_code(), "def f(x):\n    return x\n");
        assert_eq!(
            program.in_process_text().unwrap(),
            "def f(x):\n    return x\n\ndef check(c):\n    assert c(1) == 1\ncheck(f)"
        );
    }

    #[test]
    fn a_solution_replaces_the_prompt() {
        let program = Program::new(&problem("PROMPT", "T", "f"), &Candidate::Solution("def f(x): return x".into()));
        assert_eq!(program.candidate_code(), "def f(x): return x");
        assert_eq!(program.in_process_text().unwrap(), "def f(x): return x\nT\ncheck(f)");
    }

    /// Guards against expected outputs sent to the driver, from whose memory candidates
    /// are forked.
    #[test]
    fn the_drivers_part_of_a_suite_holds_no_expected_output() {
        let calls = Suite::new(
            serde_json::json!({"entry_point": "f", "all": false, "atol": 0,
                "phases": [{"name": "base", "inputs": "[[1]]", "count": 1, "expected": "SECRET", "timeout": 2.0}]}),
            1,
            None,
        );
        assert_eq!(
            calls.driver_part,
            serde_json::json!({"entry_point": "f", "all": false, "phases": [{"name": "base", "count": 1, "timeout": 2.0}]})
        );
        let Tests::Check(check) = Tests::check(
            "import math\n",
            "def check(c): assert c(1) == 2",
            "f",
            Some("import math\nimport numpy as np\n"),
        ) else {
            unreachable!("Tests::check makes a check suite")
        };
        assert_eq!(check.driver_part, serde_json::json!({"entry_point": "f"}));
        let stdio = Suite::new(
            serde_json::json!({"tests": [{"input": "1\n", "output": "SECRET"}], "all": true, "checker": "SECRET"}),
            1,
            None,
        );
        assert_eq!(
            stdio.driver_part,
            serde_json::json!({"tests": [{"input": "1\n"}], "all": true, "output_cap": 2 << 20})
        );
    }
}
