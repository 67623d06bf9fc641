//! A SentencePiece Unigram model for `tokenizers` that holds a 250,000-piece vocabulary in about
//! 20 MiB instead of about 265.
//!
//! Why: `tokenizers`' own `Unigram` keeps its pieces in a byte trie whose every node is a hash map; for
//! multilingual-e5-small's XLM-R vocabulary that is about 265 MiB resident (measured with the Python
//! binding of the same crate; transformers.js reports the same for its port, issue #1736), more than
//! the whole ONNX session. Here the pieces live in one string, the scores in one array, and the prefix
//! search is a double-array automaton from `daachorse` (already in the build: `tokenizers` uses it for
//! added tokens), charwise, so each state is one character.
//!
//! The segmentation is `tokenizers`' `Unigram::encode_optimized` (SentencePiece's Viterbi over the
//! pieces that start at each character), step for step: pieces starting at a position are tried
//! shortest first and a later one wins only with a strictly higher score, a character no piece covers
//! is `<unk>` scored `min_score - 10`, and runs of `<unk>` are fused. `tests/e5_tokenizer.rs` checks the
//! ids against `tokenizers` on a multilingual sample. Only what sitebot's models need is supported: no
//! byte fallback, no sampling, no training.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use daachorse::CharwiseDoubleArrayAhoCorasick;
use serde::{Deserialize, Deserializer};
use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::{
    DecoderWrapper, Encoding, Model, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper, Token, Tokenizer, TokenizerImpl, TruncationParams,
};

/// SentencePiece's penalty for an unknown character, below the lowest piece score.
const UNK_PENALTY: f64 = 10.0;

pub struct CompactUnigram {
    /// Every piece, concatenated; piece `i` is `pieces[ends[i - 1]..ends[i]]`.
    pieces: String,
    ends: Vec<u32>,
    scores: Vec<f64>,
    /// Ids ordered by piece, one per distinct piece (the last id of a repeated piece, as `tokenizers`).
    by_piece: Vec<u32>,
    /// Distinct non-empty pieces to their id.
    automaton: CharwiseDoubleArrayAhoCorasick<u32>,
    unk_id: Option<u32>,
    min_score: f64,
}

impl std::fmt::Debug for CompactUnigram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactUnigram").field("pieces", &self.scores.len()).field("unk_id", &self.unk_id).finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UnigramError {
    #[error("not a Unigram model (type {0:?})")]
    NotUnigram(String),
    #[error("byte fallback is not supported")]
    ByteFallback,
    #[error("the vocabulary is empty or larger than 2^31 pieces")]
    Size,
    #[error("unk_id {0} is not in the vocabulary")]
    UnkId(usize),
    #[error("the vocabulary has no piece for an unknown character, and the text needs one")]
    NoUnk,
    #[error("building the automaton: {0}")]
    Automaton(String),
}

impl CompactUnigram {
    pub fn new<S: AsRef<str>>(vocab: &[(S, f64)], unk_id: Option<usize>) -> Result<Self, UnigramError> {
        if vocab.is_empty() || vocab.len() > i32::MAX as usize {
            return Err(UnigramError::Size);
        }
        if let Some(u) = unk_id.filter(|&u| u >= vocab.len()) {
            return Err(UnigramError::UnkId(u));
        }
        let mut pieces = String::with_capacity(vocab.iter().map(|(p, _)| p.as_ref().len()).sum());
        let mut ends = Vec::with_capacity(vocab.len());
        let mut scores = Vec::with_capacity(vocab.len());
        for (piece, score) in vocab {
            pieces.push_str(piece.as_ref());
            ends.push(u32::try_from(pieces.len()).map_err(|_| UnigramError::Size)?);
            scores.push(*score);
        }
        let min_score = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let mut by_piece: Vec<u32> = (0..vocab.len() as u32).collect();
        // Equal pieces: the highest id first, then kept alone (`tokenizers` maps a piece to its last id).
        by_piece.sort_by(|&a, &b| vocab[a as usize].0.as_ref().cmp(vocab[b as usize].0.as_ref()).then(b.cmp(&a)));
        by_piece.dedup_by(|later, first| vocab[*later as usize].0.as_ref() == vocab[*first as usize].0.as_ref());
        let automaton =
            CharwiseDoubleArrayAhoCorasick::with_values(by_piece.iter().map(|&id| (vocab[id as usize].0.as_ref(), id)).filter(|(p, _)| !p.is_empty()))
                .map_err(|e| UnigramError::Automaton(e.to_string()))?;
        by_piece.shrink_to_fit();
        Ok(CompactUnigram { pieces, ends, scores, by_piece, automaton, unk_id: unk_id.map(|u| u as u32), min_score })
    }

    fn piece(&self, id: u32) -> &str {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.pieces[start..self.ends[i] as usize]
    }

    /// Resident bytes of the vocabulary and the automaton.
    pub fn heap_bytes(&self) -> usize {
        self.pieces.capacity() + self.ends.capacity() * 4 + self.scores.capacity() * 8 + self.by_piece.capacity() * 4 + self.automaton.heap_bytes()
    }

    /// The best segmentation of `sentence`: (id, byte range) per token.
    fn segment(&self, sentence: &str) -> Result<Vec<(u32, usize, usize)>, UnigramError> {
        #[derive(Clone, Copy)]
        struct Best {
            id: u32,
            score: f64,
            starts_at: Option<usize>,
        }
        let size = sentence.len();
        let unk_score = self.min_score - UNK_PENALTY;
        let mut matches: Vec<(usize, usize, u32)> = self.automaton.find_overlapping_iter(sentence).map(|m| (m.start(), m.end(), m.value())).collect();
        // Per start, shortest first: the order of `tokenizers`' trie walk, which decides ties.
        matches.sort_unstable_by_key(|&(s, e, _)| (s, e));
        let mut best = vec![Best { id: 0, score: 0.0, starts_at: None }; size + 1];
        let mut next = 0;
        for (starts_at, c) in sentence.char_indices() {
            let here = best[starts_at].score;
            let char_len = c.len_utf8();
            let mut single = false;
            while next < matches.len() && matches[next].0 < starts_at {
                next += 1;
            }
            while next < matches.len() && matches[next].0 == starts_at {
                let (_, end, id) = matches[next];
                let candidate = self.scores[id as usize] + here;
                let target = &mut best[end];
                if target.starts_at.is_none() || candidate > target.score {
                    *target = Best { id, score: candidate, starts_at: Some(starts_at) };
                }
                single |= end - starts_at == char_len;
                next += 1;
            }
            if !single {
                let unk = self.unk_id.ok_or(UnigramError::NoUnk)?;
                let candidate = unk_score + here;
                let target = &mut best[starts_at + char_len];
                if target.starts_at.is_none() || candidate > target.score {
                    *target = Best { id: unk, score: candidate, starts_at: Some(starts_at) };
                }
            }
        }
        let mut out = Vec::new();
        let mut ends_at = size;
        while ends_at > 0 {
            let node = best[ends_at];
            let starts_at = node.starts_at.expect("every character position is reached");
            match out.last_mut() {
                // Fuse a run of unknown characters into one token.
                Some((last, start, _)) if Some(node.id) == self.unk_id && Some(*last) == self.unk_id => *start = starts_at,
                _ => out.push((node.id, starts_at, ends_at)),
            }
            ends_at = starts_at;
        }
        out.reverse();
        Ok(out)
    }
}

impl Model for CompactUnigram {
    type Trainer = UnigramTrainer;

    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        Ok(self
            .segment(sequence)?
            .into_iter()
            .map(|(id, start, end)| {
                let text = &sequence[start..end];
                // A fused run of unknown characters is looked up as a whole, as `tokenizers` does.
                let id = if Some(id) == self.unk_id { self.token_to_id(text).unwrap_or(id) } else { id };
                Token::new(id, text.to_owned(), (start, end))
            })
            .collect())
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.by_piece.binary_search_by(|&id| self.piece(id).cmp(token)).ok().map(|i| self.by_piece[i])
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        ((id as usize) < self.scores.len()).then(|| self.piece(id).to_owned())
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        self.by_piece.iter().map(|&id| (self.piece(id).to_owned(), id)).collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.scores.len()
    }

    fn save(&self, _folder: &Path, _prefix: Option<&str>) -> tokenizers::Result<Vec<PathBuf>> {
        Err("sitebot's compact Unigram model is read-only".into())
    }

    fn get_trainer(&self) -> UnigramTrainer {
        UnigramTrainer::default()
    }
}

/// The `model` object of a `tokenizer.json` whose type is `Unigram`.
impl<'de> Deserialize<'de> for CompactUnigram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Json<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
            unk_id: Option<usize>,
            #[serde(borrow)]
            vocab: Vec<(Cow<'a, str>, f64)>,
            #[serde(default)]
            byte_fallback: bool,
        }
        let j = Json::deserialize(d)?;
        if j.kind != "Unigram" {
            return Err(serde::de::Error::custom(UnigramError::NotUnigram(j.kind.into_owned())));
        }
        if j.byte_fallback {
            return Err(serde::de::Error::custom(UnigramError::ByteFallback));
        }
        CompactUnigram::new(&j.vocab, j.unk_id).map_err(serde::de::Error::custom)
    }
}

/// A `tokenizer.json` loaded for encoding: a Unigram model on `CompactUnigram`, any other model (WordPiece
/// for MiniLM) on `tokenizers`' own.
pub enum TextTokenizer {
    Compact(Box<TokenizerImpl<CompactUnigram, NormalizerWrapper, PreTokenizerWrapper, PostProcessorWrapper, DecoderWrapper>>),
    Other(Box<Tokenizer>),
}

impl TextTokenizer {
    /// Reads `tokenizer.json` at `path`.
    pub fn from_file(path: &Path) -> tokenizers::Result<Self> {
        #[derive(Deserialize)]
        struct Peek<'a> {
            #[serde(borrow)]
            model: PeekModel<'a>,
        }
        #[derive(Deserialize)]
        struct PeekModel<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
            #[serde(default)]
            byte_fallback: bool,
        }
        let json = std::fs::read_to_string(path)?;
        let peek: Peek<'_> = serde_json::from_str(&json)?;
        Ok(if peek.model.kind == "Unigram" && !peek.model.byte_fallback {
            TextTokenizer::Compact(Box::new(serde_json::from_str(&json)?))
        } else {
            TextTokenizer::Other(Box::new(json.parse()?))
        })
    }

    pub fn encode(&self, text: &str, add_special_tokens: bool) -> tokenizers::Result<Encoding> {
        match self {
            TextTokenizer::Compact(t) => t.encode(text, add_special_tokens),
            TextTokenizer::Other(t) => t.encode(text, add_special_tokens),
        }
    }

    /// Never pads, and truncates at `max_length` pieces (framing included).
    pub fn unpadded_truncated_at(&mut self, max_length: usize) -> tokenizers::Result<()> {
        let trunc = Some(TruncationParams { max_length, ..Default::default() });
        match self {
            TextTokenizer::Compact(t) => {
                t.with_padding(None).with_truncation(trunc)?;
            }
            TextTokenizer::Other(t) => {
                t.with_padding(None).with_truncation(trunc)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::embedding::tokenizer::*;
    use tokenizers::models::unigram::Unigram;

    fn vocab() -> Vec<(String, f64)> {
        [
            ("<unk>", 0.0),
            ("▁", -2.0),
            ("a", -3.0),
            ("b", -3.5),
            ("ab", -4.0),
            ("▁ab", -4.5),
            ("abc", -9.0),
            ("c", -3.0),
            ("ab", -1.0),
            ("日本", -2.0),
            ("日", -3.0),
        ]
        .iter()
        .map(|(p, s)| (p.to_string(), *s))
        .collect()
    }

    #[test]
    fn segments_as_tokenizers_unigram_does() {
        let v = vocab();
        let ours = CompactUnigram::new(&v, Some(0)).unwrap();
        let theirs = Unigram::from(v.clone(), Some(0), false).unwrap();
        for text in ["▁abc", "abcab", "日本語", "xyz", "▁a▁b日x日本", "c", "ééab", "abab▁▁", "語語a"] {
            let a: Vec<(u32, String)> = ours.tokenize(text).unwrap().into_iter().map(|t| (t.id, t.value)).collect();
            let b: Vec<(u32, String)> = theirs.tokenize(text).unwrap().into_iter().map(|t| (t.id, t.value)).collect();
            assert_eq!(a, b, "{text}");
        }
    }

    #[test]
    fn a_repeated_piece_maps_to_its_last_id() {
        let ours = CompactUnigram::new(&vocab(), Some(0)).unwrap();
        assert_eq!(ours.token_to_id("ab"), Some(8));
        assert_eq!(ours.id_to_token(4).as_deref(), Some("ab"));
        assert_eq!(ours.token_to_id("zz"), None);
        assert_eq!(ours.get_vocab_size(), 11);
    }

    #[test]
    fn without_an_unk_piece_an_unknown_character_is_an_error() {
        let ours = CompactUnigram::new(&vocab(), None).unwrap();
        assert!(ours.tokenize("ab").is_ok());
        assert!(ours.tokenize("q").is_err());
    }
}
