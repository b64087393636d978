//! The server's numbers in Prometheus's text format: requests by endpoint and status,
//! verdicts by status, the queue, and latency histograms.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// The bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

#[derive(Debug, Default)]
pub struct Metrics {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    /// By (endpoint, HTTP status).
    requests: BTreeMap<(&'static str, u16), u64>,
    /// By verdict status.
    verdicts: BTreeMap<String, u64>,
    /// By endpoint.
    latency: BTreeMap<&'static str, Histogram>,
    /// Each program's time in the sandbox.
    programs: Histogram,
}

#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Observations at or below each bound of BUCKETS.
    at_most: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (bound, count) in BUCKETS.iter().zip(&mut self.at_most) {
            if seconds <= *bound {
                *count += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let joined = |extra: &str| match (labels.is_empty(), extra.is_empty()) {
            (true, _) => extra.to_owned(),
            (false, true) => labels.to_owned(),
            (false, false) => format!("{labels},{extra}"),
        };
        for (bound, count) in BUCKETS.iter().zip(&self.at_most) {
            let _ = writeln!(out, "{name}_bucket{{{}}} {count}", joined(&format!("le=\"{bound}\"")));
        }
        let _ = writeln!(out, "{name}_bucket{{{}}} {}", joined("le=\"+Inf\""), self.count);
        let braces = |text: String| if text.is_empty() { text } else { format!("{{{text}}}") };
        let _ = writeln!(out, "{name}_sum{} {}", braces(joined("")), self.sum);
        let _ = writeln!(out, "{name}_count{} {}", braces(joined("")), self.count);
    }
}

/// The queue's state when the metrics are read.
#[derive(Debug, Clone, Copy)]
pub struct Queue {
    pub depth: usize,
    pub capacity: usize,
    pub ready: bool,
}

impl Metrics {
    pub fn request(&self, endpoint: &'static str, status: u16, took: Duration) {
        if let Ok(mut counts) = self.counts.lock() {
            *counts.requests.entry((endpoint, status)).or_default() += 1;
            counts.latency.entry(endpoint).or_default().observe(took.as_secs_f64());
        }
    }

    pub fn verdict(&self, status: &str, seconds: f64) {
        if let Ok(mut counts) = self.counts.lock() {
            *counts.verdicts.entry(status.to_owned()).or_default() += 1;
            counts.programs.observe(seconds);
        }
    }

    pub fn render(&self, queue: Queue) -> String {
        let mut out = String::new();
        let Ok(counts) = self.counts.lock() else { return out };
        out.push_str("# HELP passk_requests_total Requests answered, by endpoint and HTTP status.\n");
        out.push_str("# TYPE passk_requests_total counter\n");
        for ((endpoint, status), count) in &counts.requests {
            let _ = writeln!(out, "passk_requests_total{{endpoint=\"{endpoint}\",code=\"{status}\"}} {count}");
        }
        out.push_str("# HELP passk_verdicts_total Programs judged, by verdict status.\n");
        out.push_str("# TYPE passk_verdicts_total counter\n");
        for (status, count) in &counts.verdicts {
            let _ = writeln!(out, "passk_verdicts_total{{status=\"{status}\"}} {count}");
        }
        out.push_str("# HELP passk_queue_depth Programs queued or running.\n# TYPE passk_queue_depth gauge\n");
        let _ = writeln!(out, "passk_queue_depth {}", queue.depth);
        out.push_str("# HELP passk_queue_capacity Programs that may be queued or running at once.\n");
        out.push_str("# TYPE passk_queue_capacity gauge\n");
        let _ = writeln!(out, "passk_queue_capacity {}", queue.capacity);
        out.push_str("# HELP passk_ready Whether the workers are up and taking programs.\n# TYPE passk_ready gauge\n");
        let _ = writeln!(out, "passk_ready {}", u8::from(queue.ready));
        out.push_str("# HELP passk_request_duration_seconds Time to answer a request, by endpoint.\n");
        out.push_str("# TYPE passk_request_duration_seconds histogram\n");
        for (endpoint, histogram) in &counts.latency {
            histogram.render(&mut out, "passk_request_duration_seconds", &format!("endpoint=\"{endpoint}\""));
        }
        out.push_str("# HELP passk_program_duration_seconds Each program's time in the sandbox.\n");
        out.push_str("# TYPE passk_program_duration_seconds histogram\n");
        counts.programs.render(&mut out, "passk_program_duration_seconds", "");
        out
    }
}
