//! The `sitebot` binary: parse the command line, run the command, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    limit_malloc_arenas();
    let cli = sitebot::cli::Cli::parse();
    match sitebot::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// glibc gives each thread that allocates its own arena, up to eight per core, and keeps what is freed
/// in it: the blocking pool's threads and ONNX Runtime then hold memory nobody uses. Two arenas measured
/// 30 MiB less peak memory under load at the same throughput. An operator's `MALLOC_ARENA_MAX` wins.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: called first thing in main, before any other thread exists; mallopt only sets a tunable.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}
