//! A scripted OpenAI-compatible server on 127.0.0.1:0 for the tests: it answers one request with a
//! status and body pieces written after given delays, and hands back the request body it read.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub struct Script {
    pub status: u16,
    /// (delay before, bytes) pairs written in order; the connection closes after the last one.
    pub steps: Vec<(Duration, String)>,
}

/// One SSE event carrying `content` as a completion chunk.
pub fn chunk(content: &str) -> String {
    format!("data: {}\n\n", serde_json::json!({"choices": [{"index": 0, "delta": {"content": content}}]}))
}

/// Starts the server; returns its base URL (`http://127.0.0.1:PORT/v1`) and the request body to come.
pub async fn serve(script: Script) -> (String, oneshot::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut conn, _)) = listener.accept().await else { return };
        let mut buf = Vec::new();
        let mut piece = [0u8; 4096];
        // Read the head, then as many body bytes as Content-Length says.
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
                break String::from_utf8_lossy(&buf[head_end + 4..head_end + 4 + len]).into_owned();
            }
        };
        let _ = tx.send(body);
        let head = format!("HTTP/1.1 {} X\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n", script.status);
        if conn.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for (delay, bytes) in script.steps {
            tokio::time::sleep(delay).await;
            if conn.write_all(bytes.as_bytes()).await.is_err() || conn.flush().await.is_err() {
                return;
            }
        }
        let _ = conn.shutdown().await;
    });
    (base, rx)
}
