//! `Json<T>`: the body extractor for JSON routes. In order: `Content-Type` must be JSON (415); the body
//! is read no further than the limit (413, checked against `Content-Length` first and again while
//! reading, so a chunked body cannot sneak past) and must arrive by the body deadline (400); it must
//! parse (400 `invalid_json`); it must fit `T` (422 naming the field) and pass `T::validate` (422 with
//! every field error at once). Unknown fields are ignored.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use poem::{FromRequest, Request, RequestBody};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::edge::RequestMeta;
use super::error::{ApiError, FieldError};
use crate::app::AppState;

/// Checks beyond what the type expresses: lengths, ranges, formats.
pub trait Validate {
    fn validate(&self) -> Vec<FieldError>;
}

pub struct Json<T>(pub T);

/// `application/json`, or a structured type with the `+json` suffix (`application/problem+json`,
/// `application/vnd.api+json`), which RFC 6839 lets a generic JSON reader take. JSON is always UTF-8
/// (RFC 8259 section 8.1): `application/json` defines no parameters and a `charset=utf-8` changes
/// nothing, but another charset says the body is not what we would read, so it is refused. A value that
/// does not parse as a media type (RFC 9110 section 8.3.1) is refused too.
fn is_json(content_type: &str) -> bool {
    let Ok(mime) = content_type.trim().parse::<mime::Mime>() else { return false };
    let json = match mime.suffix() {
        None => mime.subtype() == mime::JSON,
        Some(suffix) => suffix == mime::JSON && !mime.subtype().as_str().is_empty(),
    };
    let charset_ok = mime.get_param(mime::CHARSET).is_none_or(|c| c.as_str().trim_matches('"').eq_ignore_ascii_case("utf-8"));
    mime.type_() == mime::APPLICATION && json && charset_ok
}

/// Reads at most `limit` bytes of the body, all of it by `deadline`.
pub async fn read_limited(req: &Request, body: &mut RequestBody, limit: usize, deadline: Instant) -> Result<Vec<u8>, ApiError> {
    if let Some(len) = req.headers().get(poem::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok())
        && len > limit as u64
    {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    let body = body.take().map_err(|_| ApiError::InvalidJson("the body was already read".into()))?;
    let mut stream = body.into_bytes_stream();
    let mut out = Vec::new();
    loop {
        // 408 would say it better; ApiError has no such variant yet, and 400 is still a client error.
        let next = tokio::time::timeout_at(deadline, stream.next())
            .await
            .map_err(|_| ApiError::BadRequest("The body did not arrive in time; send it with the request.".into()))?;
        let Some(chunk) = next else { return Ok(out) };
        let chunk = chunk.map_err(|_| ApiError::InvalidJson("the body could not be read to the end".into()))?;
        if out.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge { limit });
        }
        out.extend_from_slice(&chunk);
    }
}

/// Turns a serde error message into something a form can show.
fn humanize(msg: &str) -> String {
    let msg = msg.split(" at line ").next().unwrap_or(msg);
    if let Some(rest) = msg.strip_prefix("missing field `") {
        return format!("{} is required", rest.trim_end_matches('`'));
    }
    msg.replace("invalid type: ", "wrong type: ")
}

pub fn parse_json<T: DeserializeOwned + Validate>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
    if !value.is_object() {
        return Err(ApiError::validation("", "the body must be a JSON object"));
    }
    let parsed: T = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        // serde reports a missing field at its parent's path; name the field itself.
        let field = match inner.strip_prefix("missing field `").and_then(|r| r.split('`').next()) {
            Some(f) if path == "." => f.to_owned(),
            Some(f) => format!("{path}.{f}"),
            None => path,
        };
        ApiError::Validation(vec![FieldError::new(field, humanize(&inner))])
    })?;
    let errors = parsed.validate();
    if errors.is_empty() { Ok(parsed) } else { Err(ApiError::Validation(errors)) }
}

impl<'a, T: DeserializeOwned + Validate> FromRequest<'a> for Json<T> {
    async fn from_request(req: &'a Request, body: &mut RequestBody) -> poem::Result<Self> {
        // Content-Type is a singleton field (RFC 9110 section 8.3): with two, which one the body is in
        // is anyone's guess, and another reader of the same request may guess differently.
        let mut fields = req.headers().get_all(poem::http::header::CONTENT_TYPE).iter();
        let (first, second) = (fields.next(), fields.next());
        let content_type = first.map(|v| v.to_str().unwrap_or("(not text)")).unwrap_or("");
        if second.is_some() || !is_json(content_type) {
            let why = match (content_type, second) {
                (_, Some(_)) => "Send one Content-Type: application/json, not several.".to_owned(),
                ("", None) => "Send the body with Content-Type: application/json.".to_owned(),
                (other, None) => format!("Expected application/json, got {other}."),
            };
            return Err(ApiError::UnsupportedMediaType(why).into());
        }
        let config = req.data::<Arc<AppState>>().map(|s| &s.config);
        let limit = config.map(|c| c.limits.json_body_bytes).unwrap_or(64 * 1024);
        // The edge sets the deadline from the request's arrival; without the edge (unit tests), from now.
        let deadline = match req.extensions().get::<Arc<RequestMeta>>() {
            Some(meta) => meta.body_deadline,
            None => Instant::now() + Duration::from_secs(config.map(|c| c.server.body_timeout_secs).unwrap_or(10)),
        };
        let bytes = read_limited(req, body, limit, deadline).await?;
        Ok(Json(parse_json(&bytes)?))
    }
}

/// An integer field that also takes a JSON number with no fractional part (`5.0`), as JSON Schema's
/// `integer` does; `5.5` is still refused.
pub fn integer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let n = <serde_json::Number as serde::Deserialize>::deserialize(d)?;
    if let Some(i) = n.as_i64() {
        return Ok(i);
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
        _ => Err(serde::de::Error::custom(format!("wrong type: `{n}` is not an integer"))),
    }
}

/// Whitespace as JSON Schema patterns (ECMA-262 `\s`) read it, so a pattern in the OpenAPI document and
/// the server agree on what trimming a string means.
pub fn is_ecma_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Q {
        question: String,
        #[serde(rename = "topK", default)]
        top_k: Option<u32>,
    }

    impl Validate for Q {
        fn validate(&self) -> Vec<FieldError> {
            if self.question.is_empty() { vec![FieldError::new("question", "must not be empty")] } else { vec![] }
        }
    }

    #[test]
    fn errors_name_the_field() {
        match parse_json::<Q>(br#"{"topK": 3}"#) {
            Err(ApiError::Validation(e)) => assert_eq!(e[0].field, "question"),
            _ => panic!("expected a validation error"),
        }
        match parse_json::<Q>(br#"{"question": "hi", "topK": "x"}"#) {
            Err(ApiError::Validation(e)) => assert_eq!(e[0].field, "topK"),
            _ => panic!("expected a validation error"),
        }
        assert!(matches!(parse_json::<Q>(br#"{"question": ""}"#), Err(ApiError::Validation(_))));
        assert!(matches!(parse_json::<Q>(b"{nope"), Err(ApiError::InvalidJson(_))));
        assert!(parse_json::<Q>(br#"{"question": "hi", "unknown": 1}"#).is_ok());
    }

    #[test]
    fn content_types() {
        assert!(is_json("application/json"));
        assert!(is_json("application/json; charset=utf-8"));
        assert!(is_json("Application/JSON;Charset=\"UTF-8\""));
        assert!(is_json("application/merge-patch+json"));
        assert!(is_json("application/problem+json; charset=utf-8"));
        for not in [
            "text/plain", "", "application/+json", "application/json+", "application/json; charset=utf-16", "application/json, text/plain",
            "application/jsonx", "text/json",
        ] {
            assert!(!is_json(not), "{not}");
        }
    }
}
