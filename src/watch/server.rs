//! The `--listen` endpoint: tiny_http (a small, well-kept HTTP/1.1 server) answering
//! `GET /metrics` with the OpenMetrics text. Its threads (the one here and those
//! tiny_http starts from it, which inherit its CPUs and policy) run at SCHED_OTHER on the
//! CPUs that are not measured, so a scrape never takes a measured CPU's time.

use super::metrics::{render, WatchMetrics};
use anyhow::Context;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The OpenMetrics text format's content type.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The running endpoint; dropping it stops it.
pub struct Endpoint {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Puts the calling thread on `cpus` (when any) at SCHED_OTHER: a helper thread of the
/// watch, never on a measured CPU, never real-time.
pub fn helper_thread_placement(cpus: &[usize]) {
    if !cpus.is_empty() {
        let _ = crate::sys::affinity::pin_current_thread_to(cpus);
    }
    let _ = crate::sys::sched::set_current_thread(crate::sys::sched::Policy::Other, 0);
}

impl Endpoint {
    /// Binds `addr` (the error names it) and serves until dropped.
    pub fn start(
        addr: SocketAddr,
        metrics: Arc<WatchMetrics>,
        cpus: Vec<usize>,
    ) -> anyhow::Result<Self> {
        let done = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("latscope-metrics".into())
            .spawn(move || {
                helper_thread_placement(&cpus);
                let server = match tiny_http::Server::http(addr) {
                    Ok(s) => {
                        let _ = tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                };
                serve(&server, &metrics, &flag);
            })
            .context("starting the metrics endpoint's thread")?;
        let bound = rx
            .recv()
            .map_err(|_| "the endpoint's thread ended".to_string())
            .and_then(|r| r);
        match bound {
            Ok(()) => Ok(Self {
                done,
                thread: Some(thread),
            }),
            Err(reason) => {
                let _ = thread.join();
                Err(crate::error::invalid(
                    "--listen",
                    &addr.to_string(),
                    format!("cannot listen there ({reason}); choose a free port on an address of this machine"),
                )
                .into())
            }
        }
    }
}

fn serve(server: &tiny_http::Server, metrics: &Arc<WatchMetrics>, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let path = request.url().split('?').next().unwrap_or("");
        let response = match (request.method(), path) {
            (tiny_http::Method::Get, "/metrics") => match render(metrics) {
                Ok(text) => {
                    tiny_http::Response::from_string(text).with_header(header(CONTENT_TYPE))
                }
                Err(_) => {
                    tiny_http::Response::from_string("encoding failed\n").with_status_code(500)
                }
            },
            _ => tiny_http::Response::from_string("latscope watch: GET /metrics\n")
                .with_status_code(404),
        };
        let _ = request.respond(response);
    }
}

fn header(content_type: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type.as_bytes())
        .expect("a valid header")
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
