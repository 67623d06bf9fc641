//! A real OpenAI-compatible chat-completions server on 127.0.0.1:0 (plain HTTP, one request per
//! connection): every request's JSON body is recorded, and each reply is written by a script that reads
//! the request (so it can cite the passage numbers the server actually sent), as a status and SSE pieces
//! written after given delays.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One reply: a status and (delay before, bytes) pieces; the connection closes after the last.
pub struct Script {
    pub status: u16,
    pub steps: Vec<(Duration, String)>,
}

type Writer = dyn Fn(&Value) -> Script + Send + Sync;

#[derive(Debug, Clone)]
pub struct Call {
    pub body: Value,
    /// When the last piece of the reply was written.
    pub finished: Option<Instant>,
}

#[derive(Clone)]
pub struct ModelServer {
    /// `http://127.0.0.1:PORT/v1`
    pub base: String,
    calls: Arc<Mutex<Vec<Call>>>,
    script: Arc<Mutex<Arc<Writer>>>,
}

/// One streamed completion chunk carrying `content`.
pub fn chunk(content: &str) -> String {
    format!("data: {}\n\n", serde_json::json!({"choices": [{"index": 0, "delta": {"content": content}}]}))
}

/// The usage chunk a server sends last when asked for `include_usage`, then `[DONE]`.
pub fn done(prompt_tokens: u64, completion_tokens: u64) -> String {
    let usage = serde_json::json!({"choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}});
    format!("data: {usage}\n\ndata: [DONE]\n\n")
}

/// The system prompt of a request.
pub fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or("").to_owned()
}

/// The number of the passage in the request's prompt that contains `text`.
pub fn passage_with(body: &Value, text: &str) -> usize {
    let prompt = system_prompt(body);
    let line = prompt.lines().find(|l| l.starts_with('[') && l.contains(text)).unwrap_or_else(|| panic!("no passage holds {text:?}:\n{prompt}"));
    line[1..line.find(']').unwrap()].parse().unwrap()
}

/// A whole reply streamed at once: `text` split into a few pieces, then usage and `[DONE]`.
pub fn says(text: &str) -> Script {
    let mut steps: Vec<(Duration, String)> = text.split_inclusive(' ').collect::<Vec<_>>().chunks(3).map(|w| (Duration::ZERO, chunk(&w.concat()))).collect();
    steps.push((Duration::ZERO, done(120, 30)));
    Script { status: 200, steps }
}

impl ModelServer {
    pub async fn start(script: impl Fn(&Value) -> Script + Send + Sync + 'static) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        let server = ModelServer { base, calls: Default::default(), script: Arc::new(Mutex::new(Arc::new(script))) };
        let s = server.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(s.clone().serve(conn));
            }
        });
        server
    }

    /// Replaces the script for the requests to come.
    pub fn set(&self, script: impl Fn(&Value) -> Script + Send + Sync + 'static) {
        *self.script.lock().unwrap() = Arc::new(script);
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    async fn serve(self, mut conn: tokio::net::TcpStream) {
        let mut buf = Vec::new();
        let mut piece = [0u8; 8192];
        let body = loop {
            let Ok(n) = conn.read(&mut piece).await else { return };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&piece[..n]);
            let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
            let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
            let len = head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok()).unwrap_or(0);
            if buf.len() >= head_end + 4 + len {
                break serde_json::from_slice::<Value>(&buf[head_end + 4..head_end + 4 + len]).unwrap_or(Value::Null);
            }
        };
        let index = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(Call { body: body.clone(), finished: None });
            calls.len() - 1
        };
        let writer = self.script.lock().unwrap().clone();
        let script = writer(&body);
        let head = format!("HTTP/1.1 {} X\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n", script.status);
        if conn.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for (delay, bytes) in script.steps {
            tokio::time::sleep(delay).await;
            if conn.write_all(bytes.as_bytes()).await.is_err() || conn.flush().await.is_err() {
                break;
            }
        }
        self.calls.lock().unwrap()[index].finished = Some(Instant::now());
        let _ = conn.shutdown().await;
    }
}
