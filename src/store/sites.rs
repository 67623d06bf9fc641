//! Sites (tenants): their settings, credentials and allowed origins. [`Sites`] is the operator's view
//! (create, list, find by token); `tenant::SiteStore` is bound to one site and is the only way to its data.

use rusqlite::{Connection, Transaction, params};
use serde::Serialize;

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{
    AnswerMode, ClosedDates, Currency, EventType, HexColor, Lang, OpeningHours, Origin, SiteId, Slug, Tier, TimeZone, Timestamp, WebhookUrl, WeeklyHours,
    WidgetPosition,
};
use crate::secrets;

/// How long the previous signing secret keeps signing after a rotation.
pub const ROTATION_OVERLAP: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Site {
    pub id: SiteId,
    pub name: String,
    pub vertical: Slug,
    pub tier: Tier,
    pub currency: Currency,
    pub lang: Lang,
    pub enabled: bool,
    pub allowed_origins: Vec<Origin>,
    pub webhook_url: Option<WebhookUrl>,
    pub webhook_events: Vec<EventType>,
    /// Set when the receiver answered 410 Gone; delivery stops until the URL is set again.
    pub webhook_disabled_at: Option<Timestamp>,
    pub has_bearer_token: bool,
    pub widget: WidgetSettings,
    /// Whether the operator's language model writes this site's answers (when one is configured).
    pub answers: AnswerMode,
    /// Live hand-off to the site's staff.
    pub handoff: HandoffSettings,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// How the site's widget looks and what it offers (`GET /v1/widget/config`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSettings {
    pub primary_color: HexColor,
    pub position: WidgetPosition,
    /// Greeting per language tag.
    pub greeting: std::collections::BTreeMap<String, String>,
    pub lead_form: bool,
}

/// How long a visitor waits for a person before the contact form is offered, unless the site says.
pub const DEFAULT_HANDOFF_WAIT_SECS: u32 = 120;
/// The longest wait a site may set, in seconds.
pub const MAX_HANDOFF_WAIT_SECS: u32 = 3600;

/// Live hand-off: on or off, when a person can come, and how long a visitor waits for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffSettings {
    pub enabled: bool,
    pub hours: OpeningHours,
    pub wait_secs: u32,
}

impl Serialize for HandoffSettings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("HandoffSettings", 5)?;
        st.serialize_field("enabled", &self.enabled)?;
        st.serialize_field("hours", &self.hours.weekly.to_string())?;
        st.serialize_field("closedDates", &self.hours.closed.to_string())?;
        st.serialize_field("timeZone", self.hours.zone.name())?;
        st.serialize_field("waitSecs", &self.wait_secs)?;
        st.end()
    }
}

impl Site {
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins.is_empty() || self.allowed_origins.iter().any(|o| o.as_str() == origin)
    }

    pub fn wants_event(&self, event: EventType) -> bool {
        self.webhook_events.contains(&event)
    }
}

#[derive(Debug, Clone)]
pub struct NewSite {
    pub name: String,
    pub vertical: Slug,
    pub tier: Tier,
    pub currency: Currency,
    pub lang: Lang,
    pub allowed_origins: Vec<Origin>,
    pub webhook_url: Option<WebhookUrl>,
    pub webhook_events: Vec<EventType>,
}

impl NewSite {
    /// A site with no origin restriction, no webhook, and `lead.captured` chosen for when one is set.
    pub fn new(name: impl Into<String>, vertical: Slug, tier: Tier, currency: Currency, lang: Lang) -> NewSite {
        NewSite {
            name: name.into(),
            vertical,
            tier,
            currency,
            lang,
            allowed_origins: Vec::new(),
            webhook_url: None,
            webhook_events: vec![EventType::LeadCaptured],
        }
    }
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
    pub vertical: Option<Slug>,
    pub tier: Option<Tier>,
    pub currency: Option<Currency>,
    pub lang: Option<Lang>,
    pub allowed_origins: Option<Vec<Origin>>,
    /// `Some(None)` removes the webhook.
    pub webhook_url: Option<Option<WebhookUrl>>,
    pub webhook_events: Option<Vec<EventType>>,
    pub widget_color: Option<HexColor>,
    pub widget_position: Option<WidgetPosition>,
    /// Greetings to set (language tag → text); an empty text removes that language's greeting.
    pub widget_greetings: Option<Vec<(Lang, String)>>,
    pub lead_form: Option<bool>,
    pub answers: Option<AnswerMode>,
    pub handoff: Option<bool>,
    /// The weekly schedule; an empty one means open at every hour.
    pub handoff_hours: Option<WeeklyHours>,
    pub handoff_closed: Option<ClosedDates>,
    pub handoff_timezone: Option<TimeZone>,
    /// 1 to [`MAX_HANDOFF_WAIT_SECS`].
    pub handoff_wait_secs: Option<u32>,
}

pub(super) fn validate_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(StoreError::Invalid("a site name is 1 to 200 characters".into()));
    }
    Ok(name.to_owned())
}

/// The opted-in events as stored: comma-separated, each once, in the order given.
pub(super) fn events_column(events: &[EventType]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for e in events {
        if !out.contains(&e.as_str()) {
            out.push(e.as_str());
        }
    }
    out.join(",")
}

fn parse_events(stored: &str) -> Result<Vec<EventType>> {
    stored.split(',').filter(|s| !s.is_empty()).map(|s| s.parse().map_err(|e| StoreError::corrupt("webhook_events", e))).collect()
}

const COLUMNS: &str = "id, name, vertical, tier, currency, lang, enabled, webhook_url, webhook_events, \
                       webhook_disabled_at, token_hash IS NOT NULL, created_at, updated_at, \
                       widget_color, widget_position, widget_greetings, lead_form, answers, \
                       handoff, handoff_hours, handoff_closed, handoff_timezone, handoff_wait_secs";

pub(super) fn get(conn: &Connection, id: &SiteId) -> Result<Option<Site>> {
    let row = conn.query_row(&format!("SELECT {COLUMNS} FROM sites WHERE id = ?1"), [id], site_row).optional_row()?;
    row.map(|row| finish(conn, row)).transpose()
}

/// A `sites` row, without the parts kept elsewhere (origins) or parsed after (events).
fn site_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Site, String, String)> {
    Ok((
        Site {
            id: r.get(0)?,
            name: r.get(1)?,
            vertical: r.get(2)?,
            tier: r.get(3)?,
            currency: r.get(4)?,
            lang: r.get(5)?,
            enabled: r.get(6)?,
            allowed_origins: Vec::new(),
            webhook_url: r.get(7)?,
            webhook_events: Vec::new(),
            webhook_disabled_at: r.get(9)?,
            has_bearer_token: r.get(10)?,
            widget: WidgetSettings { primary_color: r.get(13)?, position: r.get(14)?, greeting: Default::default(), lead_form: r.get(16)? },
            answers: r.get(17)?,
            handoff: HandoffSettings {
                enabled: r.get(18)?,
                hours: OpeningHours { weekly: r.get(19)?, closed: r.get(20)?, zone: r.get(21)? },
                wait_secs: r.get(22)?,
            },
            created_at: r.get(11)?,
            updated_at: r.get(12)?,
        },
        r.get(8)?,
        r.get(15)?,
    ))
}

fn finish(conn: &Connection, (mut site, events, greetings): (Site, String, String)) -> Result<Site> {
    site.webhook_events = parse_events(&events)?;
    site.widget.greeting = serde_json::from_str(&greetings).map_err(|e| StoreError::corrupt("sites.widget_greetings", e))?;
    let mut stmt = conn.prepare_cached("SELECT origin FROM site_origins WHERE site_id = ?1 ORDER BY origin")?;
    site.allowed_origins = stmt.query_map([site.id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(site)
}

pub(super) fn set_origins(tx: &Transaction<'_>, id: &SiteId, origins: &[Origin]) -> Result<()> {
    tx.execute("DELETE FROM site_origins WHERE site_id = ?1", [id])?;
    let mut stmt = tx.prepare_cached("INSERT OR IGNORE INTO site_origins (site_id, origin) VALUES (?1, ?2)")?;
    for o in origins {
        stmt.execute(params![id, o])?;
    }
    Ok(())
}

pub(super) fn set_token(tx: &Transaction<'_>, id: &SiteId) -> Result<String> {
    let token = secrets::new_bearer_token();
    tx.execute("UPDATE sites SET token_hash = ?2 WHERE id = ?1", params![id, secrets::token_hash(&token).to_vec()])?;
    Ok(token)
}

/// The operator's view of all sites.
pub struct Sites<'s> {
    store: &'s Store,
}

impl<'s> Sites<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    pub fn create(&self, new: NewSite) -> Result<(Site, SiteCredentials)> {
        let keyring = self.store.keyring();
        self.store.write(|tx| {
            let id = SiteId::new_random();
            let name = validate_name(&new.name)?;
            let secret = secrets::new_webhook_secret();
            let token = new.tier.has_bearer_token().then(secrets::new_bearer_token);
            let now = Timestamp::now();
            tx.execute(
                "INSERT INTO sites (id, name, vertical, tier, currency, lang, webhook_url, webhook_events, token_hash, secret_sealed, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
                params![
                    id,
                    name,
                    new.vertical,
                    new.tier,
                    new.currency,
                    new.lang,
                    new.webhook_url,
                    events_column(&new.webhook_events),
                    token.as_deref().map(|t| secrets::token_hash(t).to_vec()),
                    keyring.seal(&secret),
                    now,
                ],
            )?;
            set_origins(tx, &id, &new.allowed_origins)?;
            let site = get(tx, &id)?.ok_or(StoreError::NotFound)?;
            Ok((site, SiteCredentials { site_id: id, webhook_secret: Some(secret), bearer_token: token }))
        })
    }

    pub fn list(&self) -> Result<Vec<Site>> {
        self.store.read(|conn| {
            let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM sites ORDER BY created_at, id"))?;
            let rows = stmt.query_map([], site_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter().map(|row| finish(conn, row)).collect()
        })
    }

    /// The site a bearer token belongs to. 256-bit random tokens make their SHA-256 safe to index, so
    /// the lookup is by hash: the database compares hashes, never the token, and a guess that misses
    /// learns nothing from timing about any stored token.
    pub fn find_by_token(&self, token: &str) -> Result<Option<Site>> {
        let hash = secrets::token_hash(token).to_vec();
        self.store.read(|conn| {
            let id: Option<SiteId> = conn.query_row("SELECT id FROM sites WHERE token_hash = ?1", [hash], |r| r.get(0)).optional_row()?;
            id.map(|id| get(conn, &id)).transpose().map(Option::flatten)
        })
    }

    /// True when any enabled site accepts this browser origin (used to answer CORS preflights, which carry
    /// no `X-Site-Id`; the actual request is then checked against its own site).
    pub fn origin_allowed_by_any(&self, origin: &str) -> Result<bool> {
        self.store.read(|conn| {
            Ok(conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM sites s WHERE s.enabled AND NOT EXISTS (SELECT 1 FROM site_origins o WHERE o.site_id = s.id))
                     OR EXISTS (SELECT 1 FROM site_origins o JOIN sites s ON s.id = o.site_id WHERE o.origin = ?1 AND s.enabled)",
                [origin],
                |r| r.get(0),
            )?)
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), crate::secrets::Keyring::from_bytes(&[1; 32])).unwrap();
        (dir, store)
    }

    pub(crate) fn new_site(name: &str, tier: Tier, origins: &[&str]) -> NewSite {
        let mut new = NewSite::new(name, Slug::vertical("dental").unwrap(), tier, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        new.allowed_origins = origins.iter().map(|o| Origin::parse(o).unwrap()).collect();
        new
    }

    #[test]
    fn create_then_read_back() {
        let (_d, store) = store();
        let (site, creds) = store.sites().create(new_site("A", Tier::Pro, &["https://a.example"])).unwrap();
        assert!(creds.bearer_token.is_some());
        let got = store.site(site.id).get().unwrap().unwrap();
        assert_eq!(got.name, "A");
        assert!(got.has_bearer_token);
        assert!(got.allows_origin("https://a.example"));
        assert!(!got.allows_origin("https://b.example"));
        let by_token = store.sites().find_by_token(creds.bearer_token.as_deref().unwrap()).unwrap().unwrap();
        assert_eq!(by_token.id, site.id);
        assert!(store.sites().find_by_token("sbt_wrong").unwrap().is_none());
        let secrets = store.site(site.id).signing_secrets().unwrap();
        assert_eq!(secrets, vec![creds.webhook_secret.unwrap()]);
    }

    #[test]
    fn a_site_never_reads_another_sites_rows() {
        let (_d, store) = store();
        let (a, _) = store.sites().create(new_site("A", Tier::Starter, &["https://a.example"])).unwrap();
        let (b, _) = store.sites().create(new_site("B", Tier::Starter, &["https://b.example"])).unwrap();
        let got_a = store.site(a.id).get().unwrap().unwrap();
        assert_eq!(got_a.allowed_origins.iter().map(|o| o.as_str()).collect::<Vec<_>>(), vec!["https://a.example"]);
        let got_b = store.site(b.id).get().unwrap().unwrap();
        assert_eq!(got_b.name, "B");
        assert!(!got_b.allows_origin("https://a.example"));
        assert!(store.site(SiteId::new_random()).get().unwrap().is_none());
    }

    #[test]
    fn rotation_keeps_the_previous_secret_for_a_day() {
        let (_d, store) = store();
        let (site, creds) = store.sites().create(new_site("A", Tier::Starter, &[])).unwrap();
        let new_secret = store.site(site.id).rotate_secret().unwrap();
        let secrets = store.site(site.id).signing_secrets().unwrap();
        assert_eq!(secrets, vec![new_secret, creds.webhook_secret.unwrap()]);
        assert!(matches!(store.site(site.id).rotate_token(), Err(StoreError::Conflict(_))));
    }

    #[test]
    fn tier_changes_create_and_drop_tokens() {
        let (_d, store) = store();
        let (site, _) = store.sites().create(new_site("A", Tier::Starter, &[])).unwrap();
        let (s, creds) = store.site(site.id).update(SiteUpdate { tier: Some(Tier::Pro), ..Default::default() }).unwrap();
        assert!(s.has_bearer_token && creds.unwrap().bearer_token.is_some());
        let (s, creds) = store.site(site.id).update(SiteUpdate { tier: Some(Tier::Starter), ..Default::default() }).unwrap();
        assert!(!s.has_bearer_token && creds.is_none());
    }

    #[test]
    fn preflight_origin_check_spans_enabled_sites() {
        let (_d, store) = store();
        let (a, _) = store.sites().create(new_site("A", Tier::Starter, &["https://a.example"])).unwrap();
        assert!(store.sites().origin_allowed_by_any("https://a.example").unwrap());
        assert!(!store.sites().origin_allowed_by_any("https://evil.example").unwrap());
        store.site(a.id).set_enabled(false).unwrap();
        assert!(!store.sites().origin_allowed_by_any("https://a.example").unwrap());
    }

    #[test]
    fn a_corrupt_stored_value_is_corrupt_data_not_invalid_input() {
        let (_d, store) = store();
        let (a, _) = store.sites().create(new_site("A", Tier::Starter, &[])).unwrap();
        store.write(|tx| Ok(tx.execute("UPDATE sites SET webhook_events = 'lead.lost' WHERE id = ?1", [a.id])?)).unwrap();
        assert!(matches!(store.site(a.id).get(), Err(StoreError::Corrupt(_))));
    }
}
