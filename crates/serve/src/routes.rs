//! The HTTP surface: which endpoint does what and who may call it.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tokio_stream::StreamExt as _;

use crate::error::Refusal;
use crate::state::State;
use crate::ServeSettings;

pub fn router(state: Arc<State>, settings: &ServeSettings) -> Router {
    Router::new()
        .route("/run_code", post(crate::run_code::handle))
        .route("/evaluate", post(crate::batch::handle))
        .route("/metrics", get(metrics))
        .route("/healthz", get(alive))
        .route("/readyz", get(ready))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(DefaultBodyLimit::max(settings.max_request_bytes))
        .with_state(state)
}

/// The endpoint a path names, for the metrics.
fn endpoint(path: &str) -> &'static str {
    match path {
        "/run_code" => "run_code",
        "/evaluate" => "evaluate",
        "/metrics" => "metrics",
        "/healthz" => "healthz",
        "/readyz" => "readyz",
        _ => "other",
    }
}

/// Checks the bearer token (the probes need none: an orchestrator's probes carry no
/// secrets), and counts and times every request.
async fn guard(
    axum::extract::State(state): axum::extract::State<Arc<State>>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let endpoint = endpoint(request.uri().path());
    let response = if matches!(endpoint, "healthz" | "readyz") || authorized(&state, &request) {
        match read_body(&state, request).await {
            Ok(request) => next.run(request).await,
            Err(refusal) => refusal.into_response(),
        }
    } else {
        Refusal::Unauthorized.into_response()
    };
    state.metrics.request(endpoint, response.status().as_u16(), started.elapsed());
    response
}

/// The request with its body read whole, within `--read-timeout` and
/// `--max-request-size`: a client that sends its body slowly, or stops, is answered 408
/// rather than holding its connection, and a task, for as long as it likes.
async fn read_body(state: &State, request: Request) -> Result<Request, Refusal> {
    let (parts, body) = request.into_parts();
    let most = state.max_request_bytes;
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > most as u64) {
        return Err(Refusal::TooLarge(most));
    }
    let read = async {
        let mut chunks = body.into_data_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|error| Refusal::BadRequest(format!("the body could not be read: {error}")))?;
            if bytes.len() + chunk.len() > most {
                return Err(Refusal::TooLarge(most));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    };
    match tokio::time::timeout(state.read_timeout, read).await {
        Ok(bytes) => Ok(Request::from_parts(parts, Body::from(bytes?))),
        Err(_) => Err(Refusal::Stalled(state.read_timeout)),
    }
}

fn authorized(state: &State, request: &Request) -> bool {
    let Some(token) = &state.token else { return true };
    let given = request.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
    let Some(given) = given.and_then(|value| value.strip_prefix("Bearer ")) else { return false };
    // Every byte compared, whatever the first that differs: the time taken tells nothing.
    given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// Alive while the workers run, or are still starting: a server whose workers stopped
/// through a fault of the machine answers nothing but `SandboxError`, and is better
/// restarted.
async fn alive(axum::extract::State(state): axum::extract::State<Arc<State>>) -> Response {
    match state.started() {
        Some(engine) if !engine.served.running() => {
            (StatusCode::SERVICE_UNAVAILABLE, "the workers stopped\n").into_response()
        }
        _ => (StatusCode::OK, "ok\n").into_response(),
    }
}

async fn ready(axum::extract::State(state): axum::extract::State<Arc<State>>) -> Response {
    let queue = state.queue();
    let started = state.started().is_some();
    if queue.ready {
        (StatusCode::OK, "ready\n").into_response()
    } else if state.draining() {
        (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response()
    } else if started {
        (StatusCode::SERVICE_UNAVAILABLE, "the workers stopped\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting\n").into_response()
    }
}

async fn metrics(axum::extract::State(state): axum::extract::State<Arc<State>>) -> Response {
    let body = state.metrics.render(state.queue());
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}
