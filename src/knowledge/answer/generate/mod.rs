//! Optional generative answers: an OpenAI-compatible model writes the answer from the numbered
//! passages, and each sentence is shown only once the support test has passed it.
//!
//! - [`validate`]: the support test and the streaming sentence splitter.
//! - [`client`]: the streaming chat-completions client, under the webhook endpoint policy.
//! - [`circuit`]: skips an endpoint that keeps failing.
//!
//! [`Generator::start`] resolves once the first sentence has passed (or the attempt has failed), so a
//! caller can stream the answer as it is written and still fall back to the extractive answer when the
//! model said nothing supportable. The first sentence that fails the test ends the answer there: what
//! follows an invented sentence tends to build on it.

pub mod circuit;
pub mod client;
#[cfg(test)]
mod fake;
pub mod validate;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::config::AnswerConfig;
use crate::domain::Invalid;
use crate::ratelimit::Clock;
use circuit::CircuitBreaker;
use client::{ChatClient, ChatRequest, ClientError, Event, Exchange};
use validate::{NumberedPassage, SentenceSplitter, check};

/// Consecutive failed generations that open the circuit.
const FAILURES_TO_OPEN: u32 = 3;
/// How long an open circuit skips the endpoint before one probe.
const COOL_DOWN: Duration = Duration::from_secs(30);

/// What the model sent that the caller needs: validated sentences, and the token counts it reported.
#[derive(Debug)]
enum Piece {
    Sentence(String),
    Usage { prompt_tokens: u64, completion_tokens: u64 },
}

/// A generative answer in progress: its first supported sentence, and the ones still to come.
#[derive(Debug)]
pub struct Generated {
    pub first: String,
    rest: mpsc::Receiver<Piece>,
    /// (prompt, completion) tokens, once the server has reported them.
    pub usage: Option<(u64, u64)>,
}

impl Generated {
    /// The next supported sentence, or `None` when the answer is over (the model finished, a sentence
    /// failed the support test, the endpoint failed or the deadline passed).
    pub async fn next(&mut self) -> Option<String> {
        loop {
            match self.rest.recv().await? {
                Piece::Sentence(s) => return Some(s),
                Piece::Usage { prompt_tokens, completion_tokens } => self.usage = Some((prompt_tokens, completion_tokens)),
            }
        }
    }

    /// Waits for the whole answer: the supported sentences joined by spaces.
    pub async fn collect(mut self) -> String {
        let mut text = std::mem::take(&mut self.first);
        while let Some(s) = self.next().await {
            text.push(' ');
            text.push_str(&s);
        }
        text
    }
}

/// The model, the support test and the circuit breaker together.
pub struct Generator {
    client: ChatClient,
    breaker: Arc<CircuitBreaker>,
    /// `answer.max_concurrency`: a question beyond it gets the extractive answer rather than a wait.
    permits: Arc<Semaphore>,
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator").field("client", &self.client).field("breaker", &self.breaker).finish_non_exhaustive()
    }
}

impl Generator {
    pub fn new(config: &AnswerConfig, clock: Arc<dyn Clock>) -> Result<Self, Invalid> {
        Ok(Self {
            client: ChatClient::new(config)?,
            breaker: Arc::new(CircuitBreaker::new(clock, FAILURES_TO_OPEN, COOL_DOWN)),
            permits: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
        })
    }

    /// The model named in every request (`answer.model`), for the query log.
    pub fn model(&self) -> &str {
        self.client.model()
    }

    pub fn breaker(&self) -> &CircuitBreaker {
        &self.breaker
    }

    /// Asks the model; resolves with the first supported sentence, or `None` when the endpoint is
    /// skipped, busy or failing, or its first sentence fails the support test: then the caller gives
    /// the extractive answer.
    pub async fn start(&self, question: &str, passages: &[NumberedPassage], turns: &[Exchange]) -> Option<Generated> {
        // The permit first: a half-open circuit lets exactly one probe through, which must not then
        // be lost to a full semaphore.
        let permit = self.permits.clone().try_acquire_owned().ok()?;
        if !self.breaker.allow() {
            return None;
        }
        let events = self.client.stream(&ChatRequest { question, passages, turns });
        let (tx, mut rx) = mpsc::channel(16);
        tokio::spawn(pump(events, passages.to_vec(), tx, self.breaker.clone(), permit));
        let mut usage = None;
        let first = loop {
            match rx.recv().await? {
                Piece::Sentence(s) => break s,
                Piece::Usage { prompt_tokens, completion_tokens } => usage = Some((prompt_tokens, completion_tokens)),
            }
        };
        Some(Generated { first, rest: rx, usage })
    }
}

/// Splits the model's fragments into sentences and forwards those that pass, until one fails, the
/// stream ends, or the reader goes away. Reports the endpoint's health to the breaker.
async fn pump(
    mut events: mpsc::Receiver<Result<Event, ClientError>>,
    passages: Vec<NumberedPassage>,
    tx: mpsc::Sender<Piece>,
    breaker: Arc<CircuitBreaker>,
    _permit: OwnedSemaphorePermit,
) {
    let mut splitter = SentenceSplitter::default();
    let pass = |sentence: String| {
        let verdict = check(&sentence, &passages);
        if !verdict.is_supported() {
            tracing::debug!(?verdict, %sentence, "generated sentence not shown");
        }
        verdict.is_supported().then_some(sentence)
    };
    loop {
        match events.recv().await {
            Some(Ok(Event::Text(fragment))) => {
                for sentence in splitter.push(&fragment) {
                    // A failed sentence or a gone reader: dropping `events` cancels the request.
                    let Some(s) = pass(sentence) else { return breaker.record_success() };
                    if tx.send(Piece::Sentence(s)).await.is_err() {
                        return breaker.record_success();
                    }
                }
            }
            Some(Ok(Event::Usage { prompt_tokens, completion_tokens })) => {
                let _ = tx.send(Piece::Usage { prompt_tokens, completion_tokens }).await;
            }
            Some(Err(error)) => {
                tracing::warn!(%error, "answer generation failed");
                return breaker.record_failure();
            }
            None => {
                if let Some(s) = splitter.finish().and_then(pass) {
                    let _ = tx.send(Piece::Sentence(s)).await;
                }
                return breaker.record_success();
            }
        }
    }
}

#[cfg(test)]
mod tests;
