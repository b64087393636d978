//! Ctrl-C, SIGTERM and SIGHUP stop a run cleanly in whatever phase it is in. They are
//! caught from the moment `evaluate` begins, so none of them ends passk before it has
//! stopped its workers, recorded every verdict they had decided, and removed what it
//! made; each phase that runs programs takes the token and stops when it is cancelled.

use passk_runner::CancellationToken;
use tokio::signal::unix::{signal, SignalKind};

use crate::error::CommandError;

/// A token cancelled by the first of the signals. Later ones change nothing: the
/// handlers stay installed for the life of the process.
pub fn listen() -> Result<CancellationToken, CommandError> {
    let listen = |kind| signal(kind).map_err(|source| CommandError::Write { path: "signal handlers".into(), source });
    let (mut interrupt, mut terminate, mut hangup) =
        (listen(SignalKind::interrupt())?, listen(SignalKind::terminate())?, listen(SignalKind::hangup())?);
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
            _ = hangup.recv() => {}
        }
        cancel.cancel();
    });
    Ok(token)
}
