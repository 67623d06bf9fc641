//! Shared by the benches that measure `/v1/query` beside other load; each includes it with `#[path]`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use sitebot::domain::SiteId;

/// `/v1/query` at concurrency 32 for a window, asking `questions` in turn: requests answered 200, and the others (a pooled
/// connection the server closed while idle, or a status other than 200), which are not counted.
pub async fn query_window(client: &reqwest::Client, base: &str, site: SiteId, window: Duration, questions: &'static [&'static str]) -> (usize, usize) {
    let (done, failed, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let mut tasks = Vec::new();
    for w in 0..32 {
        let (client, url, done, failed, stop) = (client.clone(), format!("{base}/v1/query"), done.clone(), failed.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                let sent =
                    client.post(&url).header("X-Site-Id", site.to_string()).json(&serde_json::json!({"question": questions[i % questions.len()]})).send().await;
                i += 1;
                let ok = match sent {
                    Ok(resp) => resp.status() == 200 && resp.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if ok { &done } else { &failed }.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(window).await;
    stop.store(true, Ordering::Relaxed);
    let counted = (done.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    for t in tasks {
        t.await.unwrap();
    }
    counted
}
