//! Shared by the black-box test binaries: run the built `sitebot` hermetically on a data directory,
//! start `sitebot serve` on a free port, and a client that trusts that server's certificate only.
#![allow(dead_code)] // each test binary uses a subset

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_sitebot");

/// `sitebot --data-dir DIR` with no `SITEBOT_*` variable of the caller's environment.
pub fn sitebot(data_dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--data-dir").arg(data_dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("SITEBOT_") {
            c.env_remove(k);
        }
    }
    c
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run sitebot")
}

/// Runs a command that must succeed and returns its stdout.
pub fn run_ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?} failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A running `sitebot serve`, killed when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `sitebot serve` on a free port and reads the address it prints before serving.
pub fn serve(data_dir: &Path) -> Server {
    serve_with_env(data_dir, &[])
}

/// As `serve`, with these `SITEBOT_*` variables set.
pub fn serve_with_env(data_dir: &Path, env: &[(&str, &str)]) -> Server {
    let mut child = sitebot(data_dir)
        .envs(env.iter().copied())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().strip_prefix("listening on https://127.0.0.1:").unwrap_or_else(|| panic!("unexpected first line: {line:?}")).parse().unwrap();
    Server { child, port }
}

/// A blocking client that trusts the data directory's self-signed certificate and nothing else.
pub fn client(data_dir: &Path) -> reqwest::blocking::Client {
    let pem = std::fs::read(data_dir.join("tls/cert.pem")).unwrap();
    reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap()
}
pub mod website;
