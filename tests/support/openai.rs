//! `tests/support/openai_server.py`, an OpenAI-compatible server that answers as real
//! ones do, on a port of its own, for the tests of `passk generate` and `passk run`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::{read_jsonl, repo_root, write_jsonl};

/// The test server, until dropped.
#[derive(Debug)]
pub struct OpenAiServer {
    child: Child,
    pub base: String,
    log: PathBuf,
}

impl OpenAiServer {
    /// A server of the bundled set's problems.
    pub fn start(dir: &Path, answers: &[Value], flags: &[&str]) -> OpenAiServer {
        OpenAiServer::start_for(dir, &repo_root().join("problems/basic.jsonl"), answers, flags)
    }

    /// A server of `problems`' problems, answering each from `answers` (`task_id` and
    /// `completion`) in turn.
    pub fn start_for(dir: &Path, problems: &Path, answers: &[Value], flags: &[&str]) -> OpenAiServer {
        let answers_path = dir.join("answers.jsonl");
        write_jsonl(&answers_path, answers);
        let log = dir.join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(repo_root().join("tests/support/openai_server.py"))
            .arg("--problems")
            .arg(problems)
            .arg("--answers")
            .arg(&answers_path)
            .arg("--log")
            .arg(&log)
            .args(flags)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the test server");
        let mut port = String::new();
        let stdout = child.stdout.take().expect("the server's standard output is piped");
        BufReader::new(stdout).read_line(&mut port).expect("the server says its port");
        let base = format!("http://127.0.0.1:{}/v1", port.trim());
        OpenAiServer { child, base, log }
    }

    /// Every request the server answered, in order.
    pub fn requests(&self) -> Vec<Value> {
        if self.log.exists() {
            read_jsonl(&self.log)
        } else {
            Vec::new()
        }
    }

    /// `passk generate` of the bundled set into `output`, without an API key.
    pub fn generate(&self, output: &Path, extra: &[&str]) -> Command {
        let mut command = crate::passk(["generate", "--endpoint", &self.base, "--problems", "basic", "--output"]);
        command.arg(output).args(extra).env_remove("OPENAI_API_KEY");
        command
    }
}

impl Drop for OpenAiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
