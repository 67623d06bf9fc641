//! Public content: landing pages, price lists, currency rates and public site stats.
//!
//! The admin CLI, `sitebot demo` and the tests all import through the functions here, so there is one
//! way content enters the store: parse the file (JSON or YAML), validate every field against the
//! verticals in the same write transaction, then upsert. A file with any error imports nothing, and
//! the error names the file and the field.

pub mod demo;
pub mod import;
pub mod language;
pub mod money;
pub mod page;
pub mod pricing;
pub mod quote;
pub mod stats;

use crate::domain::Currency;
use crate::store::content::Change;
use crate::store::{Store, StoreError};
use import::{FieldErrors, ImportError, one_or_many, parse_document, typed};
use money::Rate;
use page::PageFile;
use pricing::{PricingFile, RatesFile};

#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// Every problem found, one per line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ImportError>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A content file: its name (for messages and the JSON/YAML choice) and its text.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self { name: name.into(), text: text.into() }
    }

    /// Reads a file, refusing one larger than [`import::MAX_FILE_BYTES`].
    pub fn read(path: &std::path::Path) -> Result<Source, ContentError> {
        let name = path.display().to_string();
        let fail = |message: String| ContentError::Invalid(vec![ImportError { file: name.clone(), field: String::new(), message }]);
        let len = std::fs::metadata(path).map_err(|e| fail(format!("cannot read: {e}")))?.len();
        if len > import::MAX_FILE_BYTES as u64 {
            return Err(fail(format!("larger than {} MiB", import::MAX_FILE_BYTES / 1024 / 1024)));
        }
        let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
        Ok(Source { name, text })
    }
}

/// What a landing import did to each page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageOutcome {
    pub file: String,
    pub vertical: String,
    pub lang: String,
    pub slug: String,
    pub published: bool,
    pub change: Change,
}

/// Imports landing pages from `sources` in one transaction: all of them, or none when any field of any
/// file is invalid. `publish` publishes every page whatever its file says. Pages are matched by
/// (site, lang, slug); an unchanged page keeps its `updatedAt`.
pub fn import_landing(store: &Store, sources: &[Source], publish: bool) -> Result<Vec<PageOutcome>, ContentError> {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    for s in sources {
        match parse_document(&s.name, &s.text) {
            Ok(v) => docs.push((s.name.clone(), v)),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(ContentError::Invalid(errors));
    }
    // Validated against the verticals as they are now; the pages then go in one transaction.
    let verticals = store.content().verticals()?;
    let pages = {
        let mut pages = Vec::new();
        let mut errors = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for (file, doc) in docs {
            let mut fe = FieldErrors::new(&file);
            for (at, item) in one_or_many(doc) {
                let Some(pf) = typed::<PageFile>(item, &at, &mut fe) else { continue };
                let Some(mut page) = pf.validate(&at, &verticals, &mut fe) else { continue };
                let key = (page.vertical.clone(), page.lang.clone(), page.slug.clone());
                if let Some(first) = seen.insert(key, format!("{file} {at}")) {
                    let field = if at.is_empty() { "slug".to_owned() } else { format!("{at}.slug") };
                    fe.push(&field, format!("page {}/{}/{} is also defined at {first}", page.vertical, page.lang, page.slug));
                }
                page.published |= publish;
                pages.push((file.clone(), page));
            }
            errors.extend(fe.errors);
        }
        if !errors.is_empty() {
            return Err(ContentError::Invalid(errors));
        }
        pages
    };
    let landing: Vec<_> = pages.iter().map(|(_, p)| p.clone()).collect();
    let changes = store.content().upsert_pages(&landing)?;
    Ok(pages
        .into_iter()
        .zip(changes)
        .map(|((file, page), change)| PageOutcome {
            file,
            vertical: page.vertical.to_string(),
            lang: page.lang.to_string(),
            slug: page.slug.to_string(),
            published: page.published,
            change,
        })
        .collect())
}

/// Imports one vertical's price list, replacing the previous one. Returns the vertical and tier count.
pub fn import_pricing(store: &Store, source: &Source) -> Result<(String, usize), ContentError> {
    let doc = parse_document(&source.name, &source.text).map_err(|e| ContentError::Invalid(vec![e]))?;
    let verticals = store.content().verticals()?;
    let mut fe = FieldErrors::new(&source.name);
    let sheet = typed::<PricingFile>(doc, "", &mut fe).and_then(|f| f.validate(&verticals, &mut fe));
    match sheet {
        Some(sheet) if fe.errors.is_empty() => Ok((sheet.vertical.to_string(), store.pricing().replace_sheet(&sheet)?)),
        _ => Err(ContentError::Invalid(fe.errors)),
    }
}

/// Imports a rates file (`{"base"?, "rates": {CUR: RATE}}`) against `reference`; returns the count.
pub fn import_rates(store: &Store, reference: Currency, source: &Source) -> Result<usize, ContentError> {
    let doc = parse_document(&source.name, &source.text).map_err(|e| ContentError::Invalid(vec![e]))?;
    let mut fe = FieldErrors::new(&source.name);
    let rates = typed::<RatesFile>(doc, "", &mut fe).and_then(|f| f.validate(reference, &mut fe));
    let Some(rates) = rates.filter(|_| fe.errors.is_empty()) else { return Err(ContentError::Invalid(fe.errors)) };
    let rates: Vec<(Currency, Rate)> = rates.into_iter().filter(|(c, _)| *c != reference).collect();
    store.pricing().set_rates(reference, &rates)?;
    Ok(rates.len())
}

/// `sitebot rates set CUR RATE`.
pub fn set_rate(store: &Store, reference: Currency, currency: Currency, rate: Rate) -> Result<(), ContentError> {
    Ok(store.pricing().set_rates(reference, &[(currency, rate)])?)
}
