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
use crate::store::content::{self as store_content, Change};
use crate::store::{Store, StoreError, pricing as store_pricing};
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
    let outcome = store.write_blocking(move |tx| {
        let verticals = store_content::list_verticals(tx)?;
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
            return Ok(Err(errors));
        }
        let mut out = Vec::with_capacity(pages.len());
        for (file, page) in pages {
            let change = store_content::upsert_page(tx, &page)?;
            out.push(PageOutcome {
                file,
                vertical: page.vertical.to_string(),
                lang: page.lang.to_string(),
                slug: page.slug.to_string(),
                published: page.published,
                change,
            });
        }
        Ok(Ok(out))
    })?;
    outcome.map_err(ContentError::Invalid)
}

/// Imports one vertical's price list, replacing the previous one. Returns the vertical and tier count.
pub fn import_pricing(store: &Store, source: &Source) -> Result<(String, usize), ContentError> {
    let doc = parse_document(&source.name, &source.text).map_err(|e| ContentError::Invalid(vec![e]))?;
    let file = source.name.clone();
    let outcome = store.write_blocking(move |tx| {
        let verticals = store_content::list_verticals(tx)?;
        let mut fe = FieldErrors::new(&file);
        let sheet = typed::<PricingFile>(doc, "", &mut fe).and_then(|f| f.validate(&verticals, &mut fe));
        match sheet {
            Some(sheet) if fe.errors.is_empty() => Ok(Ok((sheet.vertical.to_string(), store_pricing::replace_sheet(tx, &sheet)?))),
            _ => Ok(Err(fe.errors)),
        }
    })?;
    outcome.map_err(ContentError::Invalid)
}

/// Imports a rates file (`{"base"?, "rates": {CUR: RATE}}`) against `reference`; returns the count.
pub fn import_rates(store: &Store, reference: Currency, source: &Source) -> Result<usize, ContentError> {
    let doc = parse_document(&source.name, &source.text).map_err(|e| ContentError::Invalid(vec![e]))?;
    let mut fe = FieldErrors::new(&source.name);
    let rates = typed::<RatesFile>(doc, "", &mut fe).and_then(|f| f.validate(reference, &mut fe));
    let Some(rates) = rates.filter(|_| fe.errors.is_empty()) else { return Err(ContentError::Invalid(fe.errors)) };
    let n = rates.iter().filter(|(c, _)| *c != reference).count();
    store.write_blocking(move |tx| {
        for (cur, rate) in rates.into_iter().filter(|(c, _)| *c != reference) {
            store_pricing::set_rate(tx, reference, cur, rate)?;
        }
        Ok(())
    })?;
    Ok(n)
}

/// `sitebot rates set CUR RATE`.
pub fn set_rate(store: &Store, reference: Currency, currency: Currency, rate: Rate) -> Result<(), ContentError> {
    Ok(store.write_blocking(move |tx| store_pricing::set_rate(tx, reference, currency, rate))?)
}
