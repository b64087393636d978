//! What a generation is asked with and what it tells whoever watches it: shared by the
//! run and the endpoint.

use std::sync::Arc;
use std::time::Duration;

/// The sampling settings every request carries.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sampling {
    /// Samples per problem.
    pub n: u32,
    pub temperature: f64,
    pub top_p: Option<f64>,
    pub max_tokens: u32,
    /// Sent as is where one request asks for all of a problem's samples; where each is
    /// asked for alone, sample i is asked with seed + i, so that they differ.
    pub seed: Option<u64>,
}

/// What a generation tells whoever watches it.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run begins: `already` of `total` samples were in the file.
    Started {
        total: usize,
        already: usize,
        dropped_torn_line: bool,
    },
    /// A sample was written, and the tokens its answer took.
    Sample {
        tokens: u64,
    },
    Retrying {
        task_id: String,
        why: String,
        wait: Duration,
    },
    /// The request changed to what the server takes.
    Adapted {
        what: String,
    },
}

pub type Watch = Arc<dyn Fn(Event) + Send + Sync>;
