//! A generation: every missing sample asked for, with bounded concurrency and an
//! optional pace, each written as it arrives.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use passk_formats::problems::ProblemSet;
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::ask::{asks, cut, Ask, Mode, Template};
use crate::endpoint::{Connection, Endpoint, Learned};
use crate::error::GenerateError;
use crate::pace::Pace;
use crate::store::Store;
pub use crate::watch::{Event, Sampling, Watch};
use passk_runner::Language;

#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// The API's base, such as `http://localhost:8000/v1`.
    pub endpoint: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The environment variable the key is read from, named when a key is refused.
    pub api_key_env: String,
    pub problems: Arc<ProblemSet>,
    pub mode: Mode,
    /// The chat instruction's template.
    pub template: Template,
    /// The language of problems whose set names none (the contest sets').
    pub language: Option<&'static Language>,
    pub sampling: Sampling,
    /// Requests in flight at once.
    pub concurrency: usize,
    pub requests_per_second: Option<f64>,
    /// Attempts of one request before the run gives up on the endpoint.
    pub max_attempts: u32,
    pub request_timeout: Duration,
    pub output: PathBuf,
    /// Ask for every sample again, whatever the file holds.
    pub restart: bool,
    /// The settings left to their defaults, with the options that set them: a file asked
    /// with another default (a temperature chosen by n) is refused with the option to give.
    pub defaulted: Vec<(&'static str, &'static str)>,
}

/// What a complete generation did.
#[derive(Debug, Clone)]
pub struct Generated {
    pub total: usize,
    pub already: usize,
    pub written: usize,
    pub tokens: u64,
    pub learned: Learned,
}

/// Asks the endpoint for every sample `options.output` does not hold yet.
pub async fn generate(
    options: GenerateOptions,
    watch: Watch,
    cancel: CancellationToken,
) -> Result<Generated, GenerateError> {
    let asks = asks(&options.problems, options.mode, &options.template, options.language)?;
    let endpoint = Endpoint::new(Connection {
        base: options.endpoint.clone(),
        model: options.model.clone(),
        api_key: options.api_key.clone(),
        api_key_env: options.api_key_env.clone(),
        mode: options.mode,
        max_attempts: options.max_attempts,
        request_timeout: options.request_timeout,
    })?;
    let mut request = request_record(&options);
    request.insert("learned".into(), json!(endpoint.learned()));
    let store = Store::open(&options.output, &request, options.restart, &options.defaulted)?;
    let n = options.sampling.n;
    let total = asks.len() * n as usize;
    let jobs: Vec<(Ask, Vec<u32>)> = asks
        .into_iter()
        .map(|ask| {
            let have = store.have.get(&ask.task_id);
            let missing: Vec<u32> = (0..n).filter(|index| have.map_or(true, |have| !have.contains(index))).collect();
            (ask, missing)
        })
        .filter(|(_, missing)| !missing.is_empty())
        .collect();
    let to_ask: usize = jobs.iter().map(|(_, missing)| missing.len()).sum();
    let already = total - to_ask;
    watch(Event::Started { total, already, dropped_torn_line: store.dropped_torn_line });

    let shared = Arc::new(Shared {
        endpoint,
        store,
        pace: Pace::new(options.requests_per_second),
        sampling: options.sampling.clone(),
        mode: options.mode,
        watch,
        cancel,
        stopping: std::sync::atomic::AtomicBool::new(false),
    });
    let permits = Arc::new(Semaphore::new(options.concurrency.max(1)));
    let mut running = JoinSet::new();
    for (ask, missing) in jobs {
        let shared = shared.clone();
        let permits = permits.clone();
        running.spawn(async move {
            let _permit = permits.acquire_owned().await.map_err(|_| GenerateError::Interrupted)?;
            let filled = shared.fill(&ask, missing).await;
            // Stopped before the permit goes to another problem's request; requests in
            // flight are answered and written, as their tokens are spent.
            if filled.is_err() {
                shared.stopping.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            filled
        });
    }
    let mut first_error = None;
    let (mut written, mut tokens) = (0, 0);
    while let Some(joined) = running.join_next().await {
        match joined {
            Ok(Ok((samples, used))) => {
                written += samples;
                tokens += used;
            }
            // The first error stops the rest, which end `Interrupted`: it is the run's.
            Ok(Err(error)) => match (&first_error, &error) {
                (None, _) | (Some(GenerateError::Interrupted), _) => first_error = Some(error),
                _ => {}
            },
            Err(panic) => std::panic::resume_unwind(panic.into_panic()),
        }
    }
    let complete = first_error.is_none() && !shared.cancel.is_cancelled();
    let restored = shared.store.end_restart(complete, written)?;
    if shared.cancel.is_cancelled() {
        return Err(GenerateError::Interrupted);
    }
    if !restored {
        request.insert("learned".into(), json!(shared.endpoint.learned()));
        shared.store.record(&request)?;
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(Generated { total, already, written, tokens, learned: shared.endpoint.learned() }),
    }
}

/// The request's settings, recorded beside the samples.
fn request_record(options: &GenerateOptions) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("passk_version".into(), json!(env!("CARGO_PKG_VERSION")));
    record.insert("endpoint".into(), json!(options.endpoint));
    record.insert("model".into(), json!(options.model));
    record.insert("mode".into(), json!(options.mode));
    record.insert("problems".into(), json!(options.problems.name));
    record.insert("problems_sha256".into(), json!(options.problems.sha256));
    if let Value::Object(sampling) = json!(options.sampling) {
        record.extend(sampling);
    }
    if let Some(language) = options.language {
        record.insert("language".into(), json!(language.name));
    }
    if options.mode == Mode::Chat {
        record.insert("template".into(), json!(options.template.text));
    }
    record
}

/// What every request of a run shares.
struct Shared {
    endpoint: Endpoint,
    store: Store,
    pace: Pace,
    sampling: Sampling,
    mode: Mode,
    watch: Watch,
    /// The user's interrupt: requests in flight are dropped.
    cancel: CancellationToken,
    /// Set by a request's error: no new request starts.
    stopping: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// Asks for `missing` samples of `ask` until each is written: all in one request
    /// where the server takes `n`, and again for any it left out.
    async fn fill(&self, ask: &Ask, mut missing: Vec<u32>) -> Result<(usize, u64), GenerateError> {
        let (mut written, mut tokens) = (0, 0);
        while !missing.is_empty() {
            if self.cancel.is_cancelled() || self.stopping.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(GenerateError::Interrupted);
            }
            let n = if self.endpoint.takes_n() { missing.len() as u32 } else { 1 };
            tokio::select! {
                () = self.cancel.cancelled() => return Err(GenerateError::Interrupted),
                () = self.pace.wait() => {}
            }
            let answer = self.endpoint.ask(ask, n, missing[0], &self.sampling, &self.watch, &self.cancel).await?;
            if n > 1 && answer.choices.len() == 1 {
                self.endpoint.ignores_n(&self.watch);
            }
            if answer.textless > 0 {
                self.endpoint.textless(&self.watch);
            }
            let mut used = answer.completion_tokens;
            tokens += used;
            for choice in answer.choices.into_iter().take(missing.len()) {
                let index = missing.remove(0);
                let text = match self.mode {
                    Mode::Completion => {
                        let text = cut(&choice.text, &ask.stop);
                        let closing = ask
                            .continues
                            .as_ref()
                            .and_then(|(code, language)| passk_formats::extract::closing_braces(text, code, language));
                        format!("{}{text}{}", ask.prefix, closing.unwrap_or_default())
                    }
                    Mode::Chat => choice.text,
                };
                self.store.append(&ask.task_id, index, &text, choice.finish_reason.as_deref())?;
                written += 1;
                (self.watch)(Event::Sample { tokens: std::mem::take(&mut used) });
            }
        }
        Ok((written, tokens))
    }
}
