//! A real `passk serve` for the tests, and real clients for it: curl, and Python with
//! SandboxFusion's client from PyPI.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::{passk, repo_root};

/// How long a server may take to come up: its first start builds what the compiled
/// languages' programs use (once, into the cache).
const START_LIMIT: Duration = Duration::from_secs(600);

/// `passk serve` on a port of its own, ready, until dropped (killed) or terminated.
#[derive(Debug)]
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `passk serve` with `args` on a free loopback port and waits until it says it
    /// is ready; panics with what it said if it ends first.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with(args, &[])
    }

    /// As `start`, with `env` set for the server.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = passk(["serve", "--listen", "127.0.0.1:0"]);
        command.args(args).envs(env.iter().copied()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("passk serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (address, ready) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("listening on ") {
                    let base = rest.split(';').next().unwrap_or_default().to_owned();
                    let _ = address.send(Some(base));
                } else if line.starts_with("ready: ") {
                    let _ = address.send(None);
                }
                let mut kept = kept.lock().expect("the stderr buffer");
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        let deadline = Instant::now() + START_LIMIT;
        let mut base = None;
        loop {
            match ready.recv_timeout(Duration::from_millis(200)) {
                Ok(Some(listening)) => base = Some(listening),
                Ok(None) => break,
                Err(_) => {
                    if let Some(ended) = child.try_wait().expect("the server can be waited for") {
                        panic!(
                            "passk serve ended ({ended}) before it was ready: {}",
                            stderr.lock().expect("the stderr buffer")
                        );
                    }
                    assert!(
                        Instant::now() < deadline,
                        "passk serve was not ready: {}",
                        stderr.lock().expect("the stderr buffer")
                    );
                }
            }
        }
        let base = base.expect("the server says where it listens before it is ready");
        Server { child, base, stderr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server has written to standard error so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("the stderr buffer").clone()
    }

    /// Sends SIGTERM and waits for the server to end: its exit code and what it said.
    pub fn terminate(mut self) -> (Option<i32>, String) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().expect("the server can be waited for");
        // The reader thread reads to the end of the pipe, which the exit closed.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&self.stderr) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        (status.code(), self.stderr())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer, as curl got it.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// `curl` of `url` with `method`, `body` (if any, sent as JSON) and extra `headers`.
pub fn curl(method: &str, url: &str, body: Option<&[u8]>, headers: &[&str]) -> Answer {
    let mut command = Command::new("curl");
    command.args(["-s", "-S", "-i", "-X", method, "--max-time", "120"]);
    for header in headers {
        command.args(["-H", header]);
    }
    if body.is_some() {
        command.args(["-H", "Content-Type: application/json", "--data-binary", "@-"]);
    }
    command.arg(url).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("curl runs (apt-get install curl)");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    if let Some(body) = body {
        stdin.write_all(body).expect("curl takes the body");
    }
    drop(stdin);
    let output = child.wait_with_output().expect("curl ends");
    assert!(output.status.success(), "curl {url}: {}", String::from_utf8_lossy(&output.stderr));
    parse_answer(&String::from_utf8_lossy(&output.stdout))
}

fn parse_answer(text: &str) -> Answer {
    let (mut head, mut body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    // An interim answer (`100 Continue` to a large body) comes first, head alone.
    while head.starts_with("HTTP/1.1 1") {
        (head, body) = body.split_once("\r\n\r\n").unwrap_or((body, ""));
    }
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}

/// `POST` of a JSON value.
pub fn post_json(url: &str, value: &serde_json::Value) -> Answer {
    curl("POST", url, Some(value.to_string().as_bytes()), &[])
}

/// A Python with SandboxFusion's client from PyPI (and `requests`, which verl's client
/// uses), in a virtual environment made once below `target/`.
pub fn client_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = repo_root().join("target/sandbox-fusion-client");
        let python = venv.join("bin/python3");
        let ready = venv.join("installed");
        if !ready.exists() {
            let made = Command::new("python3").args(["-m", "venv"]).arg(&venv).output().expect("python3 runs");
            assert!(made.status.success(), "python3 -m venv: {}", String::from_utf8_lossy(&made.stderr));
            let installed = Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "sandbox-fusion==0.3.7"])
                .output()
                .expect("pip runs");
            assert!(
                installed.status.success(),
                "pip install sandbox-fusion: {}",
                String::from_utf8_lossy(&installed.stderr)
            );
            std::fs::write(&ready, "").expect("the venv is writable");
        }
        python
    })
}

/// Runs one of the clients in `tests/serve` with `client_python`: `script ARGS...`.
pub fn run_client(script: &str, args: &[&std::ffi::OsStr]) -> String {
    let output = Command::new(client_python())
        .arg(repo_root().join("tests/serve").join(script))
        .args(args)
        .output()
        .expect("the client's python runs");
    assert!(
        output.status.success(),
        "{script}: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
