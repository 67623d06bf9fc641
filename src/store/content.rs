//! Verticals and their landing pages.
//!
//! Content is operator data shared by every site of a vertical, not tenant data, so these functions
//! take a vertical slug rather than a `SiteId`. Only published pages leave this module through the read
//! functions the public routes use; a draft is never read there, not even as an alternate's slug.

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{Result, StoreError, now_rfc3339};
use crate::content::page::{Alternate, LandingPage, LandingPayload, PageBody, PageType, SitemapEntry};
use crate::domain::{Currency, Lang, Slug};

/// A vertical: the family of sites that share landing pages and a price list (`dental`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Vertical {
    pub slug: Slug,
    pub name: String,
    pub default_lang: Lang,
    pub default_currency: Currency,
    /// Languages offered, the default first.
    pub langs: Vec<Lang>,
    pub created_at: String,
    pub updated_at: String,
}

impl Vertical {
    pub fn langs_list(&self) -> String {
        self.langs.iter().map(Lang::as_str).collect::<Vec<_>>().join(", ")
    }
}

#[derive(Debug, Clone)]
pub struct NewVertical {
    pub slug: Slug,
    pub name: String,
    pub default_lang: Lang,
    pub default_currency: Currency,
    pub langs: Vec<Lang>,
}

/// What an upsert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Created,
    Updated,
    Unchanged,
}

fn bad(column: usize, e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, Box::new(e))
}

fn vertical_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Vertical> {
    let langs: String = r.get(4)?;
    Ok(Vertical {
        slug: Slug::vertical(&r.get::<_, String>(0)?).map_err(|e| bad(0, e))?,
        name: r.get(1)?,
        default_lang: Lang::parse(&r.get::<_, String>(2)?).map_err(|e| bad(2, e))?,
        default_currency: Currency::parse(&r.get::<_, String>(3)?).map_err(|e| bad(3, e))?,
        langs: langs.split(',').map(Lang::parse).collect::<std::result::Result<_, _>>().map_err(|e| bad(4, e))?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

const VERTICAL_COLUMNS: &str = "slug, name, default_lang, default_currency, langs, created_at, updated_at";

/// Validates and normalises a new vertical: the default language is always offered, and first.
pub fn normalise(mut v: NewVertical) -> Result<NewVertical> {
    v.name = v.name.trim().to_owned();
    if v.name.is_empty() || v.name.chars().count() > 200 {
        return Err(StoreError::Invalid("name must be 1 to 200 characters".into()));
    }
    let mut langs = vec![v.default_lang.clone()];
    for l in v.langs {
        if !langs.contains(&l) {
            langs.push(l);
        }
    }
    if langs.len() > 50 {
        return Err(StoreError::Invalid("at most 50 languages".into()));
    }
    v.langs = langs;
    Ok(v)
}

/// Creates a vertical; `Conflict` when the slug exists.
pub fn create_vertical(tx: &Transaction<'_>, new: NewVertical) -> Result<Vertical> {
    let v = normalise(new)?;
    if get_vertical(tx, v.slug.as_str())?.is_some() {
        return Err(StoreError::Conflict(format!("vertical `{}` exists", v.slug)));
    }
    let now = now_rfc3339();
    let langs = v.langs.iter().map(Lang::as_str).collect::<Vec<_>>().join(",");
    tx.execute(
        "INSERT INTO verticals (slug, name, default_lang, default_currency, langs, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        params![v.slug.as_str(), v.name, v.default_lang.as_str(), v.default_currency.code(), langs, now],
    )?;
    get_vertical(tx, v.slug.as_str())?.ok_or(StoreError::NotFound)
}

/// Replaces a vertical's name, defaults and languages. A language still used by a page cannot be
/// dropped, and the default must be one every tier of the price list has texts in.
pub fn update_vertical(tx: &Transaction<'_>, new: NewVertical) -> Result<Vertical> {
    let v = normalise(new)?;
    let slug = v.slug.as_str();
    if get_vertical(tx, slug)?.is_none() {
        return Err(StoreError::NotFound);
    }
    let mut stmt = tx.prepare("SELECT DISTINCT lang FROM landing_pages WHERE vertical = ?1 ORDER BY lang")?;
    let used: Vec<String> = stmt.query_map([slug], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    let dropped: Vec<&str> = used.iter().map(String::as_str).filter(|u| !v.langs.iter().any(|l| l.as_str() == *u)).collect();
    if !dropped.is_empty() {
        return Err(StoreError::Conflict(format!("pages exist in {}; keep those languages offered", dropped.join(", "))));
    }
    if let Some(sheet) = super::pricing::sheet(tx, slug)?
        && let Some(t) = sheet.tiers.iter().find(|t| !t.i18n.contains_key(v.default_lang.as_str()))
    {
        return Err(StoreError::Conflict(format!("tier `{}` has no `{}` texts; import a price list with them first", t.id, v.default_lang)));
    }
    let langs = v.langs.iter().map(Lang::as_str).collect::<Vec<_>>().join(",");
    tx.execute(
        "UPDATE verticals SET name = ?2, default_lang = ?3, default_currency = ?4, langs = ?5, updated_at = ?6 WHERE slug = ?1",
        params![slug, v.name, v.default_lang.as_str(), v.default_currency.code(), langs, now_rfc3339()],
    )?;
    get_vertical(tx, slug)?.ok_or(StoreError::NotFound)
}

pub fn get_vertical(conn: &Connection, slug: &str) -> Result<Option<Vertical>> {
    Ok(conn.query_row(&format!("SELECT {VERTICAL_COLUMNS} FROM verticals WHERE slug = ?1"), [slug], vertical_row).optional()?)
}

pub fn list_verticals(conn: &Connection) -> Result<Vec<Vertical>> {
    let mut stmt = conn.prepare(&format!("SELECT {VERTICAL_COLUMNS} FROM verticals ORDER BY slug"))?;
    let rows = stmt.query_map([], vertical_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Inserts or updates a page by (vertical, lang, slug). An identical re-import changes nothing, so its
/// `updatedAt` and ETag stay put and caches stay warm.
pub fn upsert_page(tx: &Transaction<'_>, page: &LandingPage) -> Result<Change> {
    let body = serde_json::to_string(&page.body).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let key = params![page.vertical.as_str(), page.lang.as_str(), page.slug.as_str()];
    let existing: Option<(String, String, String, String, bool)> = tx
        .query_row("SELECT type, title, description, body, published FROM landing_pages WHERE vertical = ?1 AND lang = ?2 AND slug = ?3", key, |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let now = now_rfc3339();
    let row = params![
        page.vertical.as_str(),
        page.lang.as_str(),
        page.slug.as_str(),
        page.page_type.as_str(),
        page.title,
        page.description,
        body,
        page.published,
        now
    ];
    match existing {
        None => {
            tx.execute(
                "INSERT INTO landing_pages (vertical, lang, slug, type, title, description, body, published, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                row,
            )?;
            Ok(Change::Created)
        }
        Some(old) if old == (page.page_type.as_str().to_owned(), page.title.clone(), page.description.clone(), body.clone(), page.published) => {
            Ok(Change::Unchanged)
        }
        Some(_) => {
            tx.execute(
                "UPDATE landing_pages SET type = ?4, title = ?5, description = ?6, body = ?7, published = ?8, updated_at = ?9
                 WHERE vertical = ?1 AND lang = ?2 AND slug = ?3",
                row,
            )?;
            Ok(Change::Updated)
        }
    }
}

/// Publishes or withdraws a page; `NotFound` when there is no such page.
pub fn set_published(tx: &Transaction<'_>, vertical: &str, lang: &str, slug: &str, published: bool) -> Result<Change> {
    let n = tx.execute(
        "UPDATE landing_pages SET published = ?4, updated_at = ?5 WHERE vertical = ?1 AND lang = ?2 AND slug = ?3 AND published != ?4",
        params![vertical, lang, slug, published, now_rfc3339()],
    )?;
    if n > 0 {
        return Ok(Change::Updated);
    }
    let exists =
        tx.query_row("SELECT 1 FROM landing_pages WHERE vertical = ?1 AND lang = ?2 AND slug = ?3", params![vertical, lang, slug], |_| Ok(())).optional()?;
    exists.map(|_| Change::Unchanged).ok_or(StoreError::NotFound)
}

/// The payload of a published page, with only published alternates; its `updatedAt` is the last change
/// of the payload (the page's own, or a listed alternate's publishing or withdrawal). `None` for drafts
/// and unknown pages.
pub fn published_page(conn: &Connection, vertical: &str, lang: &str, slug: &str) -> Result<Option<LandingPayload>> {
    let row: Option<(String, String, String, String, String)> = conn
        .query_row(
            "SELECT type, title, description, body, updated_at FROM landing_pages
             WHERE vertical = ?1 AND lang = ?2 AND slug = ?3 AND published = 1",
            params![vertical, lang, slug],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    let Some((page_type, title, description, body, mut updated_at)) = row else { return Ok(None) };
    let body: PageBody = serde_json::from_str(&body).map_err(|e| StoreError::Invalid(format!("stored page body: {e}")))?;
    let mut stmt = conn.prepare_cached("SELECT published, updated_at FROM landing_pages WHERE vertical = ?1 AND lang = ?2 AND slug = ?3")?;
    let mut alternates = Vec::with_capacity(body.alternates.len());
    for alt in body.alternates {
        let Some((published, at)) = stmt.query_row(params![vertical, alt.lang, alt.slug], |r| Ok((r.get::<_, bool>(0)?, r.get::<_, String>(1)?))).optional()?
        else {
            continue;
        };
        // A withdrawn alternate changes this payload too: its time counts even though it is not listed.
        updated_at = updated_at.max(at);
        if published {
            alternates.push(Alternate { lang: alt.lang, slug: alt.slug });
        }
    }
    Ok(Some(LandingPayload {
        site: vertical.to_owned(),
        lang: lang.to_owned(),
        slug: slug.to_owned(),
        page_type: PageType::parse(&page_type).ok_or_else(|| StoreError::Invalid(format!("stored page type `{page_type}`")))?,
        title,
        description,
        faq: body.faq,
        features: body.features,
        stats: body.stats,
        alternates,
        updated_at,
    }))
}

/// Every published page of a vertical, sorted by (lang, type, slug), and the latest change of any page
/// in it; `None` when the vertical does not exist.
pub fn sitemap(conn: &Connection, vertical: &str) -> Result<Option<(Vec<SitemapEntry>, String)>> {
    let Some(v) = get_vertical(conn, vertical)? else { return Ok(None) };
    let latest: Option<String> = conn.query_row("SELECT max(updated_at) FROM landing_pages WHERE vertical = ?1", [vertical], |r| r.get(0))?;
    let mut stmt =
        conn.prepare_cached("SELECT slug, lang, type, updated_at FROM landing_pages WHERE vertical = ?1 AND published = 1 ORDER BY lang, type, slug")?;
    let rows = stmt.query_map([vertical], |r| {
        let t: String = r.get(2)?;
        Ok(SitemapEntry {
            slug: r.get(0)?,
            lang: r.get(1)?,
            page_type: PageType::parse(&t).ok_or_else(|| bad(2, crate::domain::Invalid(format!("stored page type `{t}`"))))?,
            updated_at: r.get(3)?,
        })
    })?;
    let entries = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some((entries, latest.unwrap_or(v.updated_at).max(v.created_at))))
}

/// A page as the admin CLI lists it, drafts included.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageSummary {
    pub site: String,
    pub lang: String,
    pub slug: String,
    #[serde(rename = "type")]
    pub page_type: String,
    pub title: String,
    pub published: bool,
    pub updated_at: String,
}

pub fn list_pages(conn: &Connection, vertical: Option<&str>) -> Result<Vec<PageSummary>> {
    let mut stmt = conn.prepare(
        "SELECT vertical, lang, slug, type, title, published, updated_at FROM landing_pages
         WHERE ?1 IS NULL OR vertical = ?1 ORDER BY vertical, lang, type, slug",
    )?;
    let rows = stmt.query_map([vertical], |r| {
        Ok(PageSummary {
            site: r.get(0)?,
            lang: r.get(1)?,
            slug: r.get(2)?,
            page_type: r.get(3)?,
            title: r.get(4)?,
            published: r.get(5)?,
            updated_at: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
