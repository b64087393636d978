//! The endpoint: one request sent, its answer decided, retried or adapted to.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::ask::{Ask, Mode};
use crate::error::GenerateError;
use crate::watch::{Event, Sampling, Watch};

/// The longest wait a server's `Retry-After` is followed for, and the longest backoff.
const LONGEST_WAIT: Duration = Duration::from_secs(300);
const LONGEST_BACKOFF: Duration = Duration::from_secs(60);

/// The most of an error answer read: its message is all that is shown.
const ERROR_BODY_LIMIT: usize = 64 << 10;

/// Attempts to reach an endpoint that has never answered: a wrong port or a server not
/// up yet is told in seconds, not after a minute of backoff.
const ATTEMPTS_UNANSWERED: u32 = 3;

/// The name a server takes the length limit by: `max_tokens` (the completions API, vLLM,
/// llama.cpp), or `max_completion_tokens` (OpenAI's newer chat models, which refuse the
/// other).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenParam {
    MaxTokens,
    MaxCompletionTokens,
}

impl TokenParam {
    fn name(self) -> &'static str {
        match self {
            TokenParam::MaxTokens => "max_tokens",
            TokenParam::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// What the server was found to take, learned from its refusals, once each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Learned {
    pub token_param: TokenParam,
    /// Whether `n > 1` is asked for, or each sample asked for alone.
    pub n: bool,
    /// Whether the stop sequences are sent (they are applied to the answer either way).
    pub stop: bool,
}

/// One choice of an answer.
#[derive(Debug, Clone)]
pub struct Choice {
    pub text: String,
    pub finish_reason: Option<String>,
}

#[derive(Debug)]
pub struct Answer {
    pub choices: Vec<Choice>,
    pub completion_tokens: u64,
    /// Choices that held no text.
    pub textless: usize,
}

/// How the endpoint is reached.
#[derive(Debug, Clone)]
pub struct Connection {
    /// The API's base, such as `http://localhost:8000/v1`.
    pub base: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The environment variable the key came from, for the message when it is refused.
    pub api_key_env: String,
    pub mode: Mode,
    pub max_attempts: u32,
    pub request_timeout: Duration,
}

#[derive(Debug)]
pub struct Endpoint {
    client: reqwest::Client,
    connection: Connection,
    token_param: Mutex<TokenParam>,
    adapted_tokens: AtomicBool,
    n: AtomicBool,
    stop: AtomicBool,
    /// Whether anything has answered at the endpoint's address, even an error.
    answered: AtomicBool,
    /// Whether a choice without text has been said.
    said_textless: AtomicBool,
}

/// What one attempt came to.
enum Attempt {
    Answer(Answer),
    Retry {
        wait: Option<Duration>,
        why: String,
        /// Whether no connection could be made.
        unreachable: bool,
    },
    /// The request is to be sent again at once, changed by what was learned: by this
    /// answer (said), or by another's while this one was in flight.
    Adapted(Option<String>),
    /// A successful answer longer than its limit.
    TooLarge,
    Final(GenerateError),
}

impl Endpoint {
    pub fn new(connection: Connection) -> Result<Endpoint, GenerateError> {
        let client = reqwest::Client::builder()
            .timeout(connection.request_timeout)
            .connect_timeout(Duration::from_secs(30))
            .user_agent(concat!("passk/", env!("CARGO_PKG_VERSION")))
            // Samples from wherever a redirect points would be recorded as the endpoint's.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|source| GenerateError::Client { message: source.to_string() })?;
        Ok(Endpoint {
            client,
            connection,
            token_param: Mutex::new(TokenParam::MaxTokens),
            adapted_tokens: AtomicBool::new(false),
            n: AtomicBool::new(true),
            stop: AtomicBool::new(true),
            answered: AtomicBool::new(false),
            said_textless: AtomicBool::new(false),
        })
    }

    pub fn url(&self) -> String {
        let path = match self.connection.mode {
            Mode::Completion => "completions",
            Mode::Chat => "chat/completions",
        };
        format!("{}/{path}", self.connection.base.trim_end_matches('/'))
    }

    pub fn learned(&self) -> Learned {
        Learned {
            token_param: *self.token_param.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
            n: self.n.load(Ordering::Relaxed),
            stop: self.stop.load(Ordering::Relaxed),
        }
    }

    /// Whether more than one sample may be asked for in one request.
    pub fn takes_n(&self) -> bool {
        self.n.load(Ordering::Relaxed)
    }

    /// Says, once, that the endpoint answered a choice without text, which is written as
    /// an empty sample (and fails).
    pub fn textless(&self, watch: &Watch) {
        if !self.said_textless.swap(true, Ordering::Relaxed) {
            watch(Event::Adapted {
                what: "warning: the endpoint answered a choice without text; it is written as an empty sample"
                    .to_owned(),
            });
        }
    }

    /// Asks for each sample alone from now on: the server answered one choice where it
    /// was asked for more (it ignores `n`), and would give every request of a seeded run
    /// the same sample. Says so the first time.
    pub fn ignores_n(&self, watch: &Watch) {
        if self.n.swap(false, Ordering::Relaxed) {
            watch(Event::Adapted {
                what: "the endpoint answers one sample whatever n asks for: each is asked for alone".to_owned(),
            });
        }
    }

    /// Asks for `n` samples of `ask`, the first of them sample `first`; the answer may
    /// hold fewer (a server that ignores `n`), and the caller asks again for the rest.
    pub async fn ask(
        &self,
        ask: &Ask,
        n: u32,
        first: u32,
        sampling: &Sampling,
        watch: &Watch,
        cancel: &CancellationToken,
    ) -> Result<Answer, GenerateError> {
        let url = self.url();
        let mut failures = 0;
        loop {
            // A server found not to take `n` is asked for one; the caller asks again.
            let n = if self.takes_n() { n } else { 1 };
            // Each request for later samples gets a seed of its own, so that a seeded
            // server does not answer them as it answered the first.
            let seed = match sampling.seed {
                Some(seed) if sampling.n > 1 => Some(seed.wrapping_add(u64::from(first))),
                seed => seed,
            };
            let sent = Sent {
                token_param: *self.token_param.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
                n,
                stop: self.stop.load(Ordering::Relaxed),
            };
            let body = self.body(ask, &sent, seed, sampling);
            // Room for n answers of max_tokens tokens of up to 64 bytes each, and the rest.
            let limit = (16 << 20) + n as usize * sampling.max_tokens as usize * 64;
            let attempt = tokio::select! {
                () = cancel.cancelled() => return Err(GenerateError::Interrupted),
                attempt = self.attempt(&url, &body, &sent, limit) => attempt,
            };
            match attempt {
                Attempt::Answer(mut answer) => {
                    // No more than asked for: a sample asked for alone has a seed of its own.
                    answer.choices.truncate(n as usize);
                    return Ok(answer);
                }
                Attempt::Final(error) => return Err(error),
                Attempt::TooLarge => {
                    return Err(GenerateError::TooLarge { url, limit: limit >> 20, n, max_tokens: sampling.max_tokens })
                }
                Attempt::Adapted(Some(what)) => watch(Event::Adapted { what }),
                Attempt::Adapted(None) => {}
                Attempt::Retry { wait, why, unreachable } => {
                    failures += 1;
                    if unreachable && !self.answered.load(Ordering::Relaxed) && failures >= ATTEMPTS_UNANSWERED {
                        return Err(GenerateError::Unreachable { url, attempts: failures, last: why });
                    }
                    if failures >= self.connection.max_attempts {
                        return Err(GenerateError::GaveUp { url, attempts: failures, last: why });
                    }
                    let wait = wait.unwrap_or_else(|| backoff(failures));
                    // Until something answers at all, one error says it, not a line a request.
                    if self.answered.load(Ordering::Relaxed) || !unreachable {
                        watch(Event::Retrying { task_id: ask.task_id.clone(), why, wait });
                    }
                    tokio::select! {
                        () = cancel.cancelled() => return Err(GenerateError::Interrupted),
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            }
        }
    }

    fn body(&self, ask: &Ask, sent: &Sent, seed: Option<u64>, sampling: &Sampling) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.connection.model));
        match self.connection.mode {
            Mode::Completion => body.insert("prompt".into(), ask.input.clone()),
            Mode::Chat => body.insert("messages".into(), ask.input.clone()),
        };
        if sent.n > 1 {
            body.insert("n".into(), json!(sent.n));
        }
        body.insert("temperature".into(), json!(sampling.temperature));
        if let Some(top_p) = sampling.top_p {
            body.insert("top_p".into(), json!(top_p));
        }
        body.insert(sent.token_param.name().into(), json!(sampling.max_tokens));
        if !ask.stop.is_empty() && sent.stop {
            body.insert("stop".into(), json!(ask.stop));
        }
        if let Some(seed) = seed {
            body.insert("seed".into(), json!(seed));
        }
        Value::Object(body)
    }

    async fn attempt(&self, url: &str, body: &Value, sent: &Sent, limit: usize) -> Attempt {
        let mut request = self.client.post(url).json(body);
        if let Some(key) = &self.connection.api_key {
            request = request.bearer_auth(key);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => {
                return Attempt::Retry { wait: None, why: describe_transport(&error), unreachable: error.is_connect() }
            }
        };
        self.answered.store(true, Ordering::Relaxed);
        let status = response.status().as_u16();
        let retry_after = response.headers().get(reqwest::header::RETRY_AFTER).and_then(retry_after);
        let success = (200..300).contains(&status);
        let text = match read_at_most(response, if success { limit } else { ERROR_BODY_LIMIT }).await {
            Ok((_, true)) if success => return Attempt::TooLarge,
            Ok((body, _)) => String::from_utf8_lossy(&body).into_owned(),
            Err(error) => return Attempt::Retry { wait: None, why: describe_transport(&error), unreachable: false },
        };
        match status {
            200..=299 => match self.answer(&text) {
                Ok(answer) => Attempt::Answer(answer),
                Err(why) => Attempt::Retry { wait: None, why, unreachable: false },
            },
            408 | 409 | 429 | 500..=599 => Attempt::Retry {
                wait: retry_after,
                why: format!("HTTP {status}: {}", error_message(&text)),
                unreachable: false,
            },
            _ => self.refused(url, status, &text, sent).await,
        }
    }

    fn answer(&self, text: &str) -> Result<Answer, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|error| format!("an answer that is not JSON ({error})"))?;
        let choices = value["choices"].as_array().filter(|choices| !choices.is_empty());
        let choices = choices.ok_or("an answer without `choices`")?;
        let mut textless = 0;
        let mut choices: Vec<(u64, Choice)> = choices
            .iter()
            .enumerate()
            .map(|(position, choice)| {
                let text = match self.connection.mode {
                    Mode::Completion => choice["text"].as_str(),
                    Mode::Chat => choice["message"]["content"].as_str(),
                };
                let index = choice["index"].as_u64().unwrap_or(position as u64);
                let finish_reason = choice["finish_reason"].as_str().map(str::to_owned);
                textless += usize::from(text.is_none());
                (index, Choice { text: text.unwrap_or_default().to_owned(), finish_reason })
            })
            .collect();
        choices.sort_by_key(|(index, _)| *index);
        let completion_tokens = value["usage"]["completion_tokens"].as_u64().unwrap_or(0);
        Ok(Answer { choices: choices.into_iter().map(|(_, choice)| choice).collect(), completion_tokens, textless })
    }

    /// A 4xx other than a rate limit: a parameter the server does not take is dropped or
    /// renamed once; anything else would be answered the same however often it is asked.
    async fn refused(&self, url: &str, status: u16, text: &str, sent: &Sent) -> Attempt {
        let message = error_message(text);
        let lower = message.to_lowercase();
        if matches!(status, 400 | 422) {
            if let Some(adapted) = self.adapt(&lower, sent) {
                return Attempt::Adapted(adapted);
            }
        }
        let hint = match status {
            300..=399 => {
                Some("the endpoint redirects elsewhere: give the address it redirects to as --endpoint".into())
            }
            401 | 403 => Some(match self.connection.api_key {
                Some(_) => format!("the key in {} was refused", self.connection.api_key_env),
                None => format!("no API key was sent: set {}", self.connection.api_key_env),
            }),
            404 => Some(self.not_found_hint().await),
            _ => None,
        };
        Attempt::Final(GenerateError::Refused { url: url.to_owned(), status, message, hint })
    }

    /// What a refusal that names a parameter the request sent changes: the length
    /// limit's name is switched once, `n` and the stop sequences dropped. A request sent
    /// before another's refusal changed the same is sent again as it now stands. None
    /// where the refusal is about nothing that can change.
    fn adapt(&self, lower: &str, sent: &Sent) -> Option<Option<String>> {
        let mut token_param = self.token_param.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if lower.contains(sent.token_param.name()) {
            if *token_param != sent.token_param {
                return Some(None);
            }
            if !self.adapted_tokens.swap(true, Ordering::Relaxed) {
                *token_param = match sent.token_param {
                    TokenParam::MaxTokens => TokenParam::MaxCompletionTokens,
                    TokenParam::MaxCompletionTokens => TokenParam::MaxTokens,
                };
                return Some(Some(format!(
                    "the endpoint refuses `{}`: the length limit is sent as `{}`",
                    sent.token_param.name(),
                    token_param.name()
                )));
            }
        }
        drop(token_param);
        if sent.n > 1 && mentions_n(lower) {
            let first = self.n.swap(false, Ordering::Relaxed);
            return Some(first.then(|| "the endpoint refuses n > 1: each sample is asked for alone".to_owned()));
        }
        if sent.stop && lower.contains("stop") {
            let first = self.stop.swap(false, Ordering::Relaxed);
            return Some(first.then(|| {
                "the endpoint refuses the stop sequences: they are applied to its answers instead".to_owned()
            }));
        }
        None
    }

    /// What a 404 most likely means: a model the server does not have (named with those
    /// it has), or an endpoint that is not the API's base.
    async fn not_found_hint(&self) -> String {
        let base = self.connection.base.trim_end_matches('/');
        let mut request = self.client.get(format!("{base}/models")).timeout(Duration::from_secs(10));
        if let Some(key) = &self.connection.api_key {
            request = request.bearer_auth(key);
        }
        let models: Option<Vec<String>> = async {
            let value: Value = request.send().await.ok()?.error_for_status().ok()?.json().await.ok()?;
            Some(value["data"].as_array()?.iter().filter_map(|model| model["id"].as_str().map(str::to_owned)).collect())
        }
        .await;
        match models {
            Some(models) if !models.contains(&self.connection.model) => format!(
                "the endpoint has no model {:?}; it serves {}",
                self.connection.model,
                if models.is_empty() { "none".to_owned() } else { models.join(", ") }
            ),
            _ => format!("is --endpoint the API's base, such as http://localhost:8000/v1? passk adds /{}", {
                match self.connection.mode {
                    Mode::Completion => "completions",
                    Mode::Chat => "chat/completions",
                }
            }),
        }
    }
}

/// What one attempt asked for, of what the server may refuse.
#[derive(Debug, Clone, Copy)]
struct Sent {
    token_param: TokenParam,
    n: u32,
    stop: bool,
}

/// Whether a refusal is about the `n` parameter.
fn mentions_n(lower: &str) -> bool {
    ["'n'", "\"n\"", "`n`", "n must be", "n > 1", "n>1", "n = 1", "n=1", "parameter n ", "n is not supported"]
        .iter()
        .any(|phrase| lower.contains(phrase))
}

/// The message of an error answer: OpenAI's `{"error": {"message"}}`, FastAPI's
/// `{"detail"}`, `{"message"}`, or the text itself, shortened.
fn error_message(text: &str) -> String {
    let value: Option<Value> = serde_json::from_str(text).ok();
    let found = value.as_ref().and_then(|value| {
        let candidates = [&value["error"]["message"], &value["error"], &value["detail"], &value["message"]];
        candidates.into_iter().find(|candidate| !candidate.is_null()).map(|candidate| match candidate {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    });
    // A full stop would sit before the hint's semicolon.
    let message = found.unwrap_or_else(|| text.trim().to_owned()).trim_end_matches('.').to_owned();
    // What the server says reaches a terminal: no escape sequence of its own does.
    let mut message: String = message.chars().take(500).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if message.is_empty() {
        message = "(no message)".into();
    }
    message
}

/// The body of `response`, up to `limit` bytes, and whether there was more.
async fn read_at_most(mut response: reqwest::Response, limit: usize) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            body.extend_from_slice(&chunk[..limit - body.len()]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

fn describe_transport(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "no answer within --request-timeout".to_owned()
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        "the connection failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// `Retry-After` as seconds or an HTTP date, within `LONGEST_WAIT`.
fn retry_after(value: &reqwest::header::HeaderValue) -> Option<Duration> {
    let text = value.to_str().ok()?.trim();
    let wait = match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => Duration::from_secs_f64(seconds),
        Ok(_) => return None,
        Err(_) => httpdate::parse_http_date(text).ok()?.duration_since(SystemTime::now()).unwrap_or_default(),
    };
    Some(wait.min(LONGEST_WAIT))
}

/// Exponential backoff from half a second, with jitter so that many requests refused
/// at once do not come back at once.
fn backoff(failures: u32) -> Duration {
    let base = Duration::from_millis(500).saturating_mul(1 << failures.min(10).saturating_sub(1)).min(LONGEST_BACKOFF);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |now| now.subsec_nanos());
    base.mul_f64(0.5 + f64::from(nanos % 1000) / 2000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_after_in_seconds_or_as_a_date_is_followed_within_limits() {
        let header = |text: &str| reqwest::header::HeaderValue::from_str(text).unwrap();
        assert_eq!(retry_after(&header("2")), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(&header("0.5")), Some(Duration::from_millis(500)));
        assert_eq!(retry_after(&header("99999")), Some(LONGEST_WAIT));
        assert_eq!(retry_after(&header("-1")), None);
        let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let wait = retry_after(&header(&date)).unwrap();
        assert!(wait > Duration::from_secs(28) && wait <= Duration::from_secs(30), "{wait:?}");
        assert_eq!(retry_after(&header("Wed, 21 Oct 2015 07:28:00 GMT")), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_grows_to_a_minute() {
        assert!(backoff(1) <= Duration::from_millis(500) && backoff(1) >= Duration::from_millis(250));
        assert!(backoff(4) >= Duration::from_secs(2));
        assert!(backoff(30) <= LONGEST_BACKOFF);
    }

    #[test]
    fn the_servers_error_message_is_found_in_its_usual_places() {
        assert_eq!(error_message(r#"{"error": {"message": "no such model"}}"#), "no such model");
        assert_eq!(error_message(r#"{"detail": "bad n"}"#), "bad n");
        assert_eq!(error_message(r#"{"object": "error", "message": "too long"}"#), "too long");
        assert_eq!(error_message("Bad Gateway\n"), "Bad Gateway");
        assert_eq!(error_message(""), "(no message)");
    }

    #[test]
    fn refusals_of_n_are_told_apart() {
        assert!(mentions_n("only n = 1 is supported"));
        assert!(mentions_n("unsupported value: 'n' must be 1"));
        assert!(!mentions_n("the model does not exist"));
    }
}
