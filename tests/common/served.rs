//! `sitebot serve` as a child process (tokio), for the tests that kill a real server: shared by
//! `tests/crash.rs` and `tests/api` (hand-off).

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Starts `cmd` (the binary with its data directory and environment) as `serve` on a free loopback port;
/// returns the process and its HTTPS base URL, read from its banner. Its stdout is drained after.
pub async fn serve_on_free_port(mut cmd: Command) -> (Child, String) {
    let mut child = cmd.args(["serve", "--listen", "127.0.0.1:0"]).stdout(std::process::Stdio::piped()).spawn().expect("start sitebot serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(addr) = line.strip_prefix("listening on https://") {
            let base = format!("https://{}", addr.trim());
            // Keep draining stdout so the server never blocks on a full pipe.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return (child, base);
        }
    }
    panic!("sitebot serve exited without its listening line");
}
