//! What every request shares: the engine once it is up, whether the server drains, the
//! metrics, and how a body becomes a request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::engine::Engine;
use crate::error::Refusal;
use crate::metrics::{Metrics, Queue};
use crate::ServeSettings;

/// What every request sees.
#[derive(Debug)]
pub struct State {
    engine: RwLock<Option<Arc<Engine>>>,
    draining: AtomicBool,
    pub metrics: Metrics,
    pub token: Option<String>,
    pub max_timeout: Duration,
    /// Whether /evaluate runs test code a request gives (`--allow-inline-test-code`).
    pub allow_inline_test_code: bool,
    /// How long a client may take to send a request's body.
    pub read_timeout: Duration,
    pub max_request_bytes: usize,
}

impl State {
    pub fn new(settings: &ServeSettings) -> State {
        State {
            engine: RwLock::new(None),
            draining: AtomicBool::new(false),
            metrics: Metrics::default(),
            token: settings.token.clone(),
            max_timeout: settings.max_timeout,
            allow_inline_test_code: settings.allow_inline_test_code,
            read_timeout: settings.read_timeout,
            max_request_bytes: settings.max_request_bytes,
        }
    }

    /// The engine, once the workers are up and until the drain begins; else a refusal
    /// the client retries.
    pub fn engine(&self) -> Result<Arc<Engine>, Refusal> {
        if self.draining.load(Ordering::SeqCst) {
            return Err(Refusal::RetryLater("this server is shutting down: send the request to another".into()));
        }
        let engine = self.engine.read().ok().and_then(|engine| engine.clone());
        engine.ok_or_else(|| Refusal::RetryLater("the workers are starting".into()))
    }

    pub fn ready(&self, engine: Arc<Engine>) {
        if let Ok(mut slot) = self.engine.write() {
            *slot = Some(engine);
        }
    }

    /// The engine once the workers are up, draining or not.
    pub fn started(&self) -> Option<Arc<Engine>> {
        self.engine.read().ok().and_then(|engine| engine.clone())
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// The engine, to stop it, once no request holds it: programs whose clients hung up
    /// run on to their verdicts, in tasks that hold it, and are waited for.
    pub async fn take_engine(&self) -> Option<Engine> {
        let mut engine = self.engine.write().ok()?.take()?;
        loop {
            match Arc::try_unwrap(engine) {
                Ok(engine) => return Some(engine),
                Err(held) => engine = held,
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn queue(&self) -> Queue {
        match self.started() {
            Some(engine) => Queue {
                depth: engine.served.queued(),
                capacity: engine.served.capacity(),
                ready: engine.served.running() && !self.draining(),
            },
            None => Queue { depth: 0, capacity: 0, ready: false },
        }
    }
}

/// A request's JSON body as `T`, or a refusal that says what is wrong with it and where.
pub fn parse<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, Refusal> {
    serde_json::from_slice(body).map_err(|error| Refusal::BadRequest(format!("the body is not a {what}: {error}")))
}
