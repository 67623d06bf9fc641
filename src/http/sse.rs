//! Server-Sent Events responses. poem's `SSE` turns the events into an `AsyncRead` and back into body
//! frames through a `ReaderStream`, whose 4 KiB buffer every open stream keeps for its whole life; with
//! 10,000 idle hand-off streams open that was about 40 MiB (#26, docs/performance.md "Idle hand-off
//! streams"). Here each event is one body frame, and nothing is buffered between them.

use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use poem::web::sse::Event;
use poem::{Body, Response};

/// A `text/event-stream` response of `events`, with a comment line whenever nothing was sent for
/// `keep_alive` (so proxies and browsers keep an idle stream open).
pub fn response(events: impl Stream<Item = Event> + Send + 'static, keep_alive: Duration) -> Response {
    let mut events = events.boxed();
    let mut quiet = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
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
