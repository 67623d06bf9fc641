//! Price lists per vertical and currency rates. Read on every pricing request (a few indexed reads), so
//! a change made by the CLI shows on the next request without any cache to invalidate.

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

use super::{OptionalRow, Result, Store, StoreError};
use crate::domain::{Currency, PriceTier, PricingSheet, Rate, Slug, TierText, Timestamp};

/// A vertical's tiers in display order, with the base currency they are priced in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSheet {
    pub currency: Currency,
    pub tiers: Vec<PriceTier>,
}

/// The vertical's sheet; `None` when no price list was imported.
pub(super) fn sheet(conn: &Connection, vertical: &Slug) -> Result<Option<StoredSheet>> {
    let mut stmt = conn.prepare_cached(
        "SELECT currency, id, amount_minor, interval, requests_per_minute, highlighted, i18n FROM pricing_tiers
         WHERE vertical = ?1 ORDER BY position",
    )?;
    let mut rows = stmt.query([vertical])?;
    let mut currency = None;
    let mut tiers = Vec::new();
    while let Some(r) = rows.next()? {
        currency = Some(r.get(0)?);
        let i18n: String = r.get(6)?;
        tiers.push(PriceTier {
            id: r.get(1)?,
            amount_minor: r.get::<_, i64>(2)? as u64,
            interval: r.get(3)?,
            requests_per_minute: r.get(4)?,
            highlighted: r.get(5)?,
            i18n: serde_json::from_str::<BTreeMap<String, TierText>>(&i18n).map_err(|e| StoreError::corrupt("pricing_tiers.i18n", e))?,
        });
    }
    Ok(currency.map(|currency| StoredSheet { currency, tiers }))
}

/// An exchange rate as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateRow {
    pub currency: Currency,
    pub rate: Rate,
    pub updated_at: Timestamp,
}

/// Price lists and rates.
pub struct Pricing<'s> {
    store: &'s Store,
}

impl<'s> Pricing<'s> {
    pub(super) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Replaces a vertical's whole price list; tiers missing from `sheet` are removed.
    pub fn replace_sheet(&self, sheet: &PricingSheet) -> Result<usize> {
        self.store.write(|tx| {
            tx.execute("DELETE FROM pricing_tiers WHERE vertical = ?1", [&sheet.vertical])?;
            let now = Timestamp::now();
            for (position, t) in sheet.tiers.iter().enumerate() {
                let i18n = serde_json::to_string(&t.i18n).map_err(|e| StoreError::Invalid(e.to_string()))?;
                tx.execute(
                    "INSERT INTO pricing_tiers (vertical, id, position, currency, amount_minor, interval, requests_per_minute, highlighted, i18n, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![
                        sheet.vertical, t.id, position as i64, sheet.currency, t.amount_minor as i64, t.interval, t.requests_per_minute, t.highlighted, i18n,
                        now
                    ],
                )?;
            }
            Ok(sheet.tiers.len())
        })
    }

    pub fn sheet(&self, vertical: &Slug) -> Result<Option<StoredSheet>> {
        self.store.read(|conn| sheet(conn, vertical))
    }

    /// Sets how many units of each currency one unit of `reference` is worth, all in one transaction.
    pub fn set_rates(&self, reference: Currency, rates: &[(Currency, Rate)]) -> Result<()> {
        if let Some((c, _)) = rates.iter().find(|(c, _)| *c == reference) {
            return Err(StoreError::Invalid(format!("{c} is the reference currency; its rate is always 1")));
        }
        self.store.write(|tx| {
            let now = Timestamp::now();
            for (currency, rate) in rates {
                tx.execute(
                    "INSERT INTO currency_rates (reference, currency, rate, updated_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(reference, currency) DO UPDATE SET rate = excluded.rate, updated_at = excluded.updated_at",
                    params![reference, currency, rate, now],
                )?;
            }
            Ok(())
        })
    }

    /// The rate of `currency` against `reference` (1 for the reference itself); `None` when unset.
    pub fn rate(&self, reference: Currency, currency: Currency) -> Result<Option<Rate>> {
        if currency == reference {
            return Ok(Some(Rate::ONE));
        }
        self.store.read(|conn| {
            conn.prepare_cached("SELECT rate FROM currency_rates WHERE reference = ?1 AND currency = ?2")?
                .query_row(params![reference, currency], |r| r.get(0))
                .optional_row()
        })
    }

    /// Every rate against `reference`, with when it was set.
    pub fn rates(&self, reference: Currency) -> Result<Vec<RateRow>> {
        self.store.read(|conn| {
            let mut stmt = conn.prepare("SELECT currency, rate, updated_at FROM currency_rates WHERE reference = ?1 ORDER BY currency")?;
            let rows = stmt.query_map([reference], |r| Ok(RateRow { currency: r.get(0)?, rate: r.get(1)?, updated_at: r.get(2)? }))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }
}
