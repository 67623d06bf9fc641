//! Verticals and their landing pages.
//!
//! Content is operator data shared by every site of a vertical, not tenant data, so these functions
//! take a vertical slug rather than a `SiteId`. Only published pages leave this module through the read
//! functions the public routes use; a draft is never read there, not even as an alternate's slug. The
//! store returns rows; `content::page` builds the payloads from them.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{Alternate, Currency, LandingPage, Lang, PageBody, PageType, Slug, Timestamp};

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
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
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

fn vertical_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Vertical, String)> {
    Ok((
        Vertical {
            slug: r.get(0)?,
            name: r.get(1)?,
            default_lang: r.get(2)?,
            default_currency: r.get(3)?,
            langs: Vec::new(),
            created_at: r.get(5)?,
            updated_at: r.get(6)?,
        },
        r.get(4)?,
    ))
}

fn finish_vertical((mut v, langs): (Vertical, String)) -> Result<Vertical> {
    v.langs = langs.split(',').map(Lang::parse).collect::<std::result::Result<_, _>>().map_err(|e| StoreError::corrupt("verticals.langs", e))?;
    Ok(v)
}

const VERTICAL_COLUMNS: &str = "slug, name, default_lang, default_currency, langs, created_at, updated_at";

fn langs_column(langs: &[Lang]) -> String {
    langs.iter().map(Lang::as_str).collect::<Vec<_>>().join(",")
}

/// Validates and normalises a new vertical: the default language is always offered, and first.
fn normalise(mut v: NewVertical) -> Result<NewVertical> {
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

fn get_vertical(conn: &Connection, slug: &Slug) -> Result<Option<Vertical>> {
    conn.query_row(&format!("SELECT {VERTICAL_COLUMNS} FROM verticals WHERE slug = ?1"), [slug], vertical_row).optional_row()?.map(finish_vertical).transpose()
}

/// Inserts or updates a page by (vertical, lang, slug). An identical re-import changes nothing, so its
/// `updatedAt` and ETag stay put and caches stay warm.
fn upsert_page(tx: &Transaction<'_>, page: &LandingPage) -> Result<Change> {
    let body = serde_json::to_string(&page.body).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let key = params![page.vertical, page.lang, page.slug];
    let existing: Option<(PageType, String, String, String, bool)> = tx
        .query_row("SELECT type, title, description, body, published FROM landing_pages WHERE vertical = ?1 AND lang = ?2 AND slug = ?3", key, |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional_row()?;
    let row = params![page.vertical, page.lang, page.slug, page.page_type, page.title, page.description, body, page.published, Timestamp::now()];
    match existing {
        None => {
            tx.execute(
                "INSERT INTO landing_pages (vertical, lang, slug, type, title, description, body, published, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                row,
            )?;
            Ok(Change::Created)
        }
        Some(old) if old == (page.page_type, page.title.clone(), page.description.clone(), body.clone(), page.published) => Ok(Change::Unchanged),
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

/// A published page as stored, with the state of each alternate its body names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedPage {
    pub page_type: PageType,
    pub title: String,
    pub description: String,
    pub body: PageBody,
    pub updated_at: Timestamp,
    /// Each alternate of the body that exists, with whether it is published and when it last changed.
    pub alternates: Vec<(Alternate, bool, Timestamp)>,
}

/// A published page as a sitemap lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapRow {
    pub slug: Slug,
    pub lang: Lang,
    pub page_type: PageType,
    pub updated_at: Timestamp,
}

/// A page as the admin CLI lists it, drafts included.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageSummary {
    pub site: Slug,
    pub lang: Lang,
    pub slug: Slug,
    #[serde(rename = "type")]
    pub page_type: PageType,
    pub title: String,
    pub published: bool,
    pub updated_at: Timestamp,
}

/// Verticals and their landing pages.
pub struct Content<'s> {
    store: &'s Store,
}

impl<'s> Content<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Creates a vertical; `Conflict` when the slug exists.
    pub fn create_vertical(&self, new: NewVertical) -> Result<Vertical> {
        let v = normalise(new)?;
        self.store.write(|tx| {
            if get_vertical(tx, &v.slug)?.is_some() {
                return Err(StoreError::Conflict(format!("vertical `{}` exists", v.slug)));
            }
            tx.execute(
                "INSERT INTO verticals (slug, name, default_lang, default_currency, langs, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![v.slug, v.name, v.default_lang, v.default_currency, langs_column(&v.langs), Timestamp::now()],
            )?;
            get_vertical(tx, &v.slug)?.ok_or(StoreError::NotFound)
        })
    }

    /// Creates the vertical unless it exists; returns whether it did.
    pub fn ensure_vertical(&self, new: NewVertical) -> Result<bool> {
        match self.create_vertical(new) {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Replaces a vertical's name, defaults and languages. A language still used by a page cannot be
    /// dropped, and the default must be one every tier of the price list has texts in.
    pub fn update_vertical(&self, new: NewVertical) -> Result<Vertical> {
        let v = normalise(new)?;
        self.store.write(|tx| {
            let slug = &v.slug;
            if get_vertical(tx, slug)?.is_none() {
                return Err(StoreError::NotFound);
            }
            let mut stmt = tx.prepare("SELECT DISTINCT lang FROM landing_pages WHERE vertical = ?1 ORDER BY lang")?;
            let used: Vec<Lang> = stmt.query_map([slug], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            let dropped: Vec<&str> = used.iter().filter(|u| !v.langs.contains(u)).map(Lang::as_str).collect();
            if !dropped.is_empty() {
                return Err(StoreError::Conflict(format!("pages exist in {}; keep those languages offered", dropped.join(", "))));
            }
            if let Some(sheet) = super::pricing::sheet(tx, slug)?
                && let Some(t) = sheet.tiers.iter().find(|t| !t.i18n.contains_key(v.default_lang.as_str()))
            {
                return Err(StoreError::Conflict(format!("tier `{}` has no `{}` texts; import a price list with them first", t.id, v.default_lang)));
            }
            tx.execute(
                "UPDATE verticals SET name = ?2, default_lang = ?3, default_currency = ?4, langs = ?5, updated_at = ?6 WHERE slug = ?1",
                params![slug, v.name, v.default_lang, v.default_currency, langs_column(&v.langs), Timestamp::now()],
            )?;
            get_vertical(tx, slug)?.ok_or(StoreError::NotFound)
        })
    }

    pub fn vertical(&self, slug: &Slug) -> Result<Option<Vertical>> {
        self.store.read(|conn| get_vertical(conn, slug))
    }

    pub fn verticals(&self) -> Result<Vec<Vertical>> {
        self.store.read(|conn| {
            let mut stmt = conn.prepare(&format!("SELECT {VERTICAL_COLUMNS} FROM verticals ORDER BY slug"))?;
            let rows = stmt.query_map([], vertical_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter().map(finish_vertical).collect()
        })
    }

    /// Inserts or updates every page in one transaction: all of them, or none.
    pub fn upsert_pages(&self, pages: &[LandingPage]) -> Result<Vec<Change>> {
        self.store.write(|tx| pages.iter().map(|p| upsert_page(tx, p)).collect())
    }

    /// Publishes or withdraws a page; `NotFound` when there is no such page.
    pub fn set_published(&self, vertical: &Slug, lang: &Lang, slug: &Slug, published: bool) -> Result<Change> {
        self.store.write(|tx| {
            let n = tx.execute(
                "UPDATE landing_pages SET published = ?4, updated_at = ?5 WHERE vertical = ?1 AND lang = ?2 AND slug = ?3 AND published != ?4",
                params![vertical, lang, slug, published, Timestamp::now()],
            )?;
            if n > 0 {
                return Ok(Change::Updated);
            }
            let exists = tx
                .query_row("SELECT 1 FROM landing_pages WHERE vertical = ?1 AND lang = ?2 AND slug = ?3", params![vertical, lang, slug], |_| Ok(()))
                .optional_row()?;
            exists.map(|_| Change::Unchanged).ok_or(StoreError::NotFound)
        })
    }

    /// A published page with its alternates' states; `None` for drafts and unknown pages.
    pub fn published_page(&self, vertical: &Slug, lang: &Lang, slug: &Slug) -> Result<Option<PublishedPage>> {
        self.store.read(|conn| {
            let row: Option<(PageType, String, String, String, Timestamp)> = conn
                .query_row(
                    "SELECT type, title, description, body, updated_at FROM landing_pages
                     WHERE vertical = ?1 AND lang = ?2 AND slug = ?3 AND published = 1",
                    params![vertical, lang, slug],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional_row()?;
            let Some((page_type, title, description, body, updated_at)) = row else { return Ok(None) };
            let body: PageBody = serde_json::from_str(&body).map_err(|e| StoreError::corrupt("landing_pages.body", e))?;
            let mut stmt = conn.prepare_cached("SELECT published, updated_at FROM landing_pages WHERE vertical = ?1 AND lang = ?2 AND slug = ?3")?;
            let mut alternates = Vec::with_capacity(body.alternates.len());
            for alt in &body.alternates {
                let state = stmt.query_row(params![vertical, alt.lang, alt.slug], |r| Ok((r.get::<_, bool>(0)?, r.get::<_, Timestamp>(1)?))).optional_row()?;
                if let Some((published, at)) = state {
                    alternates.push((alt.clone(), published, at));
                }
            }
            Ok(Some(PublishedPage { page_type, title, description, body, updated_at, alternates }))
        })
    }

    /// Every published page of a vertical, sorted by (lang, type, slug), and the latest change of any page
    /// in it (or of the vertical); `None` when the vertical does not exist.
    pub fn sitemap(&self, vertical: &Slug) -> Result<Option<(Vec<SitemapRow>, Timestamp)>> {
        self.store.read(|conn| {
            let Some(v) = get_vertical(conn, vertical)? else { return Ok(None) };
            let latest: Option<Timestamp> = conn.query_row("SELECT max(updated_at) FROM landing_pages WHERE vertical = ?1", [vertical], |r| r.get(0))?;
            let mut stmt =
                conn.prepare_cached("SELECT slug, lang, type, updated_at FROM landing_pages WHERE vertical = ?1 AND published = 1 ORDER BY lang, type, slug")?;
            let rows = stmt.query_map([vertical], |r| Ok(SitemapRow { slug: r.get(0)?, lang: r.get(1)?, page_type: r.get(2)?, updated_at: r.get(3)? }))?;
            let entries = rows.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Some((entries, latest.unwrap_or(v.updated_at).max(v.created_at))))
        })
    }

    pub fn list_pages(&self, vertical: Option<&Slug>) -> Result<Vec<PageSummary>> {
        self.store.read(|conn| {
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
        })
    }
}
