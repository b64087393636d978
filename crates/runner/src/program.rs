/// What a sample offers to be tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// Text that continues the problem's prompt, as in HumanEval.
    Completion(String),
    /// A whole program that replaces the prompt, as in EvalPlus.
    Solution(String),
}

/// The program run for one sample: the candidate, then the problem's tests, then the
/// call that runs them, exactly as the reference harness assembles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program(String);

impl Program {
    pub fn new(prompt: &str, candidate: &Candidate, test: &str, entry_point: &str) -> Program {
        let mut text = match candidate {
            Candidate::Completion(completion) => format!("{prompt}{completion}"),
            Candidate::Solution(solution) => solution.clone(),
        };
        text.push('\n');
        text.push_str(test);
        text.push('\n');
        text.push_str(&format!("check({entry_point})"));
        Program(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_continues_the_prompt_like_the_reference() {
        let program = Program::new(
            "def f(x):\n",
            &Candidate::Completion("    return x\n".into()),
            "def check(c):\n    assert c(1) == 1",
            "f",
        );
        assert_eq!(program.as_str(), "def f(x):\n    return x\n\ndef check(c):\n    assert c(1) == 1\ncheck(f)");
    }

    #[test]
    fn a_solution_replaces_the_prompt() {
        let program = Program::new("PROMPT", &Candidate::Solution("def f(x): return x".into()), "T", "f");
        assert_eq!(program.as_str(), "def f(x): return x\nT\ncheck(f)");
    }
}
