//! Chunking along the document's structure: each section (a heading path) is cut into chunks of whole
//! paragraphs, up to `MAX_TOKENS` estimated word pieces; a paragraph too long for one chunk is cut at
//! sentence ends (and a sentence too long at word boundaries). Consecutive chunks of a section share
//! their boundary sentence when it is short (`OVERLAP_TOKENS`), so a fact that straddles the cut is
//! found from either side. A chunk never spans two sections, so its heading path names it exactly.

use crate::knowledge::import::document::Parsed;
use crate::knowledge::text::{estimate_tokens, sentences};

/// Bound on a chunk's text, in estimated word pieces. With the heading in front it stays within the
/// model's 256-piece window.
pub const MAX_TOKENS: usize = 200;
/// A boundary sentence up to this size is repeated at the start of the next chunk.
pub const OVERLAP_TOKENS: usize = 40;
/// Bumped whenever chunking changes, so a re-import re-chunks documents whose content did not change.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// The citation title: the document title and the section's heading path, joined by ` › `.
    pub heading: String,
    pub text: String,
}

impl Chunk {
    /// What the embedding model sees: the heading path, then the text.
    pub fn embedding_input(&self) -> String {
        embedding_input(&self.heading, &self.text)
    }
}

/// What a chunk of this heading and text is embedded as (`Chunk::embedding_input`), for chunks read back
/// from the store.
pub fn embedding_input(heading: &str, text: &str) -> String {
    format!("{heading}. {text}")
}

/// The vectors of chunks, each given as its `embedding_input` and, for a FAQ entry's chunk, the entry's
/// question. A FAQ chunk's vector is the normalised sum of the question's own passage vector and the
/// chunk's: visitors ask a FAQ entry's question in their own words, and a rephrasing is nearer the
/// question alone than the question with its answer. On StackFAQ's 1,249 rephrasings of 125 entries
/// (`examples/faq.rs`) the right entry came first by the vector alone 88.0 % of the time, against 80.2 %
/// with the chunk's vector only and 83.0 % with the question's only; the blend is one vector, so the
/// index, its memory and its search are unchanged.
pub fn embed(
    embedder: &crate::knowledge::embedding::Embedder,
    chunks: &[(String, Option<String>)],
) -> Result<Vec<Vec<f32>>, crate::knowledge::embedding::EmbedError> {
    use crate::knowledge::embedding::model::Purpose;
    let inputs: Vec<String> = chunks.iter().map(|(input, _)| input.clone()).collect();
    let mut vectors = embedder.embed_parallel_blocking(&inputs, Purpose::Passage)?;
    let questions: Vec<(usize, String)> = chunks.iter().enumerate().filter_map(|(i, (_, q))| q.clone().map(|q| (i, q))).collect();
    if questions.is_empty() {
        return Ok(vectors);
    }
    let texts: Vec<String> = questions.iter().map(|(_, q)| q.clone()).collect();
    let question_vectors = embedder.embed_parallel_blocking(&texts, Purpose::Passage)?;
    for ((i, _), q) in questions.into_iter().zip(question_vectors) {
        vectors[i] = blend(&vectors[i], &q);
    }
    Ok(vectors)
}

/// The normalised sum of two vectors.
fn blend(a: &[f32], b: &[f32]) -> Vec<f32> {
    let sum: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 { sum.into_iter().map(|x| x / norm).collect() } else { sum }
}

/// Pieces no larger than `MAX_TOKENS`: the paragraph itself, or its sentences, or windows of words.
fn units(paragraph: &str) -> Vec<String> {
    if estimate_tokens(paragraph) <= MAX_TOKENS {
        return vec![paragraph.to_owned()];
    }
    let mut out = Vec::new();
    for s in sentences(paragraph) {
        if estimate_tokens(&s) <= MAX_TOKENS {
            out.push(s);
            continue;
        }
        let mut window = String::new();
        for w in s.split_whitespace() {
            if !window.is_empty() && estimate_tokens(&window) + estimate_tokens(w) > MAX_TOKENS {
                out.push(std::mem::take(&mut window));
            }
            if !window.is_empty() {
                window.push(' ');
            }
            window.push_str(w);
        }
        if !window.is_empty() {
            out.push(window);
        }
    }
    out
}

pub fn chunk(doc: &Parsed) -> Vec<Chunk> {
    let mut out = Vec::new();
    for section in &doc.sections {
        let heading = std::iter::once(doc.title.as_str()).chain(section.path.iter().map(String::as_str)).collect::<Vec<_>>().join(" › ");
        let mut current = String::new();
        let mut tokens = 0;
        for unit in section.paragraphs.iter().flat_map(|p| units(p)) {
            let size = estimate_tokens(&unit);
            if tokens > 0 && tokens + size > MAX_TOKENS {
                let overlap = sentences(&current).pop().filter(|s| estimate_tokens(s) <= OVERLAP_TOKENS && estimate_tokens(s) + size <= MAX_TOKENS);
                out.push(Chunk { heading: heading.clone(), text: std::mem::take(&mut current) });
                tokens = 0;
                if let Some(o) = overlap {
                    tokens = estimate_tokens(&o);
                    current = o;
                }
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&unit);
            tokens += size;
        }
        if !current.is_empty() {
            out.push(Chunk { heading, text: current });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::knowledge::import::chunk::*;
    use crate::knowledge::import::document::Section;

    fn doc(paragraphs: Vec<String>) -> Parsed {
        Parsed { source: "s".into(), title: "Guide".into(), url: None, format: "markdown", sections: vec![Section { path: vec!["Hours".into()], paragraphs }] }
    }

    #[test]
    fn small_sections_are_one_chunk_with_their_heading_path() {
        let c = chunk(&doc(vec!["We open at 8.".into(), "We close at 18.".into()]));
        assert_eq!(c, vec![Chunk { heading: "Guide › Hours".into(), text: "We open at 8. We close at 18.".into() }]);
    }

    #[test]
    fn long_sections_are_bounded_and_overlap() {
        let para: Vec<String> = (0..60).map(|i| format!("Sentence number {i} talks about teeth.")).collect();
        let c = chunk(&doc(vec![para.join(" ")]));
        assert!(c.len() > 1);
        for ch in &c {
            assert!(estimate_tokens(&ch.text) <= MAX_TOKENS, "{}", ch.text);
        }
        let last_of_first = sentences(&c[0].text).pop().unwrap();
        assert!(c[1].text.starts_with(&last_of_first));
    }
}
