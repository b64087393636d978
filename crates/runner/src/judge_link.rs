//! The harness's own line to each slot's judge, which the driver holds but never reads.
//!
//! Every candidate is forked from its slot's driver, so whatever the driver ever held,
//! freed or not, a candidate may find in its own memory. Expected outputs must never be
//! there: a candidate that found them could print the answer it was asked for. So a
//! suite goes whole to the judge on this line, and the driver gets only its inputs and
//! limits (`Suite::driver_part`); what of a verdict tells an expected output comes back
//! on this line too, sealed, and is put into the verdict here (`unseal`).
//!
//! While a canonical solution's outputs are recorded, the judge sends them on this line
//! too, as they come, in frames of about a megabyte: never the whole phase in one record,
//! since a phase's outputs may be hundreds of megabytes (`collect_recorded`).
//!
//! Frames are JSON objects between a record separator (0x1E) and a newline, neither of
//! which JSON text holds raw, so a reader that starts inside a frame another left
//! half-read skips to the next one (see `sandbox/passk_driver/harness_link.py`).

use std::os::fd::OwnedFd;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::kept::KeptSuites;
use crate::program::Suite;
use crate::verdict::{Status, Verdict};

/// Where the driver finds its end of the line; `worker.py` reads the same number.
pub(crate) const JUDGE_LINK_FD: i32 = 3;
const MARK: u8 = 0x1e;
/// How long a sealed part may lag behind the driver's verdict. The judge sends it before
/// it answers the driver, so only a judge killed between the two misses it.
const SEALED_WAIT: Duration = Duration::from_secs(5);

/// The sealed part of one failure: what was expected, and the end of the verdict's
/// detail that says it.
#[derive(Debug, Deserialize)]
struct Sealed {
    seq: u64,
    run: u64,
    expected: String,
    suffix: String,
}

/// What the canonical solution returned for consecutive inputs, from `first` on, while
/// its outputs are recorded.
#[derive(Debug, Deserialize)]
struct Recorded {
    seq: u64,
    run: u64,
    first: u64,
    outputs: Vec<String>,
    seconds: Vec<f64>,
    arguments: Vec<String>,
}

/// A frame from the judge.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum FromJudge {
    Sealed(Sealed),
    Recorded(Recorded),
}

#[derive(Serialize)]
struct Frame<'a> {
    seq: u64,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    suite: Option<&'a serde_json::Value>,
}

#[derive(Debug)]
pub(crate) struct JudgeLink {
    frames: mpsc::UnboundedSender<Vec<u8>>,
    sealed: mpsc::UnboundedReceiver<Sealed>,
    /// The first sealed part read that was not yet asked for.
    waiting: Option<Sealed>,
    recorded: mpsc::UnboundedReceiver<Recorded>,
    /// The first recorded output read that belongs to a later sample.
    recorded_waiting: Option<Recorded>,
    /// The suites the slot's judge holds, as its own list (harness_link.py).
    held: KeptSuites,
}

impl JudgeLink {
    /// A new line, and the end to hand the driver. Must be called within a runtime: a
    /// task writes the frames in order, and another reads the sealed parts.
    pub(crate) fn open() -> std::io::Result<(JudgeLink, OwnedFd)> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        let (reader, mut writer) = tokio::net::UnixStream::from_std(ours)?.into_split();
        let (frames, mut to_write) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            // Frames go whole and in order: one a dead judge left unread waits for the
            // next judge, which skips it. The line fails only once the driver is gone.
            while let Some(frame) = to_write.recv().await {
                if writer.write_all(&frame).await.is_err() {
                    break;
                }
            }
        });
        let (sealed_tx, sealed) = mpsc::unbounded_channel();
        let (recorded_tx, recorded) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                // Only what follows a line's last mark is whole.
                let Some(start) = line.iter().rposition(|&byte| byte == MARK) else { continue };
                let sent = match serde_json::from_slice::<FromJudge>(&line[start + 1..]) {
                    Ok(FromJudge::Sealed(part)) => sealed_tx.send(part).is_ok(),
                    Ok(FromJudge::Recorded(output)) => recorded_tx.send(output).is_ok(),
                    Err(error) => {
                        tracing::warn!("unreadable frame from a judge: {error}");
                        true
                    }
                };
                if !sent {
                    break;
                }
            }
        });
        let link =
            JudgeLink { frames, sealed, waiting: None, recorded, recorded_waiting: None, held: KeptSuites::default() };
        Ok((link, OwnedFd::from(theirs)))
    }

    /// Sends sample `seq`'s suite to the judge, whole unless the judge holds it.
    pub(crate) fn send(&mut self, seq: u64, suite: &Suite) {
        let held = self.held.touch(&suite.id);
        let frame = Frame { seq, id: &suite.id, suite: (!held).then_some(&suite.data) };
        let mut bytes = vec![MARK];
        serde_json::to_writer(&mut bytes, &frame).expect("a frame always serializes");
        bytes.push(b'\n');
        // Fails only once the writer is gone with the driver; the sample then has no verdict.
        let _ = self.frames.send(bytes);
    }

    /// The slot's judge was lost, and what it held with it.
    pub(crate) fn judge_lost(&mut self) {
        self.held = KeptSuites::default();
    }

    /// Puts the sealed parts of sample `seq`'s failures into its verdict: each phase's
    /// or test's `expected`, and the end of the detail that tells it.
    pub(crate) async fn unseal(&mut self, seq: u64, verdict: &mut Verdict) {
        let detail_phase = verdict.phases.iter().position(|phase| phase.status != Status::Passed);
        for index in 0..verdict.phases.len() {
            let Some(failure) = sealed_failure(&mut verdict.phases[index].failure) else { continue };
            let Some(part) = self.part(seq, index as u64).await else { continue };
            failure.insert("expected".into(), part.expected.into());
            if detail_phase == Some(index) {
                verdict.detail.push_str(&part.suffix);
            }
        }
        let Some(failure) = sealed_failure(&mut verdict.failure) else { return };
        let Some(test) = failure.get("test").and_then(serde_json::Value::as_u64) else { return };
        let Some(part) = self.part(seq, test).await else { return };
        if let Some(serde_json::Value::String(why)) = failure.get_mut("why") {
            why.push_str(&part.suffix);
        }
        failure.insert("expected".into(), part.expected.into());
        verdict.detail.push_str(&part.suffix);
    }

    /// Gives each phase of sample `seq` that recorded outputs the outputs, times and
    /// arguments the judge sent for it. The judge sends them before its record, so they are all due;
    /// a phase missing any (its judge killed while sending) gets none.
    pub(crate) async fn collect_recorded(&mut self, seq: u64, verdict: &mut Verdict) {
        for (index, phase) in verdict.phases.iter_mut().enumerate() {
            let Some(count) = phase.recorded else { continue };
            let mut outputs = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
            let mut times = Vec::with_capacity(outputs.capacity());
            let mut arguments = Vec::with_capacity(outputs.capacity());
            while (outputs.len() as u64) < count {
                let Some(batch) = self.next_recorded(seq, index as u64).await else { break };
                let items = batch.outputs.len();
                if batch.first != outputs.len() as u64 || batch.seconds.len() != items || batch.arguments.len() != items
                {
                    break;
                }
                outputs.extend(batch.outputs);
                times.extend(batch.seconds);
                arguments.extend(batch.arguments);
            }
            if outputs.len() as u64 == count {
                phase.outputs = Some(outputs);
                phase.times = Some(times);
                phase.arguments = Some(arguments);
            }
        }
    }

    /// The next recorded output of run `run` of sample `seq`, skipping older ones.
    async fn next_recorded(&mut self, seq: u64, run: u64) -> Option<Recorded> {
        let what = "a recorded output never came from the judge";
        next_of(&mut self.recorded, &mut self.recorded_waiting, (seq, run), |output| (output.seq, output.run), what)
            .await
    }

    /// The sealed part of run `run` of sample `seq`, skipping older ones.
    async fn part(&mut self, seq: u64, run: u64) -> Option<Sealed> {
        let what = "a failure's expected output never came from the judge";
        next_of(&mut self.sealed, &mut self.waiting, (seq, run), |part| (part.seq, part.run), what).await
    }
}

/// A failure the driver marked as having a sealed part, with the mark taken off.
fn sealed_failure(failure: &mut Option<serde_json::Value>) -> Option<&mut serde_json::Map<String, serde_json::Value>> {
    let failure = failure.as_mut()?.as_object_mut()?;
    failure.remove("sealed")?;
    Some(failure)
}

/// The item for `key` (a sample's seq and run) from `receiver`, which gives them in order:
/// older ones are skipped, and one for a later key is kept in `waiting` for its turn.
async fn next_of<T>(
    receiver: &mut mpsc::UnboundedReceiver<T>,
    waiting: &mut Option<T>,
    key: (u64, u64),
    key_of: impl Fn(&T) -> (u64, u64),
    what: &str,
) -> Option<T> {
    loop {
        let item = match waiting.take() {
            Some(item) => item,
            None => match tokio::time::timeout(SEALED_WAIT, receiver.recv()).await {
                Ok(Some(item)) => item,
                Ok(None) | Err(_) => {
                    tracing::warn!(seq = key.0, run = key.1, "{what}");
                    return None;
                }
            },
        };
        match key_of(&item).cmp(&key) {
            std::cmp::Ordering::Less => continue,
            std::cmp::Ordering::Equal => return Some(item),
            std::cmp::Ordering::Greater => {
                *waiting = Some(item);
                return None;
            }
        }
    }
}
