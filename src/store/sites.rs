//! Sites (tenants): their settings, credentials and allowed origins.

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, StoreError, now_rfc3339};
use crate::domain::{Currency, Lang, Origin, SiteId, Tier, WebhookUrl};
use crate::secrets::{self, Keyring};

/// Event types a site can opt in to.
pub const EVENT_TYPES: &[&str] = &["lead.captured", "query.completed"];

/// How long the previous signing secret keeps signing after a rotation.
pub const ROTATION_OVERLAP: chrono::Duration = chrono::Duration::hours(24);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Site {
    pub id: SiteId,
    pub name: String,
    pub vertical: String,
    pub tier: Tier,
    pub currency: Currency,
    pub lang: Lang,
    pub enabled: bool,
    pub allowed_origins: Vec<Origin>,
    pub webhook_url: Option<String>,
    pub webhook_events: Vec<String>,
    /// Set when the receiver answered 410 Gone; delivery stops until the URL is set again.
    pub webhook_disabled_at: Option<String>,
    pub has_bearer_token: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl Site {
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins.is_empty() || self.allowed_origins.iter().any(|o| o.as_str() == origin)
    }

    pub fn wants_event(&self, event: &str) -> bool {
        self.webhook_events.iter().any(|e| e == event)
    }
}

#[derive(Debug, Clone)]
pub struct NewSite {
    pub name: String,
    pub vertical: String,
    pub tier: Tier,
    pub currency: Currency,
    pub lang: Lang,
    pub allowed_origins: Vec<Origin>,
    pub webhook_url: Option<WebhookUrl>,
    pub webhook_events: Vec<String>,
}

/// Secrets shown once, at creation or rotation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteCredentials {
    pub site_id: SiteId,
    pub webhook_secret: Option<String>,
    pub bearer_token: Option<String>,
}

/// Fields to change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SiteUpdate {
    pub name: Option<String>,
    pub vertical: Option<String>,
    pub tier: Option<Tier>,
    pub currency: Option<Currency>,
    pub lang: Option<Lang>,
    pub allowed_origins: Option<Vec<Origin>>,
    /// `Some(None)` removes the webhook.
    pub webhook_url: Option<Option<WebhookUrl>>,
    pub webhook_events: Option<Vec<String>>,
}

pub fn validate_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(StoreError::Invalid("a site name is 1 to 200 characters".into()));
    }
    Ok(name.to_owned())
}

pub fn validate_events(events: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for e in events {
        let e = e.trim();
        if !EVENT_TYPES.contains(&e) {
            return Err(StoreError::Invalid(format!("unknown event type `{e}`; known: {}", EVENT_TYPES.join(", "))));
        }
        if !out.iter().any(|x| x == e) {
            out.push(e.to_owned());
        }
    }
    Ok(out)
}

const COLUMNS: &str = "id, name, vertical, tier, currency, lang, enabled, webhook_url, webhook_events, \
                       webhook_disabled_at, token_hash IS NOT NULL, created_at, updated_at";

fn row_to_site(conn: &Connection, r: &rusqlite::Row<'_>) -> rusqlite::Result<Site> {
    let id: SiteId = r.get(0)?;
    let bad = |i: usize, e: crate::domain::Invalid| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e));
    let tier: String = r.get(3)?;
    let currency: String = r.get(4)?;
    let lang: String = r.get(5)?;
    let events: String = r.get(8)?;
    Ok(Site {
        id,
        name: r.get(1)?,
        vertical: r.get(2)?,
        tier: tier.parse().map_err(|e| bad(3, e))?,
        currency: Currency::parse(&currency).map_err(|e| bad(4, e))?,
        lang: Lang::parse(&lang).map_err(|e| bad(5, e))?,
        enabled: r.get(6)?,
        allowed_origins: origins_of(conn, &id)?,
        webhook_url: r.get(7)?,
        webhook_events: events.split(',').filter(|s| !s.is_empty()).map(String::from).collect(),
        webhook_disabled_at: r.get(9)?,
        has_bearer_token: r.get(10)?,
        created_at: r.get(11)?,
        updated_at: r.get(12)?,
    })
}

fn origins_of(conn: &Connection, id: &SiteId) -> rusqlite::Result<Vec<Origin>> {
    let mut stmt = conn.prepare_cached("SELECT origin FROM site_origins WHERE site_id = ?1 ORDER BY origin")?;
    let rows = stmt.query_map([id], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for o in rows {
        // Stored origins were validated on the way in; an unparsable one is skipped, not fatal.
        if let Ok(o) = Origin::parse(&o?) {
            out.push(o);
        }
    }
    Ok(out)
}

fn set_origins(tx: &Transaction<'_>, id: &SiteId, origins: &[Origin]) -> Result<()> {
    tx.execute("DELETE FROM site_origins WHERE site_id = ?1", [id])?;
    let mut stmt = tx.prepare_cached("INSERT OR IGNORE INTO site_origins (site_id, origin) VALUES (?1, ?2)")?;
    for o in origins {
        stmt.execute(params![id, o.as_str()])?;
    }
    Ok(())
}

pub fn create(tx: &Transaction<'_>, keyring: &Keyring, new: NewSite) -> Result<(Site, SiteCredentials)> {
    let id = SiteId::new_random();
    let name = validate_name(&new.name)?;
    let events = validate_events(&new.webhook_events)?;
    let secret = secrets::new_webhook_secret();
    let token = new.tier.has_bearer_token().then(secrets::new_bearer_token);
    let now = now_rfc3339();
    tx.execute(
        "INSERT INTO sites (id, name, vertical, tier, currency, lang, webhook_url, webhook_events, token_hash, secret_sealed, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
        params![
            id,
            name,
            new.vertical,
            new.tier.as_str(),
            new.currency.code(),
            new.lang.as_str(),
            new.webhook_url.as_ref().map(|u| u.as_str()),
            events.join(","),
            token.as_deref().map(|t| secrets::token_hash(t).to_vec()),
            keyring.seal(&secret),
            now,
        ],
    )?;
    set_origins(tx, &id, &new.allowed_origins)?;
    let site = get(tx, &id)?.ok_or(StoreError::NotFound)?;
    Ok((site, SiteCredentials { site_id: id, webhook_secret: Some(secret), bearer_token: token }))
}

pub fn get(conn: &Connection, id: &SiteId) -> Result<Option<Site>> {
    conn.query_row(&format!("SELECT {COLUMNS} FROM sites WHERE id = ?1"), [id], |r| row_to_site(conn, r)).optional_row()
}

pub fn list(conn: &Connection) -> Result<Vec<Site>> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM sites ORDER BY created_at, id"))?;
    let rows = stmt.query_map([], |r| row_to_site(conn, r))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The site a bearer token belongs to. The lookup is by hash (256-bit random tokens make the hash
/// itself safe to index); the caller compares again in constant time.
pub fn find_by_token(conn: &Connection, token: &str) -> Result<Option<Site>> {
    let hash = secrets::token_hash(token);
    let found: Option<(String, Vec<u8>)> =
        conn.query_row("SELECT id, token_hash FROM sites WHERE token_hash = ?1", [hash.to_vec()], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
    match found {
        Some((id, stored)) if secrets::ct_eq(&stored, &hash) => get(conn, &SiteId::parse(&id).map_err(|e| StoreError::Invalid(e.to_string()))?),
        _ => Ok(None),
    }
}

/// True when any enabled site accepts this browser origin (used to answer CORS preflights, which carry
/// no `X-Site-Id`; the actual request is then checked against its own site).
pub fn origin_allowed_by_any(conn: &Connection, origin: &str) -> Result<bool> {
    let open: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sites s WHERE s.enabled AND NOT EXISTS (SELECT 1 FROM site_origins o WHERE o.site_id = s.id))
             OR EXISTS (SELECT 1 FROM site_origins o JOIN sites s ON s.id = o.site_id WHERE o.origin = ?1 AND s.enabled)",
        [origin],
        |r| r.get(0),
    )?;
    Ok(open)
}

/// Applies an update. Returns new credentials when a tier change created a bearer token.
pub fn update(tx: &Transaction<'_>, id: &SiteId, up: SiteUpdate) -> Result<(Site, Option<SiteCredentials>)> {
    let before = get(tx, id)?.ok_or(StoreError::NotFound)?;
    let now = now_rfc3339();
    if let Some(name) = &up.name {
        tx.execute("UPDATE sites SET name = ?2 WHERE id = ?1", params![id, validate_name(name)?])?;
    }
    if let Some(v) = &up.vertical {
        tx.execute("UPDATE sites SET vertical = ?2 WHERE id = ?1", params![id, v])?;
    }
    if let Some(c) = &up.currency {
        tx.execute("UPDATE sites SET currency = ?2 WHERE id = ?1", params![id, c.code()])?;
    }
    if let Some(l) = &up.lang {
        tx.execute("UPDATE sites SET lang = ?2 WHERE id = ?1", params![id, l.as_str()])?;
    }
    if let Some(origins) = &up.allowed_origins {
        set_origins(tx, id, origins)?;
    }
    if let Some(url) = &up.webhook_url {
        // Setting the URL again re-enables an endpoint that a 410 switched off.
        tx.execute("UPDATE sites SET webhook_url = ?2, webhook_disabled_at = NULL WHERE id = ?1", params![id, url.as_ref().map(|u| u.as_str())])?;
    }
    if let Some(events) = &up.webhook_events {
        tx.execute("UPDATE sites SET webhook_events = ?2 WHERE id = ?1", params![id, validate_events(events)?.join(",")])?;
    }
    let mut creds = None;
    if let Some(tier) = up.tier {
        tx.execute("UPDATE sites SET tier = ?2 WHERE id = ?1", params![id, tier.as_str()])?;
        if tier.has_bearer_token() && !before.has_bearer_token {
            creds = Some(SiteCredentials { site_id: *id, webhook_secret: None, bearer_token: Some(set_token(tx, id)?) });
        } else if !tier.has_bearer_token() {
            tx.execute("UPDATE sites SET token_hash = NULL WHERE id = ?1", [id])?;
        }
    }
    tx.execute("UPDATE sites SET updated_at = ?2 WHERE id = ?1", params![id, now])?;
    Ok((get(tx, id)?.ok_or(StoreError::NotFound)?, creds))
}

pub fn set_enabled(tx: &Transaction<'_>, id: &SiteId, enabled: bool) -> Result<Site> {
    let n = tx.execute("UPDATE sites SET enabled = ?2, updated_at = ?3 WHERE id = ?1", params![id, enabled, now_rfc3339()])?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    get(tx, id)?.ok_or(StoreError::NotFound)
}

fn set_token(tx: &Transaction<'_>, id: &SiteId) -> Result<String> {
    let token = secrets::new_bearer_token();
    tx.execute("UPDATE sites SET token_hash = ?2 WHERE id = ?1", params![id, secrets::token_hash(&token).to_vec()])?;
    Ok(token)
}

/// Replaces the bearer token; the old one stops working at once.
pub fn rotate_token(tx: &Transaction<'_>, id: &SiteId) -> Result<String> {
    let site = get(tx, id)?.ok_or(StoreError::NotFound)?;
    if !site.tier.has_bearer_token() {
        return Err(StoreError::Conflict(format!("site {id} is on the starter tier, which has no bearer token")));
    }
    let token = set_token(tx, id)?;
    tx.execute("UPDATE sites SET updated_at = ?2 WHERE id = ?1", params![id, now_rfc3339()])?;
    Ok(token)
}

/// Replaces the webhook signing secret; the previous one keeps signing (as a second signature) for 24 h.
pub fn rotate_secret(tx: &Transaction<'_>, keyring: &Keyring, id: &SiteId) -> Result<String> {
    let secret = secrets::new_webhook_secret();
    let until = (chrono::Utc::now() + ROTATION_OVERLAP).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let n = tx.execute(
        "UPDATE sites SET prev_secret_sealed = secret_sealed, prev_secret_until = ?2, secret_sealed = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, until, keyring.seal(&secret), now_rfc3339()],
    )?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(secret)
}

/// The secrets that sign a delivery now: the current one, and the previous one during its overlap.
pub fn signing_secrets(conn: &Connection, keyring: &Keyring, id: &SiteId) -> Result<Vec<String>> {
    let (current, prev, until): (Vec<u8>, Option<Vec<u8>>, Option<String>) = conn
        .query_row("SELECT secret_sealed, prev_secret_sealed, prev_secret_until FROM sites WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional_row()?
        .ok_or(StoreError::NotFound)?;
    let mut out = vec![keyring.open(&current)?];
    if let (Some(prev), Some(until)) = (prev, until)
        && until > now_rfc3339()
    {
        out.push(keyring.open(&prev)?);
    }
    Ok(out)
}

/// A small key-value table for installation facts (the demo site's id).
pub fn meta_get(conn: &Connection, key: &str) -> Result<Option<String>> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional_row()
}

pub fn meta_set(tx: &Transaction<'_>, key: &str, value: &str) -> Result<()> {
    tx.execute("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", params![key, value])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), Keyring::from_bytes(&[1; 32])).unwrap();
        (dir, store)
    }

    fn new_site(name: &str, tier: Tier, origins: &[&str]) -> NewSite {
        NewSite {
            name: name.into(),
            vertical: "dental".into(),
            tier,
            currency: Currency::parse("EUR").unwrap(),
            lang: Lang::parse("en").unwrap(),
            allowed_origins: origins.iter().map(|o| Origin::parse(o).unwrap()).collect(),
            webhook_url: None,
            webhook_events: vec!["lead.captured".into()],
        }
    }

    #[test]
    fn create_then_read_back() {
        let (_d, store) = store();
        let keyring = store.keyring().clone();
        let (site, creds) = store.write_blocking(|tx| create(tx, &keyring, new_site("A", Tier::Pro, &["https://a.example"]))).unwrap();
        assert!(creds.bearer_token.is_some());
        let got = store.read_blocking(|c| get(c, &site.id)).unwrap().unwrap();
        assert_eq!(got.name, "A");
        assert!(got.has_bearer_token);
        assert!(got.allows_origin("https://a.example"));
        assert!(!got.allows_origin("https://b.example"));
        let by_token = store.read_blocking(|c| find_by_token(c, creds.bearer_token.as_deref().unwrap())).unwrap().unwrap();
        assert_eq!(by_token.id, site.id);
        assert!(store.read_blocking(|c| find_by_token(c, "sbt_wrong")).unwrap().is_none());
        let secrets = store.read_blocking(|c| signing_secrets(c, &keyring, &site.id)).unwrap();
        assert_eq!(secrets, vec![creds.webhook_secret.unwrap()]);
    }

    #[test]
    fn a_site_never_reads_another_sites_rows() {
        let (_d, store) = store();
        let keyring = store.keyring().clone();
        let (a, _) = store.write_blocking(|tx| create(tx, &keyring, new_site("A", Tier::Starter, &["https://a.example"]))).unwrap();
        let (b, _) = store.write_blocking(|tx| create(tx, &keyring, new_site("B", Tier::Starter, &["https://b.example"]))).unwrap();
        let got_a = store.read_blocking(|c| get(c, &a.id)).unwrap().unwrap();
        assert_eq!(got_a.allowed_origins.iter().map(|o| o.as_str()).collect::<Vec<_>>(), vec!["https://a.example"]);
        let got_b = store.read_blocking(|c| get(c, &b.id)).unwrap().unwrap();
        assert_eq!(got_b.name, "B");
        assert!(!got_b.allows_origin("https://a.example"));
        assert!(store.read_blocking(|c| get(c, &SiteId::new_random())).unwrap().is_none());
    }

    #[test]
    fn rotation_keeps_the_previous_secret_for_a_day() {
        let (_d, store) = store();
        let keyring = store.keyring().clone();
        let (site, creds) = store.write_blocking(|tx| create(tx, &keyring, new_site("A", Tier::Starter, &[]))).unwrap();
        let k2 = keyring.clone();
        let new_secret = store.write_blocking(move |tx| rotate_secret(tx, &k2, &site.id)).unwrap();
        let secrets = store.read_blocking(|c| signing_secrets(c, &keyring, &site.id)).unwrap();
        assert_eq!(secrets, vec![new_secret, creds.webhook_secret.unwrap()]);
        assert!(matches!(store.write_blocking(|tx| rotate_token(tx, &site.id)), Err(StoreError::Conflict(_))));
    }

    #[test]
    fn tier_changes_create_and_drop_tokens() {
        let (_d, store) = store();
        let keyring = store.keyring().clone();
        let (site, _) = store.write_blocking(|tx| create(tx, &keyring, new_site("A", Tier::Starter, &[]))).unwrap();
        let (s, creds) = store.write_blocking(|tx| update(tx, &site.id, SiteUpdate { tier: Some(Tier::Pro), ..Default::default() })).unwrap();
        assert!(s.has_bearer_token && creds.unwrap().bearer_token.is_some());
        let (s, creds) = store.write_blocking(|tx| update(tx, &site.id, SiteUpdate { tier: Some(Tier::Starter), ..Default::default() })).unwrap();
        assert!(!s.has_bearer_token && creds.is_none());
    }

    #[test]
    fn preflight_origin_check_spans_enabled_sites() {
        let (_d, store) = store();
        let keyring = store.keyring().clone();
        let (a, _) = store.write_blocking(|tx| create(tx, &keyring, new_site("A", Tier::Starter, &["https://a.example"]))).unwrap();
        assert!(store.read_blocking(|c| origin_allowed_by_any(c, "https://a.example")).unwrap());
        assert!(!store.read_blocking(|c| origin_allowed_by_any(c, "https://evil.example")).unwrap());
        store.write_blocking(|tx| set_enabled(tx, &a.id, false)).unwrap();
        assert!(!store.read_blocking(|c| origin_allowed_by_any(c, "https://a.example")).unwrap());
    }
}
