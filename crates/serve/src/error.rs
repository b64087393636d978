//! What stops the server, and what a request is refused for.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use passk_eval::EvalError;
use passk_formats::InputError;
use thiserror::Error;

use crate::RETRY_AFTER_SECONDS;

/// Why the server could not start or stopped.
#[derive(Debug, Error)]
pub enum ServeError {
    #[error("cannot listen")]
    Listen(#[source] std::io::Error),
    #[error("cannot load problem set {name}")]
    ProblemSet {
        name: String,
        #[source]
        source: InputError,
    },
    #[error("two problem sets are named {name}: give each its own name (--problems NAME=FILE)")]
    DuplicateSet { name: String },
    #[error(transparent)]
    Eval(#[from] EvalError),
    #[error("the workers' start panicked")]
    Panicked,
}

/// A request refused, with the status it is answered with.
#[derive(Debug, Error)]
pub enum Refusal {
    /// No room in the queue, or no workers yet (starting) or any more (draining): the
    /// client retries after a while.
    #[error("{0}")]
    RetryLater(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("this server needs a bearer token: send `Authorization: Bearer <token>`")]
    Unauthorized,
    #[error("the body is larger than this server takes ({} MiB, --max-request-size)", .0 >> 20)]
    TooLarge(usize),
    #[error("the body was not sent within {} s (--read-timeout)", .0.as_secs_f64())]
    Stalled(std::time::Duration),
}

impl Refusal {
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::RetryLater(_) => StatusCode::GATEWAY_TIMEOUT,
            Refusal::BadRequest(_) => StatusCode::BAD_REQUEST,
            Refusal::NotFound(_) => StatusCode::NOT_FOUND,
            Refusal::Unauthorized => StatusCode::UNAUTHORIZED,
            Refusal::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::Stalled(_) => StatusCode::REQUEST_TIMEOUT,
        }
    }
}

impl From<InputError> for Refusal {
    fn from(error: InputError) -> Refusal {
        Refusal::BadRequest(passk_runner::error_chain(&error))
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = serde_json::json!({"error": self.to_string()});
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        match self {
            Refusal::RetryLater(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
            }
            Refusal::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            Refusal::TooLarge(_) | Refusal::Stalled(_) => {
                // The rest of the body is not read: the connection cannot carry another request.
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        response
    }
}
