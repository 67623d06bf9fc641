#![allow(dead_code)] // shared with tests/crash.rs and benches/webhooks.rs; each uses a subset
//! A real webhook receiver: a small poem server on 127.0.0.1:0 over plain HTTP that records every request
//! (headers, body, arrival time) and answers from a script (e.g. 500, 500, then 200), optionally slowly.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use poem::http::{HeaderMap, StatusCode};
use poem::listener::TcpAcceptor;
use poem::{Body, Request, Response, Server, handler};
use tokio::sync::Notify;

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    Status(u16),
    /// A status with `Retry-After: secs`.
    RetryAfter(u16, u64),
    /// `302 Found` to this location.
    Redirect(String),
}

#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    pub fn id(&self) -> String {
        self.header("webhook-id").to_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }
}

struct Inner {
    requests: Mutex<Vec<Received>>,
    script: Mutex<VecDeque<Reply>>,
    default: Mutex<Reply>,
    delay: Mutex<Duration>,
    arrived: Notify,
    /// Requests whose handling began (recorded ones are finished).
    started: std::sync::atomic::AtomicUsize,
}

#[derive(Clone)]
pub struct Receiver {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    inner: Arc<Inner>,
    _task: Arc<Task>,
}

#[handler]
async fn receive(req: &Request, body: Body, inner: poem::web::Data<&Arc<Inner>>) -> Response {
    let body = body.into_vec().await.unwrap_or_default();
    inner.started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let delay = *inner.delay.lock().unwrap();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let reply = inner.script.lock().unwrap().pop_front().unwrap_or_else(|| inner.default.lock().unwrap().clone());
    inner.requests.lock().unwrap().push(Received { path: req.uri().path().to_owned(), headers: req.headers().clone(), body, at: Instant::now() });
    inner.arrived.notify_waiters();
    match reply {
        Reply::Status(s) => Response::builder().status(StatusCode::from_u16(s).unwrap()).body(format!("answered {s}")),
        Reply::RetryAfter(s, secs) => Response::builder().status(StatusCode::from_u16(s).unwrap()).header("retry-after", secs.to_string()).body("later"),
        Reply::Redirect(to) => Response::builder().status(StatusCode::FOUND).header("location", to).body(""),
    }
}

impl Receiver {
    /// Starts a receiver that answers 200 to everything until scripted otherwise.
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let port = listener.local_addr().unwrap().port();
        let inner = Arc::new(Inner {
            requests: Mutex::new(Vec::new()),
            script: Mutex::new(VecDeque::new()),
            default: Mutex::new(Reply::Status(200)),
            delay: Mutex::new(Duration::ZERO),
            arrived: Notify::new(),
            started: Default::default(),
        });
        let app = poem::EndpointExt::data(poem::Route::new().at("/*path", receive), inner.clone());
        let acceptor = TcpAcceptor::from_tokio(listener).expect("acceptor");
        let handle = tokio::spawn(async move {
            let _ = Server::new_with_acceptor(acceptor).run(app).await;
        });
        Receiver { base: format!("http://127.0.0.1:{port}"), inner, _task: Arc::new(Task(handle)) }
    }

    /// The URL of a path on this receiver.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Answers these, in order, before falling back to the default.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().unwrap().extend(replies);
    }

    pub fn set_default(&self, reply: Reply) {
        *self.inner.default.lock().unwrap() = reply;
    }

    /// Waits this long before answering each request.
    pub fn set_delay(&self, d: Duration) {
        *self.inner.delay.lock().unwrap() = d;
    }

    pub fn requests(&self) -> Vec<Received> {
        self.inner.requests.lock().unwrap().clone()
    }

    /// Requests that arrived, including those still being answered.
    pub fn started(&self) -> usize {
        self.inner.started.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn count(&self) -> usize {
        self.inner.requests.lock().unwrap().len()
    }

    /// Distinct `webhook-id`s received so far.
    pub fn distinct_ids(&self) -> std::collections::BTreeSet<String> {
        self.inner.requests.lock().unwrap().iter().map(Received::id).collect()
    }

    /// Waits until `pred` holds for the requests received, or panics after `timeout`.
    pub async fn wait_until(&self, timeout: Duration, what: &str, pred: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.inner.arrived.notified();
            {
                let reqs = self.inner.requests.lock().unwrap();
                if pred(&reqs) {
                    return reqs.clone();
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let reqs = self.requests();
                if pred(&reqs) {
                    return reqs;
                }
                panic!("timed out after {timeout:?} waiting for {what}; received {} request(s)", reqs.len());
            }
        }
    }

    /// Waits for at least `n` requests.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        self.wait_until(timeout, &format!("{n} request(s)"), |r| r.len() >= n).await
    }
}

/// Stops the receiver's server when the last `Receiver` clone goes.
struct Task(tokio::task::JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A black-holed endpoint: accepts TCP connections on 127.0.0.1:0, reads nothing and never answers, so
/// every request to it runs into the sender's timeout. Connections are held until it is dropped.
#[derive(Clone)]
pub struct BlackHole {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    accepted: Arc<std::sync::atomic::AtomicUsize>,
    _task: Arc<Task>,
}

impl BlackHole {
    pub async fn start() -> BlackHole {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind black hole");
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        let handle = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                held.push(stream);
            }
        });
        BlackHole { base: format!("http://127.0.0.1:{port}"), accepted, _task: Arc::new(Task(handle)) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Connections accepted so far (each is one delivery attempt).
    pub fn connections(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}
