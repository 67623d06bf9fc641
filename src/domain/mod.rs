//! Values parsed once at the boundary (HTTP headers, JSON bodies, CLI flags) and trusted after.
//!
//! Every constructor validates; there is no way to build one of these from unchecked text except through
//! `parse`, so a function that takes a `SiteId` or a `Lang` never re-validates it. The store gives them
//! their column types (`store::columns`), so they go into and come out of SQLite typed.

mod answer;
mod endpoint;
mod event;
mod hours;
mod ids;
mod locale;
mod page;
mod price;
mod proxies;
mod role;
mod site;
mod time;
mod web;
mod webhook;
mod widget;

pub use answer::AnswerMode;
pub use endpoint::{EndpointNames, NetworkPolicy, check_endpoint, check_link_local, is_link_local_or_metadata, is_public_ip};
pub use event::EventType;
pub use hours::{ClosedDates, MAX_CLOSED_DATES, OpeningHours, TimeZone, WeeklyHours};
pub use ids::{ConversationId, QueryId, UserId};
pub use locale::{Currency, Lang};
pub use page::{Alternate, FaqEntry, Feature, LandingPage, PageBody, PageType, Stat};
pub use price::{Interval, MAX_AMOUNT_MINOR, PriceTier, PricingSheet, Rate, TierText};
pub use proxies::{TrustedProxies, canonical};
pub use role::SiteRole;
pub use site::{SiteId, Tier};
pub use time::Timestamp;
pub use web::{Email, Origin, Slug, spreadsheet_safe};
pub use webhook::{EndpointPolicy, Failing, WebhookUrl};
pub use widget::{HexColor, WidgetPosition};

/// `<prefix><ULID>` (`cnv_01J...`, `qry_01J...`) in canonical upper case, when `s` is one: 26 Crockford
/// base32 characters, either case, the first at most `7` (a ULID is 128 bits). What the OpenAPI document's
/// id patterns say.
pub fn prefixed_ulid(prefix: &str, s: &str) -> Option<String> {
    let rest = s.strip_prefix(prefix)?;
    if !rest.as_bytes().first().is_some_and(|b| (b'0'..=b'7').contains(b)) {
        return None;
    }
    ulid::Ulid::from_string(rest).ok().map(|u| format!("{prefix}{u}"))
}

/// The JSON Schema pattern of [`prefixed_ulid`] ids.
pub fn prefixed_ulid_pattern(prefix: &str) -> String {
    format!("^{prefix}[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{{25}}$")
}

/// Why a value was refused, worded for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid(msg: impl Into<String>) -> Invalid {
    Invalid(msg.into())
}
