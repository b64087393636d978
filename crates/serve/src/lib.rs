//! passk as a service: the reward server an RL trainer calls, and a batch endpoint for
//! evaluation at scale.
//!
//! Trainers already speak one contract for code execution, SandboxFusion's `POST
//! /run_code`, so that is the first front end ([`run_code`]): a program, its language,
//! its input and its limits in; how its build and run ended and what they printed out,
//! in SandboxFusion's own schema. The second is passk's own (`POST /evaluate`,
//! [`batch`]): many samples against a problem set the server loaded at start, or
//! against problems given inline, judged with the tests whole on the server, with no
//! round trip per test, answered at once or streamed as verdicts are decided.
//!
//! Both run on the same pipeline as `passk evaluate`: the same pool of warm, sandboxed
//! workers ([`passk_eval::served`]), the same judge, the same programs from the same
//! samples. What a service adds is in this crate: admission, so that overload is an
//! HTTP 504 with `Retry-After` that a trainer retries (verl retries 504 alone), never a
//! wrong reward; faults of the machine answered as `SandboxError` or `infrastructure`,
//! never as the candidate's failure; health, readiness and Prometheus metrics; a
//! bearer token; limits on request size; and a drain on SIGTERM, so that a replica
//! taken out of a load balancer finishes what it took.
//!
//! Like the other library crates it never prints: what the operator should see goes to
//! the [`passk_eval::events`] sink the front end passes in.

mod batch;
mod engine;
mod error;
mod listen;
mod metrics;
mod routes;
mod run_code;
mod state;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use passk_eval::events::{Event, EventSink};
use passk_eval::workers::WorkerOptions;
use passk_formats::problems::SetOptions;
use passk_runner::CancellationToken;
use tokio::net::TcpListener;

pub use crate::engine::Engine;
pub use crate::error::ServeError;

/// A problem set the server loads at start, and the name requests give it by.
#[derive(Debug, Clone)]
pub struct NamedSet {
    pub name: String,
    /// A problem file, or a bundled set's name (see `ProblemSet::load`).
    pub source: String,
}

/// Everything `passk serve` is started with.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    pub listen: SocketAddr,
    pub workers: WorkerOptions,
    /// The executable that runs the sandbox's helper commands; passk's own by default.
    pub helper: Option<PathBuf>,
    pub problem_sets: Vec<NamedSet>,
    pub set: SetOptions,
    pub cache_dir: PathBuf,
    /// Programs queued or running at once; past it a request is answered 504.
    pub queue: usize,
    /// The bearer token every request but the probes must carry, if any.
    pub token: Option<String>,
    pub max_request_bytes: usize,
    /// The longest run or build a request may ask for.
    pub max_timeout: Duration,
    /// How long a client may take to send a request's headers, and then its body.
    pub read_timeout: Duration,
    /// Whether /evaluate runs test code given in the request (HumanEval's, MBPP's).
    pub allow_inline_test_code: bool,
    /// Connections open at once; past it the next waits to be taken.
    pub max_connections: usize,
}

/// Seconds a client is told to wait before it retries a request the server had no
/// room for, or was not ready for.
pub const RETRY_AFTER_SECONDS: u64 = 1;

/// Serves on `listener` until `shutdown` is cancelled, then drains: no new request is
/// taken, every request taken is answered, and the workers stop. The probes answer while
/// the workers start; the other endpoints wait for them with a 504.
pub async fn serve(
    settings: ServeSettings,
    listener: TcpListener,
    events: EventSink,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let state = Arc::new(state::State::new(&settings));
    let app = routes::router(state.clone(), &settings);
    let (settings_read_timeout, settings_connections) = (settings.read_timeout, settings.max_connections);
    let address = listener.local_addr().map_err(ServeError::Listen)?;
    events.event(Event::Info(format!("listening on http://{address}; starting the workers")));
    let starting = {
        let (state, events, shutdown) = (state.clone(), events.clone(), shutdown.clone());
        tokio::spawn(async move {
            let started = Engine::start(&settings, &events, &shutdown).await;
            match started {
                Ok(engine) => {
                    events.event(Event::Info(engine.describe()));
                    state.ready(Arc::new(engine));
                    Ok(())
                }
                Err(error) => {
                    shutdown.cancel();
                    Err(error)
                }
            }
        })
    };
    let draining = {
        let (state, shutdown, events) = (state.clone(), shutdown.clone(), events.clone());
        async move {
            shutdown.cancelled().await;
            state.drain();
            events.event(Event::Info("draining: answering the requests taken, taking no more".into()));
        }
    };
    let served = listen::serve(listener, app, settings_read_timeout, settings_connections, draining).await;
    let started = starting.await.map_err(|_| ServeError::Panicked)?;
    if let Some(engine) = state.take_engine().await {
        engine.drain().await;
    }
    served.map_err(ServeError::Listen)?;
    started
}
