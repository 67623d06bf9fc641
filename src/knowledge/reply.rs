//! An answer on its way: quoted at once, or written by the operator's model sentence by sentence.
//!
//! [`Knowledge::reply`] retrieves the passages, then, when the site's answers may be generative and a
//! generator is configured, asks the model and waits only for its first supported sentence. If none
//! comes (endpoint skipped, busy, failing or slow, or its first sentence unsupported) the extractive
//! answer is given instead, with status 200 like any other. The route of a whole answer calls
//! [`Reply::finish`]; the stream route sends each sentence [`Reply::next_sentence`] yields as it is
//! validated, so both end with the same `answer`.

use std::sync::Arc;
use std::time::Instant;

use super::generate::client::Turn;
use super::generate::validate::Passage;
use super::generate::{Generated, Generator};
use super::{Answer, Knowledge, KnowledgeError, Question, extractive, sources};
use crate::domain::{AnswerMode, SiteId};
use crate::metrics::Stage;
use crate::store::Store;
use crate::store::queries::GenerationLog;

/// What a generative answer needs beyond the question: the generator, and the conversation so far
/// (this site's only: the turns come from a site-bound repository).
#[derive(Debug, Clone, Copy)]
pub struct Generation<'a> {
    pub generator: &'a Generator,
    pub history: &'a [Turn],
}

/// An answer whose text may still grow: `answer.answer` holds what has been validated so far.
#[derive(Debug)]
pub struct Reply {
    pub answer: Answer,
    more: Option<Generated>,
    started: Instant,
}

impl Reply {
    /// The next validated sentence, already appended to `answer.answer` (after a space); `None` once the
    /// answer is complete. An extractive reply is complete from the start.
    pub async fn next_sentence(&mut self) -> Option<String> {
        let generated = self.more.as_mut()?;
        match generated.next().await {
            Some(sentence) => {
                self.answer.answer.push(' ');
                self.answer.answer.push_str(&sentence);
                Some(sentence)
            }
            None => {
                if let (Some(log), Some((prompt, completion))) = (self.answer.generation.as_mut(), generated.usage) {
                    log.prompt_tokens = Some(prompt);
                    log.completion_tokens = Some(completion);
                }
                self.answer.latency_ms = self.started.elapsed().as_millis() as u64;
                self.more = None;
                None
            }
        }
    }

    /// Waits for the rest of the answer.
    pub async fn finish(mut self) -> Answer {
        while self.next_sentence().await.is_some() {}
        self.answer
    }
}

/// The passages as the model sees them: numbered like the sources, each with its heading.
fn numbered(passages: &[super::retrieve::Passage]) -> Vec<Passage> {
    passages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let text = if p.chunk.heading.is_empty() || p.chunk.text.starts_with(&p.chunk.heading) {
                p.chunk.text.clone()
            } else {
                format!("{}: {}", p.chunk.heading, p.chunk.text)
            };
            Passage { n: i + 1, text }
        })
        .collect()
}

impl Knowledge {
    /// Answers a question: generatively when `generation` is given and the model's first sentence is
    /// supported by the passages, by quoting otherwise.
    pub async fn reply(
        self: &Arc<Self>,
        store: &Store,
        site: &SiteId,
        q: &Question,
        conversation_id: String,
        generation: Option<Generation<'_>>,
    ) -> Result<Reply, KnowledgeError> {
        let started = Instant::now();
        let found = self.passages(store, site, q).await?;
        // The answer stage: composing the quoted answer, or the model's first supported sentence.
        let t = Instant::now();
        let generated = match generation {
            // The operator's own curated answer is given as written; with no passage there is nothing to
            // ground an answer in: the fallback, without asking the model.
            Some(g) if found.curated.is_none() && !found.passages.is_empty() => {
                g.generator.start(&q.text, &numbered(&found.passages), g.history).await.map(|started| (g.generator, started))
            }
            _ => None,
        };
        let Some((generator, generated)) = generated else {
            let answer = extractive(q, found, started, conversation_id);
            self.stages.observe(Stage::Answer, t.elapsed());
            return Ok(Reply { answer, more: None, started });
        };
        self.stages.observe(Stage::Answer, t.elapsed());
        let passages = found.passages;
        let first_sentence_ms = started.elapsed().as_millis() as u64;
        let answer = Answer {
            id: format!("qry_{}", ulid::Ulid::new()),
            answer: generated.first.clone(),
            sources: sources(passages),
            resolved: true,
            lang: q.lang.as_str().to_owned(),
            latency_ms: first_sentence_ms,
            conversation_id,
            mode: AnswerMode::Generative,
            generation: Some(GenerationLog { model: generator.model().to_owned(), prompt_tokens: None, completion_tokens: None, first_sentence_ms }),
        };
        Ok(Reply { answer, more: Some(generated), started })
    }
}
