//! `sitebot serve` as a child process (tokio), for the black-box tests that run and kill a real server:
//! `tests/crash.rs`, `tests/replication.rs` and `tests/api` (hand-off).
#![allow(dead_code)] // each test crate uses a part

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Starts `cmd` (the binary with its data directory and environment) as `serve` on a free loopback port;
/// returns the process and its HTTPS base URL, read from its banner.
pub async fn serve_on_free_port(mut cmd: Command) -> (Child, String) {
    let mut child = cmd.args(["serve", "--listen", "127.0.0.1:0"]).stdout(std::process::Stdio::piped()).spawn().expect("start sitebot serve");
    let base = base_url(&mut child).await;
    (child, base)
}

/// Reads `listening on https://ADDR` from the child's stdout (piped) and returns `https://ADDR`; the rest
/// of stdout is drained in the background so the server never blocks on a full pipe.
pub async fn base_url(child: &mut Child) -> String {
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
