//! A streaming client for OpenAI-compatible chat completions (`POST {base}/chat/completions` with
//! `stream: true`), as served by OpenAI, vLLM, llama.cpp, Ollama and others.
//!
//! The endpoint is operator-configured and outbound, so it follows the webhook URL policy
//! ([`check_endpoint`]): https and a public address unless `answer.allow_private_networks`. The reply
//! arrives as server-sent events; each `data:` line holds a chunk whose `choices[0].delta.content` is
//! the next fragment, and `data: [DONE]` ends it. One deadline covers the whole exchange, from connect to
//! the last fragment, because the caller is a person waiting for an answer.

use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::{AnswerConfig, Secret};
use crate::domain::{EndpointNames, Invalid, check_endpoint};
use crate::knowledge::answer::generate::validate::NumberedPassage;
use crate::net::checked_client;

/// An earlier exchange of the conversation.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub question: String,
    pub answer: String,
}

/// What the model is asked.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub question: &'a str,
    pub passages: &'a [NumberedPassage],
    pub turns: &'a [Exchange],
}

/// One item of the reply stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Text(String),
    /// Token counts, when the server reports them (usually in the last chunk).
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("the answer endpoint is unreachable: {0}")]
    Unreachable(String),
    #[error("the answer endpoint answered {0}")]
    Status(u16),
    #[error("the answer endpoint sent a malformed stream: {0}")]
    Malformed(String),
    #[error("the answer endpoint did not finish in time")]
    Timeout,
}

/// The instructions that bind the model to the passages.
pub const SYSTEM_PROMPT: &str = "You answer questions about a website using only the numbered passages below and the earlier turns of \
this conversation. Do not use any other knowledge. End every sentence with the number of the passage it comes from, in \
square brackets, like [1] or [2][3]; never cite a passage that does not say what the sentence says, and copy numbers, \
prices, times and names exactly as the passages write them. If the passages do not answer the question, say so in one \
sentence and do not guess. Answer in the language of the question, briefly.";

/// `{base}/chat/completions`, after the endpoint policy has accepted `base`.
pub fn endpoint(base: &str, config: &AnswerConfig) -> Result<url::Url, Invalid> {
    let base = check_endpoint(base, &crate::domain::NetworkPolicy::answer(config), EndpointNames::ANSWER)?;
    let joined = format!("{}/chat/completions", base.as_str().trim_end_matches('/'));
    url::Url::parse(&joined).map_err(|_| Invalid(format!("`{joined}` is not a URL")))
}

/// The chat-completions client.
#[derive(Debug, Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    url: url::Url,
    model: String,
    api_key: Option<Secret>,
    timeout: Duration,
}

impl ChatClient {
    pub fn new(config: &AnswerConfig) -> Result<Self, Invalid> {
        let base = config.openai_base_url.as_deref().ok_or_else(|| Invalid("answer.openai_base_url is not set".into()))?;
        let url = endpoint(base, config)?;
        let http =
            checked_client(crate::domain::NetworkPolicy::answer(config), "answer.allow_private_networks", concat!("sitebot/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| Invalid(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self { http, url, model: config.model.clone(), api_key: config.api_key.clone(), timeout: Duration::from_secs(config.timeout_secs) })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of a request: the system prompt with the passages, the earlier turns, the question.
    pub fn body(&self, req: &ChatRequest<'_>) -> serde_json::Value {
        let mut system = String::from(SYSTEM_PROMPT);
        system.push_str("\n\nPassages:\n");
        for p in req.passages {
            system.push_str(&format!("[{}] {}\n", p.n, p.text));
        }
        let mut messages = vec![serde_json::json!({"role": "system", "content": system})];
        for t in req.turns {
            messages.push(serde_json::json!({"role": "user", "content": t.question}));
            messages.push(serde_json::json!({"role": "assistant", "content": t.answer}));
        }
        messages.push(serde_json::json!({"role": "user", "content": req.question}));
        serde_json::json!({
            "model": self.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0,
            "messages": messages,
        })
    }

    /// Checks the endpoint end to end (`doctor`): a tiny streamed completion must start within the
    /// timeout. Says what answered, or why it failed.
    pub async fn probe(&self) -> Result<String, ClientError> {
        let body = serde_json::json!({
            "model": self.model, "stream": true, "max_tokens": 4, "temperature": 0,
            "messages": [{"role": "user", "content": "Reply with the word OK."}],
        });
        let mut request = self.http.post(self.url.clone()).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose());
        }
        let (tx, mut rx) = mpsc::channel(32);
        let started = std::time::Instant::now();
        let outcome = tokio::time::timeout(self.timeout, async {
            let sent = run(request, &tx).await;
            drop(tx);
            sent
        });
        match outcome.await {
            Err(_) => Err(ClientError::Timeout),
            Ok(Err(e)) => Err(e),
            Ok(Ok(())) => {
                let mut text = String::new();
                while let Ok(Ok(Event::Text(t))) = rx.try_recv() {
                    text.push_str(&t);
                }
                Ok(format!("{} ({}) answered {:?} in {} ms", self.url, self.model, text.trim(), started.elapsed().as_millis()))
            }
        }
    }

    /// Starts a generation; fragments arrive on the receiver as the server streams them. The stream
    /// ends after the last fragment, or after one error. Dropping the receiver cancels the request.
    pub fn stream(&self, req: &ChatRequest<'_>) -> mpsc::Receiver<Result<Event, ClientError>> {
        let (tx, rx) = mpsc::channel(32);
        let mut request = self.http.post(self.url.clone()).json(&self.body(req));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose());
        }
        let deadline = Instant::now() + self.timeout;
        tokio::spawn(async move {
            let outcome = tokio::time::timeout_at(deadline, run(request, &tx)).await;
            let err = match outcome {
                Ok(Ok(())) => return,
                Ok(Err(e)) => e,
                Err(_) => ClientError::Timeout,
            };
            let _ = tx.send(Err(err)).await;
        });
        rx
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Sends the request and forwards its events until `[DONE]`. A closed receiver ends it quietly.
async fn run(request: reqwest::RequestBuilder, tx: &mpsc::Sender<Result<Event, ClientError>>) -> Result<(), ClientError> {
    let response = request.send().await.map_err(|e| ClientError::Unreachable(e.without_url().to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ClientError::Status(status.as_u16()));
    }
    let mut body = response.bytes_stream();
    let mut buf: Vec<u8> = Vec::new();
    while let Some(bytes) = body.next().await {
        let bytes = bytes.map_err(|e| ClientError::Unreachable(e.without_url().to_string()))?;
        buf.extend_from_slice(&bytes);
        while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            let line = std::str::from_utf8(&line).map_err(|_| ClientError::Malformed("a line is not UTF-8".into()))?.trim();
            // Blank lines separate events; `:` lines are comments (keep-alives); other fields are unused.
            let Some(data) = line.strip_prefix("data:") else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                return Ok(());
            }
            for event in parse(data)? {
                if tx.send(Ok(event)).await.is_err() {
                    return Ok(());
                }
            }
        }
    }
    Err(ClientError::Malformed("the stream ended before [DONE]".into()))
}

fn parse(data: &str) -> Result<Vec<Event>, ClientError> {
    let chunk: Chunk = serde_json::from_str(data).map_err(|e| ClientError::Malformed(format!("a chunk is not a completion chunk: {e}")))?;
    let mut events = Vec::new();
    if let Some(text) = chunk.choices.into_iter().next().and_then(|c| c.delta.content).filter(|t| !t.is_empty()) {
        events.push(Event::Text(text));
    }
    if let Some(u) = chunk.usage {
        events.push(Event::Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens });
    }
    Ok(events)
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
