//! Reading content files: JSON or YAML, one object or a list, every problem reported with the file and
//! the field's path (`pages.yaml: [2].faq[0].answer: must not be empty`).
//!
//! Files are parsed into a JSON value first (YAML through serde-saphyr), then deserialized with
//! `serde_path_to_error` so that type errors name their field exactly like the checks after them do.

use std::fmt;

use serde::de::DeserializeOwned;

use crate::domain::Invalid;

/// One problem in one content file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub file: String,
    /// JSON path of the field (`[1].tiers[0].price.amountMinor`); empty for the whole file.
    pub field: String,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() { write!(f, "{}: {}", self.file, self.message) } else { write!(f, "{}: field `{}`: {}", self.file, self.field, self.message) }
    }
}

/// The problems found in one file, in the order met.
#[derive(Debug, Default)]
pub struct FieldErrors {
    file: String,
    pub errors: Vec<ImportError>,
}

impl FieldErrors {
    pub fn new(file: &str) -> Self {
        Self { file: file.to_owned(), errors: Vec::new() }
    }

    pub fn push(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(ImportError { file: self.file.clone(), field: field.to_owned(), message: message.into() });
    }
}

/// Field checks for one object at path `at`; records failures instead of stopping at the first.
pub struct Checker<'a> {
    at: String,
    errors: &'a mut FieldErrors,
    before: usize,
}

impl<'a> Checker<'a> {
    pub fn new(at: &str, errors: &'a mut FieldErrors) -> Self {
        let before = errors.errors.len();
        Self { at: at.to_owned(), errors, before }
    }

    fn path(&self, field: &str) -> String {
        if self.at.is_empty() { field.to_owned() } else { format!("{}.{field}", self.at) }
    }

    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        let path = self.path(field);
        self.errors.push(&path, message);
    }

    pub fn parse<T>(&mut self, field: &str, r: Result<T, Invalid>) -> Option<T> {
        r.map_err(|e| self.fail(field, e.0)).ok()
    }

    /// `min..=max` characters after trimming.
    pub fn text(&mut self, field: &str, value: &str, min: usize, max: usize) {
        let n = value.trim().chars().count();
        if n < min {
            self.fail(field, "must not be empty");
        } else if n > max {
            self.fail(field, format!("must be at most {max} characters (has {n})"));
        }
    }

    pub fn count(&mut self, field: &str, n: usize, max: usize) {
        if n > max {
            self.fail(field, format!("at most {max} entries (has {n})"));
        }
    }

    /// True when no check of this checker failed.
    pub fn ok(&self) -> bool {
        self.errors.errors.len() == self.before
    }
}

/// Largest content file read, in bytes.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;

/// Parses `text` as JSON when the name ends in `.json`, as YAML for `.yaml`/`.yml`, and otherwise tries
/// JSON then YAML (YAML is a superset of JSON, but JSON's errors are clearer for JSON files).
pub fn parse_document(file: &str, text: &str) -> Result<serde_json::Value, ImportError> {
    let whole = |message: String| ImportError { file: file.to_owned(), field: String::new(), message };
    if text.len() > MAX_FILE_BYTES {
        return Err(whole(format!("larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024)));
    }
    let lower = file.to_ascii_lowercase();
    // YAML 1.2 booleans only: a stat value `Yes` or `no` stays the text the author wrote.
    let yaml = |t: &str| {
        serde_saphyr::from_str_with_options::<serde_json::Value>(t, serde_saphyr::options!(strict_booleans: true))
            .map_err(|e| whole(format!("not valid YAML: {e}")))
    };
    if lower.ends_with(".json") {
        serde_json::from_str(text).map_err(|e| whole(format!("not valid JSON: {e}")))
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        yaml(text)
    } else {
        serde_json::from_str(text).or_else(|_| yaml(text))
    }
}

/// Deserializes `value` into `T`, naming the failing field by its path under `at`.
pub fn typed<T: DeserializeOwned>(value: serde_json::Value, at: &str, errors: &mut FieldErrors) -> Option<T> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(v) => Some(v),
        Err(e) => {
            let inner = e.path().to_string();
            let path = match (at.is_empty(), inner.as_str()) {
                (_, ".") => at.to_owned(),
                (true, p) => p.to_owned(),
                (false, p) if p.starts_with('[') => format!("{at}{p}"),
                (false, p) => format!("{at}.{p}"),
            };
            errors.push(&path, e.into_inner().to_string());
            None
        }
    }
}

/// The elements of a file that holds one object or a list of them, each with its path (`""` or `[i]`).
pub fn one_or_many(value: serde_json::Value) -> Vec<(String, serde_json::Value)> {
    match value {
        serde_json::Value::Array(items) => items.into_iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect(),
        other => vec![(String::new(), other)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        items: Vec<Item>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        n: u32,
    }

    #[test]
    fn yaml_and_json_read_the_same() {
        let a = parse_document("a.yaml", "name: x\nitems:\n  - n: 1\n").unwrap();
        let b = parse_document("b.json", r#"{"name": "x", "items": [{"n": 1}]}"#).unwrap();
        assert_eq!(a, b);
        assert!(parse_document("c.json", "{").unwrap_err().message.contains("JSON"));
        let v = parse_document("d.yml", "a: yes\nb: n\nc: true\n").unwrap();
        assert_eq!(v, serde_json::json!({"a": "yes", "b": "n", "c": true}));
    }

    #[test]
    fn type_errors_name_the_field_path() {
        let mut errors = FieldErrors::new("f.json");
        let v = parse_document("f.json", r#"[{"name": "x", "items": [{"n": 1}]}, {"name": "y", "items": [{"n": "two"}]}]"#).unwrap();
        for (at, item) in one_or_many(v) {
            let _ = typed::<Doc>(item, &at, &mut errors);
        }
        assert_eq!(errors.errors.len(), 1);
        assert_eq!(errors.errors[0].field, "[1].items[0].n");
        assert!(errors.errors[0].to_string().starts_with("f.json: field `[1].items[0].n`: invalid type"), "{}", errors.errors[0]);
    }
}
