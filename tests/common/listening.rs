//! The address `sitebot serve` prints before it serves, read from its piped stdout under tokio, for the
//! black-box tests that run the binary from async code (`tests/crash.rs`, `tests/replication.rs`).

use tokio::io::{AsyncBufReadExt, BufReader};

/// Reads `listening on https://ADDR` from the child's stdout (piped) and returns `https://ADDR`; the rest
/// of stdout is drained in the background so the server never blocks on a full pipe.
pub async fn base_url(child: &mut tokio::process::Child) -> String {
    let mut lines = BufReader::new(child.stdout.take().expect("stdout piped")).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(addr) = line.strip_prefix("listening on https://") {
            let base = format!("https://{}", addr.trim());
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return base;
        }
    }
    panic!("sitebot serve exited without its listening line");
}
