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
}

impl State {
    pub fn new(settings: &ServeSettings) -> State {
        State {
            engine: RwLock::new(None),
            draining: AtomicBool::new(false),
            metrics: Metrics::default(),
            token: settings.token.clone(),
            max_timeout: settings.max_timeout,
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

    /// The engine, to stop it, once no request holds it.
    pub fn take_engine(&self) -> Option<Engine> {
        let engine = self.engine.write().ok()?.take()?;
        Arc::try_unwrap(engine).ok()
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
