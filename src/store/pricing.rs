//! Price lists per vertical and currency rates. Read on every pricing request (two indexed reads), so
//! a change made by the CLI shows on the next request without any cache to invalidate.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{Result, StoreError, now_rfc3339};
use crate::content::money::Rate;
use crate::content::pricing::{Interval, PricingSheet, Tier, TierText};
use crate::domain::Currency;

/// A vertical's tiers in display order, with the base currency they are priced in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSheet {
    pub currency: Currency,
    pub tiers: Vec<Tier>,
}

/// Replaces a vertical's whole price list; tiers missing from `sheet` are removed.
pub fn replace_sheet(tx: &Transaction<'_>, sheet: &PricingSheet) -> Result<usize> {
    let vertical = sheet.vertical.as_str();
    tx.execute("DELETE FROM pricing_tiers WHERE vertical = ?1", [vertical])?;
    let now = now_rfc3339();
    for (position, t) in sheet.tiers.iter().enumerate() {
        let i18n = serde_json::to_string(&t.i18n).map_err(|e| StoreError::Invalid(e.to_string()))?;
        tx.execute(
            "INSERT INTO pricing_tiers (vertical, id, position, currency, amount_minor, interval, requests_per_minute, highlighted, i18n, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                vertical,
                t.id,
                position as i64,
                sheet.currency.code(),
                t.amount_minor as i64,
                t.interval.as_str(),
                t.requests_per_minute,
                t.highlighted,
                i18n,
                now
            ],
        )?;
    }
    Ok(sheet.tiers.len())
}

/// The vertical's sheet; `None` when no price list was imported.
pub fn sheet(conn: &Connection, vertical: &str) -> Result<Option<StoredSheet>> {
    let mut stmt = conn.prepare_cached(
        "SELECT currency, id, amount_minor, interval, requests_per_minute, highlighted, i18n FROM pricing_tiers
         WHERE vertical = ?1 ORDER BY position",
    )?;
    let mut rows = stmt.query([vertical])?;
    let mut currency = None;
    let mut tiers = Vec::new();
    while let Some(r) = rows.next()? {
        let code: String = r.get(0)?;
        currency = Some(Currency::parse(&code).map_err(|e| StoreError::Invalid(format!("stored currency: {e}")))?);
        let interval: String = r.get(3)?;
        let i18n: String = r.get(6)?;
        tiers.push(Tier {
            id: r.get(1)?,
            amount_minor: r.get::<_, i64>(2)? as u64,
            interval: Interval::parse(&interval).ok_or_else(|| StoreError::Invalid(format!("stored interval `{interval}`")))?,
            requests_per_minute: r.get(4)?,
            highlighted: r.get(5)?,
            i18n: serde_json::from_str::<BTreeMap<String, TierText>>(&i18n).map_err(|e| StoreError::Invalid(format!("stored tier texts: {e}")))?,
        });
    }
    Ok(currency.map(|currency| StoredSheet { currency, tiers }))
}

/// Sets how many units of `currency` one unit of `reference` is worth.
pub fn set_rate(tx: &Transaction<'_>, reference: Currency, currency: Currency, rate: Rate) -> Result<()> {
    if currency == reference {
        return Err(StoreError::Invalid(format!("{reference} is the reference currency; its rate is always 1")));
    }
    tx.execute(
        "INSERT INTO currency_rates (reference, currency, rate, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(reference, currency) DO UPDATE SET rate = excluded.rate, updated_at = excluded.updated_at",
        params![reference.code(), currency.code(), rate.to_string(), now_rfc3339()],
    )?;
    Ok(())
}

/// The rate of `currency` against `reference` (1 for the reference itself); `None` when unset.
pub fn rate(conn: &Connection, reference: Currency, currency: Currency) -> Result<Option<Rate>> {
    if currency == reference {
        return Ok(Some(Rate::ONE));
    }
    let text: Option<String> = conn
        .prepare_cached("SELECT rate FROM currency_rates WHERE reference = ?1 AND currency = ?2")?
        .query_row(params![reference.code(), currency.code()], |r| r.get(0))
        .optional()?;
    text.map(|t| Rate::parse(&t).map_err(|e| StoreError::Invalid(format!("stored rate: {e}")))).transpose()
}

/// Every rate against `reference`, with when it was set.
pub fn rates(conn: &Connection, reference: Currency) -> Result<Vec<(String, String, String)>> {
    let mut stmt = conn.prepare("SELECT currency, rate, updated_at FROM currency_rates WHERE reference = ?1 ORDER BY currency")?;
    let rows = stmt.query_map([reference.code()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
