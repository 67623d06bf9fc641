//! One timestamp type for everything the service stores and shows: an instant in UTC with millisecond
//! precision. SQLite keeps it as INTEGER unix milliseconds (compared as numbers, never as text); JSON and
//! the CLI show it as RFC 3339.

use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::Serialize;

use super::{Invalid, invalid};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(i64);

impl Timestamp {
    pub fn now() -> Self {
        Self(Utc::now().timestamp_millis())
    }

    pub const fn from_millis(ms: i64) -> Self {
        Self(ms)
    }

    pub const fn as_millis(self) -> i64 {
        self.0
    }

    pub fn as_secs(self) -> i64 {
        self.0.div_euclid(1000)
    }

    /// RFC 3339 (`2026-11-21T10:00:00Z`, `2026-11-21T12:00:00+02:00`) or a date (`2026-11-21`, midnight UTC).
    pub fn parse(s: &str) -> Result<Self, Invalid> {
        let s = s.trim();
        if let Ok(t) = DateTime::parse_from_rfc3339(s) {
            return Ok(Self(t.timestamp_millis()));
        }
        NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| Self(t.and_utc().timestamp_millis()))
            .ok_or_else(|| invalid(format!("`{s}` is neither a date (YYYY-MM-DD) nor an RFC 3339 time")))
    }

    /// Exactly what the OpenAPI document's `date-time` format means (RFC 3339 section 5.6): a date, `T`
    /// (or `t`), a time and an offset. chrono also reads a space for the `T`, which a client validating
    /// against the contract would reject, so that is refused here too.
    pub fn parse_date_time(s: &str) -> Result<Self, Invalid> {
        let t = matches!(s.as_bytes().get(10), Some(b'T' | b't'));
        match DateTime::parse_from_rfc3339(s) {
            Ok(parsed) if t => Ok(Self(parsed.timestamp_millis())),
            _ => Err(invalid("must be an RFC 3339 date-time such as 2026-11-21T10:00:00Z")),
        }
    }

    fn datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.0).unwrap_or_default()
    }

    /// `2026-11-21T10:00:00Z`: whole seconds, the form every payload shows.
    pub fn rfc3339(self) -> String {
        self.datetime().to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    /// `2026-11-21T10:00:00.250Z`, for schedules where the fraction matters.
    pub fn rfc3339_millis(self) -> String {
        self.datetime().to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// The UTC date, `2026-11-21`.
    pub fn date(self) -> NaiveDate {
        self.datetime().date_naive()
    }

    /// Midnight UTC of this instant's day: the key of per-day counters.
    pub const fn day_start(self) -> Timestamp {
        Timestamp(self.0.div_euclid(DAY_MS) * DAY_MS)
    }

    /// Midnight UTC after this instant: when a daily quota starts again.
    pub const fn next_day(self) -> Timestamp {
        Timestamp(self.day_start().0 + DAY_MS)
    }
}

const DAY_MS: i64 = 86_400_000;

impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Timestamp;
    fn sub(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rfc3339())
    }
}

impl std::str::FromStr for Timestamp {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        Self::parse(s)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.rfc3339())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_start_and_end_at_midnight_utc() {
        let t = Timestamp::parse("2026-11-21T23:59:59.999Z").unwrap();
        assert_eq!(t.day_start(), Timestamp::parse("2026-11-21").unwrap());
        assert_eq!(t.next_day(), Timestamp::parse("2026-11-22").unwrap());
        let midnight = Timestamp::parse("2026-11-22").unwrap();
        assert_eq!(midnight.day_start(), midnight);
    }

    #[test]
    fn a_date_time_is_exactly_rfc_3339() {
        assert_eq!(Timestamp::parse_date_time("2026-11-21T10:00:00Z").unwrap().rfc3339(), "2026-11-21T10:00:00Z");
        assert_eq!(Timestamp::parse_date_time("2026-11-21t12:00:00.5+02:00").unwrap().rfc3339_millis(), "2026-11-21T10:00:00.500Z");
        for bad in ["6045-11-09 11:23:28-22:09", "2026-11-21", "2026-11-21T10:00:00", " 2026-11-21T10:00:00Z", "2026-11-21T25:00:00Z"] {
            assert!(Timestamp::parse_date_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_dates_and_rfc3339_and_shows_whole_seconds() {
        let t = Timestamp::parse("2026-11-21T12:00:00.250+02:00").unwrap();
        assert_eq!(t.rfc3339(), "2026-11-21T10:00:00Z");
        assert_eq!(t.rfc3339_millis(), "2026-11-21T10:00:00.250Z");
        assert_eq!(Timestamp::parse("2026-11-21").unwrap().rfc3339(), "2026-11-21T00:00:00Z");
        assert!(Timestamp::parse("21.11.2026").is_err());
        assert!(Timestamp::parse("2026-11-21").unwrap() < t);
        assert_eq!((t + Duration::from_secs(1)).as_millis() - t.as_millis(), 1000);
    }
}
