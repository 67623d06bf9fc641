//! `POST /v1/query/stream`: the answer of `/v1/query` as Server-Sent Events.
//!
//! Validation and retrieval happen before the 200, so their errors are ordinary problem+json
//! responses. Then the answer goes out as `token` events of one word each (with the whitespace that
//! follows it, so the fragments concatenate to exactly the `/v1/query` answer); a generative answer's
//! sentences go out as each is validated, the first while the model is still writing. The query is
//! recorded once the answer is complete, then `done` carries the sources; whatever becomes of the record
//! (not logged below the free-space watermark or over the daily cap, or a failed write), `done` follows,
//! as `/v1/query` answers 200 in those cases. A `:` comment every 15 s
//! keeps idle connections open; the response is never compressed or buffered by proxies
//! (`X-Accel-Buffering: no`, `Cache-Control: no-cache`).

use std::sync::Arc;
use std::time::Duration;

use poem::web::Data;
use poem::web::sse::Event;
use poem::{Response, handler};
use tokio::sync::mpsc;

use super::answer::AnswerBody;
use super::query::QueryRequest;
use crate::answering::{self, Asker};
use crate::app::AppState;
use crate::http::error::ApiError;
use crate::http::json::Json;
use crate::http::scope::Tenant;

/// Splits `text` into word-sized fragments (each word with the whitespace after it).
pub fn fragments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if !c.is_whitespace() && in_space {
            out.push(std::mem::take(&mut current));
        }
        in_space = c.is_whitespace();
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[handler]
pub async fn ask(
    req: &poem::Request,
    Data(state): Data<&Arc<AppState>>,
    Data(tenant): Data<&Tenant>,
    Json(body): Json<QueryRequest>,
) -> poem::Result<Response> {
    let asker = Asker { site: tenant.site.clone(), via_token: tenant.via_token };
    let mut pending = answering::ask(state, asker, body.into_request(req)?).await.map_err(ApiError::from)?;
    let (tx, mut rx) = mpsc::channel::<Event>(64);
    // The answer is driven to its end and recorded even when the visitor goes away mid-stream: a
    // question once answered is always in the log and the counters.
    tokio::spawn(async move {
        let token = |f: String| Event::message(f).event_type("token");
        // After the visitor has gone, sends fail at once and the answer is still finished and recorded.
        for f in fragments(&pending.answer().text) {
            let _ = tx.send(token(f)).await;
        }
        while let Some(sentence) = pending.next_sentence().await {
            // The space that joins two sentences goes with the next one's first word.
            let mut words = fragments(&sentence);
            if let Some(first) = words.first_mut() {
                first.insert(0, ' ');
            }
            for f in words {
                let _ = tx.send(token(f)).await;
            }
        }
        let token = pending.conversation_token().map(str::to_owned);
        let answer = pending.finish().await;
        match serde_json::to_string(&AnswerBody::done(&answer, token.as_deref())) {
            Ok(done) => {
                let _ = tx.send(Event::message(done).event_type("done")).await;
            }
            Err(e) => tracing::error!(error = %e, "cannot serialize the done event"),
        }
    });
    let events = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
    Ok(crate::http::sse::response(events, Duration::from_secs(15)))
}

#[cfg(test)]
mod tests {
    use super::fragments;

    #[test]
    fn fragments_concatenate_to_the_text() {
        let t = "Open from 8 am.  Call us [1]";
        let f = fragments(t);
        assert_eq!(f, vec!["Open ", "from ", "8 ", "am.  ", "Call ", "us ", "[1]"]);
        assert_eq!(f.concat(), t);
    }
}
