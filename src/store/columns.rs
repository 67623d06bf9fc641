//! Column types: every domain value the store keeps goes in and comes out through `ToSql`/`FromSql`,
//! so a row is typed the moment it is read and stored state is never compared as text. A stored value
//! that does not parse is a `FromSqlConversionFailure`, which `StoreError` reports as corrupt data.

use rusqlite::ToSql;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};

use crate::domain::{
    AnswerMode, ClosedDates, ConversationId, Currency, EventType, HexColor, Interval, Lang, Origin, PageType, QueryId, Rate, SiteId, SiteRole, Slug, Tier,
    TimeZone, Timestamp, UserId, WebhookUrl, WeeklyHours, WidgetPosition,
};

fn text<'a>(v: ValueRef<'a>) -> FromSqlResult<&'a str> {
    v.as_str()
}

fn bad(e: impl std::fmt::Display) -> FromSqlError {
    FromSqlError::Other(e.to_string().into())
}

/// A type stored as its canonical text, parsed back with its own constructor.
macro_rules! text_column {
    ($t:ty, |$s:ident| $parse:expr, |$v:ident| $show:expr) => {
        impl ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                let $v = self;
                Ok(ToSqlOutput::from($show))
            }
        }
        impl FromSql for $t {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let $s = text(value)?;
                $parse
            }
        }
    };
}

text_column!(SiteId, |s| SiteId::parse(s).map_err(bad), |v| v.to_string());
text_column!(ConversationId, |s| ConversationId::parse(s).map_err(bad), |v| v.as_str());
text_column!(QueryId, |s| QueryId::parse(s).map_err(bad), |v| v.as_str());
text_column!(UserId, |s| UserId::parse(s).map_err(bad), |v| v.as_str());
text_column!(SiteRole, |s| SiteRole::parse(s).map_err(bad), |v| v.as_str());
text_column!(Tier, |s| s.parse::<Tier>().map_err(bad), |v| v.as_str());
text_column!(Lang, |s| Lang::parse(s).map_err(bad), |v| v.as_str().to_owned());
text_column!(Currency, |s| Currency::parse(s).map_err(bad), |v| v.code());
text_column!(Slug, |s| Slug::parse(s, 128).map_err(bad), |v| v.as_str().to_owned());
text_column!(Origin, |s| Origin::parse(s).map_err(bad), |v| v.as_str().to_owned());
text_column!(WebhookUrl, |s| WebhookUrl::stored(s).map_err(bad), |v| v.as_str().to_owned());
text_column!(EventType, |s| s.parse::<EventType>().map_err(bad), |v| v.as_str());
text_column!(PageType, |s| PageType::parse(s).ok_or_else(|| bad(format!("page type `{s}`"))), |v| v.as_str());
text_column!(Interval, |s| Interval::parse(s).ok_or_else(|| bad(format!("interval `{s}`"))), |v| v.as_str());
text_column!(Rate, |s| Rate::parse(s).map_err(bad), |v| v.to_string());
text_column!(HexColor, |s| HexColor::parse(s).map_err(bad), |v| v.as_str().to_owned());
text_column!(AnswerMode, |s| AnswerMode::parse(s).map_err(bad), |v| v.as_str());
text_column!(WidgetPosition, |s| WidgetPosition::parse(s).map_err(bad), |v| v.as_str());
text_column!(WeeklyHours, |s| WeeklyHours::parse(s).map_err(bad), |v| v.to_string());
text_column!(ClosedDates, |s| ClosedDates::parse(s).map_err(bad), |v| v.to_string());
text_column!(TimeZone, |s| TimeZone::parse(s).map_err(bad), |v| v.name());

/// Unix milliseconds, an INTEGER: ordered and compared as a number.
impl ToSql for Timestamp {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_millis()))
    }
}

impl FromSql for Timestamp {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value.as_i64().map(Timestamp::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_bad_text_is_an_error() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let tier: Tier = conn.query_row("SELECT ?1", [Tier::Pro], |r| r.get(0)).unwrap();
        assert_eq!(tier, Tier::Pro);
        let t = Timestamp::from_millis(1_700_000_000_123);
        assert_eq!(conn.query_row("SELECT ?1", [t], |r| r.get::<_, i64>(0)).unwrap(), 1_700_000_000_123);
        assert!(conn.query_row("SELECT 'platinum'", [], |r| r.get::<_, Tier>(0)).is_err());
        assert!(conn.query_row("SELECT 'lead.lost'", [], |r| r.get::<_, EventType>(0)).is_err());
        assert!(conn.query_row("SELECT '2026-11-21'", [], |r| r.get::<_, Timestamp>(0)).is_err());
    }
}
