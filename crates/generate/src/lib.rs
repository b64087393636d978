//! Samples from a model behind an OpenAI-compatible endpoint (vLLM, llama.cpp's server,
//! SGLang, TGI, OpenAI), written as a samples file that `passk evaluate` reads as it is.
//!
//! Real servers differ in what they take, and a client that trips on them turns into a
//! score of zero or a run that never ends. So the request adapts once to what the server
//! says it refuses (`max_tokens` against `max_completion_tokens`, `n > 1`), retries what
//! is worth retrying (429 and 5xx and dropped connections, after the server's
//! `Retry-After` where it gives one), and stops at the first answer that would be the
//! same however often it was asked (a wrong model name, a bad parameter), saying why.
//!
//! Nothing asked is lost: every sample is appended to the file the moment it arrives,
//! keyed by task and index, and a run of the same command asks only for what is missing.
//! The request's settings are recorded beside the samples (`<samples>.request.json`),
//! so the file says where it came from, and a run with other settings is refused rather
//! than mixing two models' samples in one file.
//!
//! `ask` builds each problem's request (the prompt and the suite's stop sequences for a
//! base model, an instruction from a template for a chat model); `endpoint` sends it and
//! decides what an answer means; `store` is the samples file and its record; `run` drives
//! them with bounded concurrency and an optional pace.

mod ask;
mod endpoint;
mod error;
mod pace;
mod run;
mod store;
mod watch;

pub use ask::{Mode, Template, DEFAULT_CHAT_TEMPLATE};
pub use error::GenerateError;
pub use run::{generate, GenerateOptions, Generated};
pub use store::request_record_path;
pub use watch::{Event, Sampling, Watch};
