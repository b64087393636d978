//! The connections: HTTP/1.1 on each, with a limit on how long a client may take to
//! send a request's headers, and a graceful end.
//!
//! A client that sends its headers a byte at a time, or not at all, would otherwise
//! hold its connection, and a task, for as long as it liked: enough of them and no
//! trainer gets through. Past `--read-timeout` without whole headers the connection is
//! closed (a stalled body is answered 408 by the router, which reads it). On shutdown no
//! connection is taken any more, each one open finishes the request it is answering,
//! and one that is still sending its headers is closed by the same limit, so that a
//! drain ends.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};

/// Serves `app` on `listener` until `shutdown` completes, then waits for every
/// connection to end. At most `connections` are open at once: past it the next waits in
/// the kernel's backlog, so that a client opening connections by the thousand cannot
/// take the descriptors the workers need (a worker that cannot make a pipe is a fault
/// of the machine, and every program then a `SandboxError`).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    read_timeout: Duration,
    connections: usize,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (stop, stopping) = watch::channel(false);
    // Each connection holds a sender; the receiver ends once they all have.
    let (open, mut all_closed) = mpsc::channel::<()>(1);
    let room = Arc::new(Semaphore::new(connections.clamp(1, Semaphore::MAX_PERMITS)));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = room.clone().acquire_owned() => permit,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                // A connection reset before it was taken is its client's; anything else
                // (out of descriptors) passes with time.
                if !matches!(
                    error.kind(),
                    std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionRefused
                ) {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stopping = stopping.clone();
        let open = open.clone();
        tokio::spawn(async move {
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let mut told = false;
            loop {
                tokio::select! {
                    _ = connection.as_mut() => break,
                    _ = stopping.wait_for(|stop| *stop), if !told => {
                        connection.as_mut().graceful_shutdown();
                        told = true;
                    }
                }
            }
            drop(open);
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    drop(open);
    let _ = all_closed.recv().await;
    Ok(())
}
