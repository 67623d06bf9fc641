//! Values parsed once at the boundary (HTTP headers, JSON bodies, CLI flags) and trusted after.
//!
//! Every constructor validates; there is no way to build one of these from unchecked text except through
//! `parse`, so a function that takes a `SiteId` or a `Lang` never re-validates it. The store gives them
//! their column types (`store::columns`), so they go into and come out of SQLite typed.

mod answer;
mod endpoint;
mod event;
mod locale;
mod page;
mod price;
mod site;
mod time;
mod web;
mod webhook;
mod widget;

pub use event::EventType;
pub use locale::{Currency, Lang};
pub use page::{Alternate, FaqEntry, Feature, LandingPage, PageBody, PageType, Stat};
pub use price::{Interval, MAX_AMOUNT_MINOR, PriceTier, PricingSheet, Rate, TierText};
pub use site::{SiteId, Tier};
pub use time::Timestamp;
pub use web::{Email, Origin, Slug};
pub use answer::AnswerMode;
pub use endpoint::{EndpointNames, NetworkPolicy, check_endpoint, is_link_local_or_metadata, is_public_ip};
pub use webhook::WebhookUrl;
pub use widget::{HexColor, WidgetPosition};

/// Why a value was refused, worded for the person who typed it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid(msg: impl Into<String>) -> Invalid {
    Invalid(msg.into())
}
