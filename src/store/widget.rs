//! The widget editor's data (#25): a site's suggested questions per language, the draft an owner edits in
//! the console, and the short-lived preview tokens that let `GET /v1/widget/config` serve that draft to
//! the console's preview only.
//!
//! **Draft and published.** What visitors get is the site's published settings: colour, position,
//! greetings and contact form in `sites`, allowed origins in `site_origins`, suggested questions here.
//! A draft is one JSON value beside them; [`Widget::publish`] copies it over those in one transaction and
//! clears it, so a visitor sees either the old settings or the new ones, never a mix.
//!
//! **Preview tokens** are sealed with the data directory's master key (XChaCha20-Poly1305, so they can be
//! neither forged nor altered) and name their purpose, their site and their expiry. One grants exactly
//! this: reading that site's draft through `/v1/widget/config` until it expires. It is never stored.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::sites::{Site, get, set_origins};
use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{HexColor, Lang, Origin, Timestamp, WidgetPosition};

/// Suggested questions a language may have at most.
pub const MAX_QUESTIONS: usize = 5;
/// A suggested question's length at most, in characters.
pub const MAX_QUESTION_CHARS: usize = 120;
/// A greeting's length at most, in characters (as `sitebot site update --greeting`).
pub const MAX_GREETING_CHARS: usize = 500;
/// Languages a widget may have greetings or questions in at most.
pub const MAX_LANGUAGES: usize = 20;
/// Allowed origins a site may list at most.
pub const MAX_ORIGINS: usize = 50;

/// What a preview token says before it is sealed; another purpose's sealed text never reads as one.
const PREVIEW_PURPOSE: &str = "widget-preview/1";

/// Everything the widget editor sets, as a draft or as published. Built only through [`WidgetDraft::check`]
/// or from the store, so its limits hold wherever one exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetDraft {
    pub primary_color: HexColor,
    pub position: WidgetPosition,
    /// Greeting per language tag (none empty).
    pub greeting: BTreeMap<String, String>,
    /// Suggested questions per language tag (no language with none).
    pub questions: BTreeMap<String, Vec<String>>,
    pub lead_form: bool,
    /// Empty: any origin may embed the widget.
    pub allowed_origins: Vec<Origin>,
}

/// One language's greeting and questions as entered.
#[derive(Debug, Clone)]
pub struct LanguageEntry {
    pub lang: Lang,
    pub greeting: String,
    pub questions: Vec<String>,
}

/// What is wrong with a draft: the field it concerns (`color`, `position`, `greeting`, `questions`,
/// `origins`, `languages`) and why, in English.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftError {
    pub field: &'static str,
    pub reason: String,
}

impl WidgetDraft {
    /// A draft from parsed values, refused when a limit is passed. Empty greetings and languages without
    /// questions are dropped; questions are trimmed and blank ones dropped.
    pub fn check(
        primary_color: HexColor,
        position: WidgetPosition,
        languages: Vec<LanguageEntry>,
        lead_form: bool,
        allowed_origins: Vec<Origin>,
    ) -> std::result::Result<WidgetDraft, DraftError> {
        let err = |field, reason: String| Err(DraftError { field, reason });
        let (mut greeting, mut questions) = (BTreeMap::new(), BTreeMap::new());
        for entry in languages {
            let tag = entry.lang.as_str().to_owned();
            if greeting.contains_key(&tag) || questions.contains_key(&tag) {
                return err("languages", format!("{tag} is given twice"));
            }
            let text = entry.greeting.trim();
            if text.chars().count() > MAX_GREETING_CHARS {
                return err("greeting", format!("the {tag} greeting is longer than {MAX_GREETING_CHARS} characters"));
            }
            let list: Vec<String> = entry.questions.iter().map(|q| q.trim().to_owned()).filter(|q| !q.is_empty()).collect();
            if list.len() > MAX_QUESTIONS {
                return err("questions", format!("{tag} has {} questions; at most {MAX_QUESTIONS}", list.len()));
            }
            if let Some(long) = list.iter().find(|q| q.chars().count() > MAX_QUESTION_CHARS) {
                let start: String = long.chars().take(30).collect();
                return err("questions", format!("“{start}…” ({tag}) is longer than {MAX_QUESTION_CHARS} characters"));
            }
            if list.iter().any(|q| q.chars().any(char::is_control)) {
                return err("questions", format!("a {tag} question holds a control character"));
            }
            for (i, q) in list.iter().enumerate() {
                if list[..i].contains(q) {
                    return err("questions", format!("“{q}” ({tag}) is given twice"));
                }
            }
            if !text.is_empty() {
                greeting.insert(tag.clone(), text.to_owned());
            }
            if !list.is_empty() {
                questions.insert(tag, list);
            }
        }
        let languages = greeting.keys().chain(questions.keys()).collect::<std::collections::BTreeSet<_>>().len();
        if languages > MAX_LANGUAGES {
            return err("languages", format!("{languages} languages; at most {MAX_LANGUAGES}"));
        }
        if allowed_origins.len() > MAX_ORIGINS {
            return err("origins", format!("{} origins; at most {MAX_ORIGINS}", allowed_origins.len()));
        }
        let mut origins = allowed_origins;
        origins.sort();
        origins.dedup();
        Ok(WidgetDraft { primary_color, position, greeting, questions, lead_form, allowed_origins: origins })
    }

    /// The settings a site publishes now: its own columns and its published questions.
    fn published(site: &Site, questions: BTreeMap<String, Vec<String>>) -> WidgetDraft {
        let w = &site.widget;
        WidgetDraft {
            primary_color: w.primary_color.clone(),
            position: w.position,
            greeting: w.greeting.clone(),
            questions,
            lead_form: w.lead_form,
            allowed_origins: site.allowed_origins.clone(),
        }
    }

    /// The suggested questions for a visitor's language: the exact tag, then its primary language, then
    /// the site's language; the tag they are in with them (`None` when none of those has any).
    pub fn questions_for(&self, visitor: Option<&Lang>, site_lang: &Lang) -> Option<(&str, &[String])> {
        let mut tags: Vec<&str> = Vec::with_capacity(3);
        if let Some(l) = visitor {
            tags.push(l.as_str());
            tags.push(l.primary());
        }
        tags.push(site_lang.as_str());
        tags.push(site_lang.primary());
        tags.into_iter().find_map(|t| self.questions.get_key_value(t)).map(|(k, v)| (k.as_str(), v.as_slice()))
    }
}

/// The draft as stored (JSON), read back through the domain parsers.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    primary_color: String,
    position: String,
    greeting: BTreeMap<String, String>,
    questions: BTreeMap<String, Vec<String>>,
    lead_form: bool,
    allowed_origins: Vec<String>,
}

impl Stored {
    fn of(d: &WidgetDraft) -> Stored {
        Stored {
            primary_color: d.primary_color.as_str().to_owned(),
            position: d.position.as_str().to_owned(),
            greeting: d.greeting.clone(),
            questions: d.questions.clone(),
            lead_form: d.lead_form,
            allowed_origins: d.allowed_origins.iter().map(|o| o.as_str().to_owned()).collect(),
        }
    }

    fn read(json: &str) -> Result<WidgetDraft> {
        let corrupt = |e: String| StoreError::corrupt("site_widgets.draft", e);
        let s: Stored = serde_json::from_str(json).map_err(|e| corrupt(e.to_string()))?;
        Ok(WidgetDraft {
            primary_color: HexColor::parse(&s.primary_color).map_err(|e| corrupt(e.0))?,
            position: WidgetPosition::parse(&s.position).map_err(|e| corrupt(e.0))?,
            greeting: s.greeting,
            questions: s.questions,
            lead_form: s.lead_form,
            allowed_origins: s.allowed_origins.iter().map(|o| Origin::parse(o)).collect::<std::result::Result<_, _>>().map_err(|e| corrupt(e.0))?,
        })
    }
}

/// The draft with when and by whom it was last saved.
#[derive(Debug, Clone)]
pub struct SavedDraft {
    pub draft: WidgetDraft,
    pub at: Timestamp,
    pub by: String,
}

/// What a preview token is worth for one site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// Valid: the draft (the published settings when there is no draft).
    Shown(WidgetDraft),
    /// Not a token of this site, altered, or expired.
    Refused,
}

/// One site's widget settings.
pub struct Widget<'s> {
    site: SiteStore<'s>,
}

impl<'s> SiteStore<'s> {
    /// The site's widget: published settings, the draft, preview tokens.
    pub fn widget(&self) -> Widget<'s> {
        Widget { site: *self }
    }
}

fn questions_of(conn: &rusqlite::Connection, site: &crate::domain::SiteId) -> Result<BTreeMap<String, Vec<String>>> {
    let json: Option<String> = conn.query_row("SELECT questions FROM site_widgets WHERE site_id = ?1", [site], |r| r.get(0)).optional_row()?;
    json.map_or(Ok(BTreeMap::new()), |j| serde_json::from_str(&j).map_err(|e| StoreError::corrupt("site_widgets.questions", e)))
}

impl Widget<'_> {
    /// The published suggested questions per language.
    pub fn questions(&self) -> Result<BTreeMap<String, Vec<String>>> {
        let id = self.site.id();
        self.site.store().read(|c| questions_of(c, &id))
    }

    /// What visitors get now.
    pub fn published(&self) -> Result<WidgetDraft> {
        let id = self.site.id();
        self.site.store().read(|c| {
            let site = get(c, &id)?.ok_or(StoreError::NotFound)?;
            Ok(WidgetDraft::published(&site, questions_of(c, &id)?))
        })
    }

    /// The unpublished draft, if there is one.
    pub fn draft(&self) -> Result<Option<SavedDraft>> {
        let id = self.site.id();
        self.site.store().read(|c| {
            let row: Option<(Option<String>, Option<Timestamp>, Option<String>)> = c
                .query_row("SELECT draft, draft_at, draft_by FROM site_widgets WHERE site_id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .optional_row()?;
            match row {
                Some((Some(json), Some(at), by)) => Ok(Some(SavedDraft { draft: Stored::read(&json)?, at, by: by.unwrap_or_default() })),
                _ => Ok(None),
            }
        })
    }

    /// Saves the draft (replacing an earlier one); visitors see nothing of it until [`Widget::publish`].
    pub fn save_draft(&self, draft: &WidgetDraft, by: &str) -> Result<()> {
        let id = self.site.id();
        let json = serde_json::to_string(&Stored::of(draft)).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.site.write(|tx| {
            tx.execute(
                "INSERT INTO site_widgets (site_id, draft, draft_at, draft_by) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (site_id) DO UPDATE SET draft = excluded.draft, draft_at = excluded.draft_at, draft_by = excluded.draft_by",
                params![id, json, Timestamp::now(), by],
            )?;
            Ok(())
        })
    }

    /// Drops the draft; `NotFound` when there is none.
    pub fn discard(&self) -> Result<()> {
        let id = self.site.id();
        self.site.write(|tx| {
            match tx.execute("UPDATE site_widgets SET draft = NULL, draft_at = NULL, draft_by = NULL WHERE site_id = ?1 AND draft IS NOT NULL", [id])? {
                0 => Err(StoreError::NotFound),
                _ => Ok(()),
            }
        })
    }

    /// Makes the draft what every visitor gets, in one transaction, and clears it. Returns what is
    /// published now; `NotFound` when there is no draft.
    pub fn publish(&self) -> Result<WidgetDraft> {
        let id = self.site.id();
        self.site.write(|tx| {
            let json: Option<String> = tx.query_row("SELECT draft FROM site_widgets WHERE site_id = ?1", [id], |r| r.get(0)).optional_row()?.flatten();
            let draft = Stored::read(&json.ok_or(StoreError::NotFound)?)?;
            let greetings = serde_json::to_string(&draft.greeting).map_err(|e| StoreError::Invalid(e.to_string()))?;
            let questions = serde_json::to_string(&draft.questions).map_err(|e| StoreError::Invalid(e.to_string()))?;
            tx.execute(
                "UPDATE sites SET widget_color = ?2, widget_position = ?3, widget_greetings = ?4, lead_form = ?5, updated_at = ?6 WHERE id = ?1",
                params![id, draft.primary_color, draft.position, greetings, draft.lead_form, Timestamp::now()],
            )?;
            set_origins(tx, &id, &draft.allowed_origins)?;
            tx.execute("UPDATE site_widgets SET questions = ?2, draft = NULL, draft_at = NULL, draft_by = NULL WHERE site_id = ?1", params![id, questions])?;
            Ok(draft)
        })
    }

    /// A token that shows this site's draft through `/v1/widget/config` until `expires`.
    pub fn preview_token(&self, expires: Timestamp) -> String {
        let plain = format!("{PREVIEW_PURPOSE} {} {}", self.site.id(), expires.as_millis());
        URL_SAFE_NO_PAD.encode(self.site.store().keyring().seal(&plain))
    }

    /// What `token` shows at `now`: the draft (or, without one, the published settings) when it is this
    /// site's and not expired; `Refused` otherwise.
    pub fn preview(&self, token: &str, now: Timestamp) -> Result<Preview> {
        if !self.token_valid(token, now) {
            return Ok(Preview::Refused);
        }
        Ok(Preview::Shown(match self.draft()? {
            Some(saved) => saved.draft,
            None => self.published()?,
        }))
    }

    fn token_valid(&self, token: &str, now: Timestamp) -> bool {
        if token.len() > 512 {
            return false;
        }
        let Ok(sealed) = URL_SAFE_NO_PAD.decode(token.trim()) else { return false };
        let Ok(plain) = self.site.store().keyring().open(&sealed) else { return false };
        let mut parts = plain.split(' ');
        let (Some(purpose), Some(site), Some(expires), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else { return false };
        purpose == PREVIEW_PURPOSE && site == self.site.id().to_string() && expires.parse::<i64>().is_ok_and(|e| e > now.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(s: &str) -> Lang {
        Lang::parse(s).unwrap()
    }

    fn draft(questions: &[(&str, &[&str])]) -> std::result::Result<WidgetDraft, DraftError> {
        let languages = questions
            .iter()
            .map(|(l, qs)| LanguageEntry { lang: lang(l), greeting: String::new(), questions: qs.iter().map(|q| (*q).to_owned()).collect() })
            .collect();
        WidgetDraft::check(HexColor::parse("#112233").unwrap(), WidgetPosition::BottomLeft, languages, true, Vec::new())
    }

    #[test]
    fn questions_fall_back_to_the_primary_language_then_the_sites() {
        let d = draft(&[("en", &["Opening hours?"]), ("de", &["Öffnungszeiten?"])]).unwrap();
        let en = lang("en");
        assert_eq!(d.questions_for(Some(&lang("de-CH")), &en), Some(("de", &["Öffnungszeiten?".to_owned()][..])));
        assert_eq!(d.questions_for(Some(&lang("fr")), &en).map(|(l, _)| l), Some("en"));
        assert_eq!(d.questions_for(None, &en).map(|(l, _)| l), Some("en"));
        assert_eq!(d.questions_for(Some(&lang("fr")), &lang("it")), None);
    }

    #[test]
    fn limits_are_checked_and_blank_questions_dropped() {
        let d = draft(&[("en", &["  A?  ", "", "B?"]), ("de", &["", " "])]).unwrap();
        assert_eq!(d.questions.get("en").unwrap(), &["A?".to_owned(), "B?".to_owned()]);
        assert!(!d.questions.contains_key("de"), "a language without questions is dropped");
        assert_eq!(draft(&[("en", &["1", "2", "3", "4", "5", "6"])]).unwrap_err().field, "questions");
        let long = "x".repeat(MAX_QUESTION_CHARS + 1);
        assert_eq!(draft(&[("en", &[long.as_str()])]).unwrap_err().field, "questions");
        assert_eq!(draft(&[("en", &["A?", "A?"])]).unwrap_err().field, "questions");
        assert_eq!(draft(&[("en", &["A?"]), ("en", &["B?"])]).unwrap_err().field, "languages");
    }
}
