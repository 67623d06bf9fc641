//! The public stats payload (API.md route 7), computed from a site's counters.

use chrono::NaiveDate;
use serde::Serialize;

use crate::domain::SiteId;
use crate::store::stats::SiteCounters;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicStats {
    pub site_id: SiteId,
    pub total_questions: u64,
    /// Resolved questions / all questions, rounded to 4 decimals; 0 when there are none.
    pub resolution_rate: f64,
    pub leads_collected: u64,
    /// `YYYY-MM-DD` (UTC): the first question or lead, or the site's creation date before any.
    pub active_since: String,
    /// Calendar days from `activeSince` to today, both included (1 on the first day).
    pub days_active: u64,
}

impl PublicStats {
    pub fn new(site_id: SiteId, c: &SiteCounters, today: NaiveDate) -> PublicStats {
        let since = c.first_activity.unwrap_or(c.site_created_at).date().min(today);
        let rate = if c.questions == 0 { 0.0 } else { (c.resolved_questions.min(c.questions) as f64 / c.questions as f64 * 10_000.0).round() / 10_000.0 };
        PublicStats {
            site_id,
            total_questions: c.questions,
            resolution_rate: rate,
            leads_collected: c.leads,
            active_since: since.format("%Y-%m-%d").to_string(),
            days_active: (today - since).num_days().max(0) as u64 + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(q: u64, r: u64, first: Option<&str>) -> SiteCounters {
        SiteCounters {
            questions: q,
            resolved_questions: r,
            leads: 2,
            first_activity: first.map(|d| crate::domain::Timestamp::parse(d).unwrap()),
            site_created_at: crate::domain::Timestamp::parse("2026-01-05T09:00:00Z").unwrap(),
            site_enabled: true,
        }
    }

    #[test]
    fn rates_and_days() {
        let id = SiteId::new_random();
        let today = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let s = PublicStats::new(id, &counters(3, 2, Some("2026-11-20")), today);
        assert_eq!((s.resolution_rate, s.active_since.as_str(), s.days_active), (0.6667, "2026-11-20", 2));
        let s = PublicStats::new(id, &counters(0, 0, None), today);
        assert_eq!((s.resolution_rate, s.active_since.as_str(), s.days_active), (0.0, "2026-01-05", 321));
    }
}
