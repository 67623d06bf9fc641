//! An answer on its way: quoted at once, or written by the operator's model sentence by sentence.
//!
//! [`reply`] takes what retrieval found; when the site's answers may be generative and a generator is
//! configured, it asks the model and waits only for its first supported sentence. If none comes (endpoint
//! skipped, busy, failing or slow, or its first sentence unsupported) the extractive answer is given
//! instead, with status 200 like any other. The route of a whole answer calls [`Reply::finish`]; the
//! stream route sends each sentence [`Reply::next_sentence`] yields as it is validated, so both end with
//! the same text.

use std::time::Instant;

use super::generate::client::Exchange;
use super::generate::validate::NumberedPassage;
use super::generate::{Generated, Generator};
use super::{Answer, extractive, sources};
use crate::domain::{AnswerMode, ConversationId, QueryId};
use crate::knowledge::search::Passage;
use crate::knowledge::{Found, Question};
use crate::store::queries::GenerationLog;

/// What a generative answer needs beyond the question: the generator, and the conversation so far
/// (this site's only: the turns come from a site-bound repository).
#[derive(Debug, Clone, Copy)]
pub struct Generation<'a> {
    pub generator: &'a Generator,
    pub history: &'a [Exchange],
}

/// An answer whose text may still grow: `answer.text` holds what has been validated so far.
#[derive(Debug)]
pub struct Reply {
    pub answer: Answer,
    more: Option<Generated>,
    started: Instant,
}

impl Reply {
    /// The next validated sentence, already appended to `answer.text` (after a space); `None` once the
    /// answer is complete. An extractive reply is complete from the start.
    pub async fn next_sentence(&mut self) -> Option<String> {
        let generated = self.more.as_mut()?;
        match generated.next().await {
            Some(sentence) => {
                self.answer.text.push(' ');
                self.answer.text.push_str(&sentence);
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
fn numbered(passages: &[Passage]) -> Vec<NumberedPassage> {
    passages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let text = if p.chunk.heading.is_empty() || p.chunk.text.starts_with(&p.chunk.heading) {
                p.chunk.text.clone()
            } else {
                format!("{}: {}", p.chunk.heading, p.chunk.text)
            };
            NumberedPassage { n: i + 1, text }
        })
        .collect()
}

/// Answers from what retrieval found (the question asked at `started`): generatively when `generation`
/// is given and the model's first sentence is supported by the passages, by quoting otherwise.
pub async fn reply(q: &Question, found: Found, conversation_id: ConversationId, generation: Option<Generation<'_>>, started: Instant) -> Reply {
    let generated = match generation {
        // The operator's own curated answer is given as written; with no passage there is nothing to
        // ground an answer in: the fallback, without asking the model.
        Some(g) if found.curated.is_none() && !found.passages.is_empty() => {
            g.generator.start(&q.text, &numbered(&found.passages), g.history).await.map(|started| (g.generator, started))
        }
        _ => None,
    };
    let Some((generator, generated)) = generated else {
        return Reply { answer: extractive(q, found, started, conversation_id), more: None, started };
    };
    let first_sentence_ms = started.elapsed().as_millis() as u64;
    let answer = Answer {
        id: QueryId::new(),
        text: generated.first.clone(),
        sources: sources(found.passages),
        resolved: true,
        lang: q.lang.clone(),
        latency_ms: first_sentence_ms,
        conversation_id,
        mode: AnswerMode::Generative,
        generation: Some(GenerationLog { model: generator.model().to_owned(), prompt_tokens: None, completion_tokens: None, first_sentence_ms }),
    };
    Reply { answer, more: Some(generated), started }
}
