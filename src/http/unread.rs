//! The part of a request body its handler left unread, and reading it before an early answer.
//!
//! An answer sent while the request body is still arriving is lost by common clients:
//! - on HTTP/2 it ends the stream with `RST_STREAM(NO_ERROR)` (RFC 9113 section 8.1 allows it), and
//!   libcurl 7.88 (Debian 12) then drops the response it had already received ("Stream error in the
//!   HTTP/2 framing layer"), almost always for bodies of a megabyte or more;
//! - on HTTP/1.1 the connection is closed with unread bytes in the socket, so the kernel resets it and the
//!   client, still writing, never reads the answer.
//!
//! So the edge reads and discards what is left of the body before such an answer goes out, as nginx's
//! lingering close does: no more than `server.discard_body_bytes` in all (by the declared length when
//! there is one, else as it is counted), and only until the request's body deadline. The bytes are
//! dropped as they arrive, so the cost is the bandwidth and the wait, never memory; a larger body, or one
//! the client sends only after `100 Continue`, is left alone: the answer goes out at once and the stream
//! or connection is reset as before.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use poem::http::header;
use poem::{Body, Request};
use tokio::time::Instant;

type BodyStream = Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>;

struct Shared {
    /// `None` once the body ended, failed, or was taken to be drained.
    stream: Option<BodyStream>,
    read: usize,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// A request body whose reader is counted, so what is left can be read afterwards.
pub struct UnreadBody {
    shared: Arc<Mutex<Shared>>,
    declared: Option<u64>,
    expects_continue: bool,
}

impl UnreadBody {
    /// Puts a counting body in the request's place and keeps a handle on what it leaves.
    pub fn track(req: &mut Request) -> Self {
        let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
        let expects_continue = req.headers().get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        let stream: BodyStream = Box::pin(req.take_body().into_bytes_stream());
        let shared = Arc::new(Mutex::new(Shared { stream: Some(stream), read: 0 }));
        let reader = shared.clone();
        req.set_body(Body::from_bytes_stream(futures_util::stream::poll_fn(move |cx| {
            let mut s = lock(&reader);
            let Some(stream) = s.stream.as_mut() else { return Poll::Ready(None) };
            let next = stream.as_mut().poll_next(cx);
            match &next {
                Poll::Ready(Some(Ok(chunk))) => s.read += chunk.len(),
                Poll::Ready(_) => s.stream = None,
                Poll::Pending => {}
            }
            next
        })));
        UnreadBody { shared, declared, expects_continue }
    }

    /// Reads and discards what is left of the body, as long as the whole body stays within `limit`
    /// bytes and `deadline` has not passed. True when the body was read to its end.
    pub async fn drain(self, limit: usize, deadline: Instant) -> bool {
        let (stream, read) = {
            let mut s = lock(&self.shared);
            (s.stream.take(), s.read)
        };
        let Some(mut stream) = stream else { return true };
        if self.declared.is_some_and(|n| n > limit as u64) || (self.expects_continue && read == 0) {
            return false;
        }
        let mut read = read;
        let rest = async {
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(chunk) => read += chunk.len(),
                    Err(_) => return false,
                }
                if read > limit {
                    return false;
                }
            }
            true
        };
        tokio::time::timeout_at(deadline, rest).await.unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request(body: Body, headers: &[(&str, &str)]) -> Request {
        let mut b = Request::builder().method(poem::http::Method::POST);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(body)
    }

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn what_the_handler_left_is_drained_within_the_limit() {
        let mut req = request(Body::from_vec(b"{\"question\":\"hi\"}".to_vec()), &[("content-length", "17")]);
        let unread = UnreadBody::track(&mut req);
        drop(req);
        assert!(unread.drain(64, later()).await);

        let mut req = request(Body::from_vec(b"0123456789".to_vec()), &[]);
        let unread = UnreadBody::track(&mut req);
        assert_eq!(req.take_body().into_vec().await.unwrap(), b"0123456789");
        assert!(unread.drain(4, later()).await, "a body read to its end needs nothing more");

        let chunks = futures_util::stream::iter((0..10).map(|_| Ok::<_, io::Error>(Bytes::from_static(b"0123456789"))));
        let mut req = request(Body::from_bytes_stream(chunks), &[]);
        let unread = UnreadBody::track(&mut req);
        assert!(!unread.drain(64, later()).await, "more than the limit is not read");
    }

    #[tokio::test]
    async fn large_declared_bodies_and_expect_continue_are_left_alone() {
        let mut req = request(Body::from_vec(b"x".to_vec()), &[("content-length", "100000")]);
        assert!(!UnreadBody::track(&mut req).drain(64, later()).await);
        let mut req = request(Body::from_vec(b"x".to_vec()), &[("expect", "100-continue")]);
        assert!(!UnreadBody::track(&mut req).drain(64, later()).await);
    }

    #[tokio::test]
    async fn a_body_that_does_not_come_is_given_up_at_the_deadline() {
        let mut req = request(Body::from_bytes_stream(futures_util::stream::pending::<io::Result<Bytes>>()), &[]);
        let unread = UnreadBody::track(&mut req);
        assert!(!unread.drain(64, Instant::now() + Duration::from_millis(50)).await);
    }
}
