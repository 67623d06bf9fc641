//! A site's opening hours for live hand-off: a weekly schedule (`Mon-Fri 09:00-17:00; Sat 10:00-14:00`),
//! closed dates (`2026-12-24,2026-12-25`) and the IANA time zone both are read in (`Europe/Berlin`).
//!
//! Time zones come from `chrono-tz` (the IANA database compiled in), so a schedule follows daylight
//! saving time as the site's staff do. An empty schedule means open at every hour; closed dates apply
//! either way. A range ends before it starts only if split: `22:00-24:00` one day, `00:00-06:00` the next.

use std::fmt;

use chrono::{Datelike, NaiveDate, Timelike, Weekday};

use super::{Invalid, Timestamp, invalid};

const DAYS: [(&str, Weekday); 7] = [
    ("Mon", Weekday::Mon),
    ("Tue", Weekday::Tue),
    ("Wed", Weekday::Wed),
    ("Thu", Weekday::Thu),
    ("Fri", Weekday::Fri),
    ("Sat", Weekday::Sat),
    ("Sun", Weekday::Sun),
];

/// At most this many closed dates (a year and then some).
pub const MAX_CLOSED_DATES: usize = 400;

/// One range of minutes on one day: `[start, end)`, 0..=1440.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    day: Weekday,
    start: u16,
    end: u16,
}

/// The weekly schedule. Displayed in a canonical form (one `Day HH:MM-HH:MM,...` group per day, `; `
/// between), which parses back to the same schedule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WeeklyHours(Vec<Range>);

fn day(s: &str) -> Result<Weekday, Invalid> {
    DAYS.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map(|(_, d)| *d)
        .ok_or_else(|| invalid(format!("`{s}` is not a day: use Mon, Tue, Wed, Thu, Fri, Sat or Sun")))
}

fn minute(s: &str) -> Result<u16, Invalid> {
    let bad = || invalid(format!("`{s}` is not a time: use HH:MM, 00:00 to 24:00"));
    let (h, m) = s.split_once(':').ok_or_else(bad)?;
    if h.len() != 2 || m.len() != 2 {
        return Err(bad());
    }
    let (h, m): (u16, u16) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if m > 59 || h > 24 || (h == 24 && m != 0) {
        return Err(bad());
    }
    Ok(h * 60 + m)
}

impl WeeklyHours {
    /// `Mon-Fri 09:00-17:00; Sat 10:00-14:00`: groups separated by `;`, each days (`Mon`, `Mon-Fri`,
    /// `Mon,Wed`) then one or more ranges separated by `,`. Empty: no schedule (always open).
    pub fn parse(spec: &str) -> Result<WeeklyHours, Invalid> {
        let mut ranges = Vec::new();
        for group in spec.split(';').map(str::trim).filter(|g| !g.is_empty()) {
            let (days, times) =
                group.split_once(char::is_whitespace).ok_or_else(|| invalid(format!("`{group}` needs days then times, e.g. `Mon-Fri 09:00-17:00`")))?;
            let mut which = Vec::new();
            for part in days.split(',') {
                match part.split_once('-') {
                    Some((a, b)) => {
                        let (a, b) = (day(a)?, day(b)?);
                        let mut d = a;
                        loop {
                            which.push(d);
                            if d == b {
                                break;
                            }
                            d = d.succ();
                        }
                    }
                    None => which.push(day(part)?),
                }
            }
            for t in times.split(',').map(str::trim) {
                let (a, b) = t.split_once('-').ok_or_else(|| invalid(format!("`{t}` is not a range: use HH:MM-HH:MM")))?;
                let (start, end) = (minute(a.trim())?, minute(b.trim())?);
                if start >= end {
                    return Err(invalid(format!("`{t}` ends before it starts; split a range over midnight into two days")));
                }
                ranges.extend(which.iter().map(|&day| Range { day, start, end }));
            }
        }
        ranges.sort_by_key(|r| (r.day.num_days_from_monday(), r.start, r.end));
        ranges.dedup();
        Ok(WeeklyHours(ranges))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn open_at(&self, day: Weekday, minute: u16) -> bool {
        self.0.is_empty() || self.0.iter().any(|r| r.day == day && r.start <= minute && minute < r.end)
    }
}

impl fmt::Display for WeeklyHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hm = |m: u16| format!("{:02}:{:02}", m / 60, m % 60);
        let mut groups = Vec::new();
        for (name, d) in DAYS {
            let times: Vec<String> = self.0.iter().filter(|r| r.day == d).map(|r| format!("{}-{}", hm(r.start), hm(r.end))).collect();
            if !times.is_empty() {
                groups.push(format!("{name} {}", times.join(",")));
            }
        }
        f.write_str(&groups.join("; "))
    }
}

/// Dates the site is closed whatever the schedule says, in its time zone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClosedDates(Vec<NaiveDate>);

impl ClosedDates {
    /// `2026-12-24,2026-12-25` (commas or spaces between); empty: none.
    pub fn parse(list: &str) -> Result<ClosedDates, Invalid> {
        let mut dates = list
            .split([',', ' '])
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|_| invalid(format!("`{d}` is not a date: use YYYY-MM-DD"))))
            .collect::<Result<Vec<_>, _>>()?;
        dates.sort();
        dates.dedup();
        if dates.len() > MAX_CLOSED_DATES {
            return Err(invalid(format!("at most {MAX_CLOSED_DATES} closed dates")));
        }
        Ok(ClosedDates(dates))
    }
}

impl fmt::Display for ClosedDates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.iter().map(|d| d.format("%Y-%m-%d").to_string()).collect::<Vec<_>>().join(","))
    }
}

/// An IANA time zone (`Europe/Berlin`, `UTC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeZone(chrono_tz::Tz);

impl TimeZone {
    pub const UTC: TimeZone = TimeZone(chrono_tz::Tz::UTC);

    pub fn parse(s: &str) -> Result<TimeZone, Invalid> {
        s.trim()
            .parse::<chrono_tz::Tz>()
            .map(TimeZone)
            .map_err(|_| invalid(format!("`{}` is not an IANA time zone such as Europe/Berlin or America/New_York", s.trim())))
    }

    pub fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl fmt::Display for TimeZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a person can come: the schedule and the closed dates, read in the time zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpeningHours {
    pub weekly: WeeklyHours,
    pub closed: ClosedDates,
    pub zone: TimeZone,
}

impl OpeningHours {
    /// Whether the site is open at `at`.
    pub fn is_open(&self, at: Timestamp) -> bool {
        let Some(utc) = chrono::DateTime::from_timestamp_millis(at.as_millis()) else { return false };
        let local = utc.with_timezone(&self.zone.0);
        if self.closed.0.binary_search(&local.date_naive()).is_ok() {
            return false;
        }
        self.weekly.open_at(local.weekday(), (local.hour() * 60 + local.minute()) as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    #[test]
    fn a_schedule_parses_to_a_canonical_form_that_parses_back() {
        let w = WeeklyHours::parse("mon-fri 09:00-12:00, 13:00-17:00; Sat 10:00-14:00").unwrap();
        let text = w.to_string();
        assert_eq!(
            text,
            "Mon 09:00-12:00,13:00-17:00; Tue 09:00-12:00,13:00-17:00; Wed 09:00-12:00,13:00-17:00; Thu 09:00-12:00,13:00-17:00; Fri 09:00-12:00,13:00-17:00; Sat 10:00-14:00"
        );
        assert_eq!(WeeklyHours::parse(&text).unwrap(), w);
        assert_eq!(WeeklyHours::parse("Fri-Mon 00:00-24:00").unwrap().to_string().matches("00:00-24:00").count(), 4, "a day range wraps the week");
        assert!(WeeklyHours::parse("").unwrap().is_empty());
    }

    #[test]
    fn bad_schedules_say_what_is_wrong() {
        for (spec, says) in [
            ("Mon-Fri", "needs days then times"),
            ("Mun 09:00-17:00", "`Mun` is not a day"),
            ("Mon 9:00-17:00", "`9:00` is not a time"),
            ("Mon 17:00-09:00", "split a range over midnight"),
            ("Mon 09:00-24:30", "`24:30` is not a time"),
            ("Mon 09:00", "not a range"),
        ] {
            let err = WeeklyHours::parse(spec).unwrap_err().0;
            assert!(err.contains(says), "{spec}: {err}");
        }
        assert!(ClosedDates::parse("2026-12-24,24.12.2026").unwrap_err().0.contains("`24.12.2026` is not a date"));
        assert!(TimeZone::parse("Mars/Olympus").unwrap_err().0.contains("IANA"));
    }

    #[test]
    fn open_follows_the_local_time_daylight_saving_and_closed_dates() {
        let hours = OpeningHours {
            weekly: WeeklyHours::parse("Mon-Fri 09:00-17:00").unwrap(),
            closed: ClosedDates::parse("2026-12-24").unwrap(),
            zone: TimeZone::parse("Europe/Berlin").unwrap(),
        };
        // Thursday 26 November 2026: Berlin is UTC+1.
        assert!(!hours.is_open(at("2026-11-26T07:59:00Z")));
        assert!(hours.is_open(at("2026-11-26T08:00:00Z")));
        assert!(!hours.is_open(at("2026-11-26T16:00:00Z")));
        // Thursday 2 July 2026: UTC+2, so 07:30 UTC is 09:30 there.
        assert!(hours.is_open(at("2026-07-02T07:30:00Z")));
        // Saturday, and a closed Thursday.
        assert!(!hours.is_open(at("2026-11-28T10:00:00Z")));
        assert!(!hours.is_open(at("2026-12-24T10:00:00Z")));
        let always = OpeningHours { weekly: WeeklyHours::default(), closed: ClosedDates::default(), zone: TimeZone::UTC };
        assert!(always.is_open(at("2026-11-28T03:00:00Z")));
    }
}
