//! An optional limit on requests per second, shared by every request of a run.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// Hands out start times at least `interval` apart.
#[derive(Debug)]
pub struct Pace {
    interval: Option<Duration>,
    next: Mutex<Option<Instant>>,
}

impl Pace {
    pub fn new(per_second: Option<f64>) -> Pace {
        let interval = per_second.filter(|rate| *rate > 0.0).map(|rate| Duration::from_secs_f64(1.0 / rate));
        Pace { interval, next: Mutex::new(None) }
    }

    /// Waits for this request's turn.
    pub async fn wait(&self) {
        let Some(interval) = self.interval else { return };
        let slot = {
            let mut next = self.next.lock().await;
            let now = Instant::now();
            let slot = next.map_or(now, |next| next.max(now));
            *next = Some(slot + interval);
            slot
        };
        tokio::time::sleep_until(slot).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn requests_start_an_interval_apart() {
        let pace = Pace::new(Some(4.0));
        let start = Instant::now();
        for _ in 0..5 {
            pace.wait().await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(1), "the fifth starts four quarter-seconds after the first");
    }
}
