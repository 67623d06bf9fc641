//! Files of records: FAQ pairs as CSV or JSONL (`question`, `answer`, optional `url`), and document
//! collections as JSONL (`_id` or `id`, `title`, `text`, optional `url`; the BEIR corpus layout). Each
//! record becomes its own document, with source `<file>#<key>` (the id, else the question), so a
//! re-import matches records to what was stored whatever their order in the file.

use serde::Deserialize;

use crate::knowledge::import::{Parsed, Section};
use crate::knowledge::text::squash;

#[derive(Debug, Deserialize)]
struct Record {
    #[serde(alias = "_id")]
    id: Option<serde_json::Value>,
    question: Option<String>,
    answer: Option<String>,
    title: Option<String>,
    text: Option<String>,
    url: Option<String>,
}

fn to_parsed(file: &str, r: Record, line: usize) -> Result<Parsed, String> {
    let url = r.url.map(|u| u.trim().to_owned()).filter(|u| u.starts_with("http"));
    let id = r.id.map(|v| match v {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    });
    match (r.question, r.answer, r.text) {
        (Some(q), Some(a), _) => {
            let (q, a) = (squash(&q), squash(&a));
            if q.is_empty() || a.is_empty() {
                return Err(format!("record {line}: question and answer must not be empty"));
            }
            let key = id.unwrap_or_else(|| q.to_lowercase());
            Ok(Parsed {
                source: format!("{file}#{key}"),
                title: q.clone(),
                url,
                format: super::FAQ_FORMAT,
                sections: vec![Section { path: vec![], paragraphs: vec![a] }],
            })
        }
        (_, _, Some(text)) => {
            let Some(id) = id else { return Err(format!("record {line}: a document record needs `_id` or `id`")) };
            let title = r.title.map(|t| squash(&t)).filter(|t| !t.is_empty()).unwrap_or_else(|| id.clone());
            let text = squash(&text);
            if text.is_empty() {
                return Err(format!("record {line}: `text` is empty"));
            }
            Ok(Parsed { source: format!("{file}#{id}"), title, url, format: "record", sections: vec![Section { path: vec![], paragraphs: vec![text] }] })
        }
        _ => Err(format!("record {line}: needs `question` and `answer`, or `text`")),
    }
}

/// One `Parsed` per line; a bad line is an error for that line only.
pub fn jsonl(file: &str, src: &str) -> Vec<Result<Parsed, String>> {
    src.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str::<Record>(l).map_err(|e| format!("line {}: {e}", i + 1)).and_then(|r| to_parsed(file, r, i + 1)))
        .collect()
}

/// One `Parsed` per row of a CSV with a header naming `question` and `answer` (and maybe `url`).
pub fn csv(file: &str, src: &str) -> Result<Vec<Result<Parsed, String>>, String> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(src.as_bytes());
    let headers: Vec<String> = reader.headers().map_err(|e| e.to_string())?.iter().map(|h| h.to_lowercase()).collect();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (Some(q), Some(a)) = (col("question"), col("answer")) else {
        return Err("a FAQ CSV needs a header row with `question` and `answer` columns".into());
    };
    let u = col("url");
    Ok(reader
        .records()
        .enumerate()
        .map(|(i, rec)| {
            let rec = rec.map_err(|e| format!("row {}: {e}", i + 2))?;
            let get = |c: usize| rec.get(c).map(str::to_owned);
            let r = Record { id: None, question: get(q), answer: get(a), title: None, text: None, url: u.and_then(get) };
            to_parsed(file, r, i + 2)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::knowledge::import::records::*;

    #[test]
    fn faq_csv_and_corpus_jsonl() {
        let rows = csv("faq.csv", "question,answer,url\n\"Do you take walk-ins?\",\"Yes, before 10 am.\",https://x/faq\nbad,\n").unwrap();
        let first = rows[0].as_ref().unwrap();
        assert_eq!(first.title, "Do you take walk-ins?");
        assert_eq!(first.url.as_deref(), Some("https://x/faq"));
        assert!(rows[1].is_err());
        let docs = jsonl("c.jsonl", "{\"_id\": \"42\", \"title\": \"T\", \"text\": \"Body.\"}\nnot json\n");
        assert_eq!(docs[0].as_ref().unwrap().source, "c.jsonl#42");
        assert!(docs[1].is_err());
    }
}
