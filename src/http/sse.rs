//! Server-Sent Events responses. poem's `SSE` turns the events into an `AsyncRead` and back into body
//! frames through a `ReaderStream`, whose 4 KiB buffer every open stream keeps for its whole life; with
//! 10,000 idle hand-off streams open that was about 40 MiB (#26, docs/performance.md "Idle hand-off
//! streams"). Here each event is one body frame, and nothing is buffered between them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use poem::web::sse::Event;
use poem::{Body, Response};

/// Streams opened so far: spreads their first comments (see [`first_comment`]).
static OPENED: AtomicU64 = AtomicU64::new(0);

/// When the `n`th stream opened sends its first comment: after between half and all of `keep_alive`,
/// spread evenly by the golden ratio. Streams opened together (every widget reconnecting after a
/// restart) would otherwise write their comments in one burst each interval, for as long as they stay
/// idle; spread once, they stay apart.
fn first_comment(n: u64, keep_alive: Duration) -> Duration {
    const GOLDEN: f64 = 0.618_033_988_749_894_9;
    keep_alive.mul_f64(0.5 + 0.5 * (n as f64 * GOLDEN).fract())
}

/// A `text/event-stream` response of `events`, with a comment line whenever nothing was sent for
/// `keep_alive` (so proxies keep an idle stream open; the first comes sooner, see [`first_comment`]).
pub fn response(events: impl Stream<Item = Event> + Send + 'static, keep_alive: Duration) -> Response {
    let mut events = events.boxed();
    let first = first_comment(OPENED.fetch_add(1, Ordering::Relaxed), keep_alive);
    let mut quiet = tokio::time::interval_at(tokio::time::Instant::now() + first, keep_alive);
    // A stream the client reads slowly owes one comment, not every one it missed.
    quiet.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let body = futures_util::stream::poll_fn(move |cx| {
        if let Poll::Ready(event) = events.poll_next_unpin(cx) {
            quiet.reset();
            return Poll::Ready(event.map(|e| Ok::<_, std::io::Error>(Bytes::from(e.to_string()))));
        }
        quiet.poll_tick(cx).map(|_| Some(Ok(Bytes::from_static(b":\n\n"))))
    });
    Response::builder()
        .content_type("text/event-stream")
        .header("X-Accel-Buffering", "no")
        .header("Cache-Control", "no-cache")
        .body(Body::from_bytes_stream(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_comments_are_spread_over_the_second_half_of_the_interval() {
        let every = Duration::from_secs(20);
        let firsts: Vec<Duration> = (0..1000).map(|n| first_comment(n, every)).collect();
        assert!(firsts.iter().all(|d| *d >= every / 2 && *d <= every), "within half to all of the interval");
        // Evenly: each tenth of that half holds about a tenth of the streams.
        let mut tenths = [0usize; 10];
        for d in &firsts {
            tenths[(((d.as_secs_f64() - 10.0) / 10.0 * 10.0) as usize).min(9)] += 1;
        }
        assert!(tenths.iter().all(|n| (90..=110).contains(n)), "{tenths:?}");
    }
}
