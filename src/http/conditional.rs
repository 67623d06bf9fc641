//! Conditional GET for the cacheable public routes: a strong `ETag` over the exact body, `Last-Modified`,
//! `Cache-Control`, and `304 Not Modified` when `If-None-Match` names the current entity.
//!
//! The ETag is computed from the bytes sent, so whatever changes the body (an edit, a publish, an
//! alternate withdrawn) changes the tag; no version counter can fall out of step with the content.

use crate::domain::Timestamp;
use poem::http::{HeaderMap, HeaderValue, StatusCode, header};
use poem::{Request, Response};
use sha2::{Digest, Sha256};

/// `"<32 hex digits>"`: the first 128 bits of SHA-256 of the body.
pub fn etag(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    format!("\"{}\"", hex::encode(&digest[..16]))
}

/// RFC 9110 section 13.1.2: true when any `If-None-Match` value is `*` or weakly equals `etag`. The
/// header may repeat and each value may list several tags.
pub fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    let ours = etag.trim_start_matches("W/");
    headers.get_all(header::IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(|t| {
        let t = t.trim();
        t == "*" || t.trim_start_matches("W/") == ours
    })
}

/// An instant as an HTTP date (`Sat, 21 Nov 2026 10:00:00 GMT`).
pub fn http_date(t: Timestamp) -> Option<String> {
    let t = chrono::DateTime::from_timestamp_millis(t.as_millis())?;
    Some(t.format("%a, %d %b %Y %H:%M:%S GMT").to_string())
}

/// A JSON response with validators, or a bodiless 304 carrying the same validators.
pub fn json(req: &Request, body: Vec<u8>, last_modified: Option<Timestamp>, cache_control: &'static str) -> Response {
    let tag = etag(&body);
    let mut resp = if none_match(req.headers(), &tag) {
        Response::builder().status(StatusCode::NOT_MODIFIED).finish()
    } else {
        Response::builder().status(StatusCode::OK).content_type("application/json").body(body)
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache_control));
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    if let Some(v) = last_modified.and_then(http_date).and_then(|d| HeaderValue::from_str(&d).ok()) {
        h.insert(header::LAST_MODIFIED, v);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::IF_NONE_MATCH, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn if_none_match_forms() {
        let tag = etag(b"{}");
        assert!(none_match(&headers(&[&tag]), &tag));
        assert!(none_match(&headers(&[&format!("W/{tag}")]), &tag));
        assert!(none_match(&headers(&[&format!("\"other\", {tag}")]), &tag));
        assert!(none_match(&headers(&["\"other\"", &tag]), &tag));
        assert!(none_match(&headers(&["*"]), &tag));
        assert!(!none_match(&headers(&["\"other\""]), &tag));
        assert!(!none_match(&headers(&[]), &tag));
    }

    #[test]
    fn http_dates() {
        assert_eq!(http_date(Timestamp::parse("2026-11-21T10:00:00Z").unwrap()).as_deref(), Some("Sat, 21 Nov 2026 10:00:00 GMT"));
        assert_eq!(http_date(Timestamp::from_millis(i64::MAX)), None);
    }
}
