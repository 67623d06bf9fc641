//! Conversations: the last turns of a visitor's page session on one site, so a follow-up question is
//! understood with the earlier ones and a lead can carry what the visitor asked. Bounded: the last
//! [`MAX_TURNS`] turns of a conversation are kept, each at most [`MAX_TURN_CHARS`] characters.

use rusqlite::{Transaction, params};
use serde::{Deserialize, Serialize};

use super::{OptionalRow, Result, SiteStore, StoreError};
use crate::domain::{ConversationId, QueryId, SiteId, Timestamp};

pub const MAX_TURNS: i64 = 20;
pub const MAX_TURN_CHARS: usize = 2000;

/// Who said a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    /// A person of the site's staff, during a hand-off (`store::handoff`).
    Staff,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Staff => "staff",
        }
    }

    fn parse(s: &str) -> Result<Role> {
        match s {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            other => Err(StoreError::corrupt("conversation_turns.role", other)),
        }
    }
}

/// One turn, as a transcript shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Turn {
    pub role: Role,
    pub text: String,
    pub at: Timestamp,
    /// The person's display name, for a staff turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

fn bounded(text: &str) -> String {
    text.chars().take(MAX_TURN_CHARS).collect()
}

/// The turns of a conversation of this site, oldest first; `NotFound` when the site has no such
/// conversation (another site's id included).
pub(super) fn turns(tx: &rusqlite::Connection, site: &SiteId, id: &ConversationId) -> Result<Vec<Turn>> {
    let exists = tx.query_row("SELECT 1 FROM conversations WHERE id = ?1 AND site_id = ?2", params![id, site], |_| Ok(())).optional_row()?;
    exists.ok_or(StoreError::NotFound)?;
    let mut stmt = tx.prepare_cached("SELECT role, text, at FROM conversation_turns WHERE conversation_id = ?1 ORDER BY seq")?;
    let rows = stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<Vec<(String, String, Timestamp)>>>()?;
    rows.into_iter().map(|(role, text, at)| Ok(Turn { role: Role::parse(&role)?, text, at, author: None })).collect()
}

/// Everything said in a conversation, oldest first: the questions and answers (the last [`MAX_TURNS`])
/// and every message between the visitor and a person of the staff during a hand-off. What a lead, the
/// hand-off webhook and the console show. `NotFound` as [`turns`].
pub(super) fn transcript_turns(c: &rusqlite::Connection, site: &SiteId, id: &ConversationId) -> Result<Vec<Turn>> {
    let mut all = turns(c, site, id)?;
    // The messages between visitor and staff, as `store::handoff` writes them.
    let mut stmt = c.prepare_cached(
        "SELECT role, author, text, at FROM conversation_events WHERE site_id = ?1 AND conversation_id = ?2 AND kind = 'message' ORDER BY id",
    )?;
    let rows = stmt.query_map(params![site, id], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get::<_, Option<String>>(2)?, r.get(3)?)))?;
    for row in rows {
        let (role, author, text, at) = row?;
        let role = match role.as_str() {
            "user" => Role::User,
            "staff" => Role::Staff,
            other => return Err(StoreError::corrupt("conversation_events.role", other)),
        };
        all.push(Turn { role, text: text.unwrap_or_default(), at, author });
    }
    // Stable: at the same millisecond a question and its answer keep their order.
    all.sort_by_key(|t| t.at);
    Ok(all)
}

/// Appends a question and its answer to the conversation (created when new), dropping turns beyond the
/// bound. `NotFound` when the id belongs to another site.
///
/// A new conversation stores `token_hash`, the SHA-256 of the token its first answer carries.
#[allow(clippy::too_many_arguments)] // one row's columns; a struct would only rename them
pub(super) fn append(
    tx: &Transaction<'_>,
    site: &SiteId,
    id: &ConversationId,
    token_hash: Option<&[u8; 32]>,
    question: &str,
    answer: &str,
    query_id: &QueryId,
    at: Timestamp,
) -> Result<()> {
    let owner: Option<SiteId> = tx.query_row("SELECT site_id FROM conversations WHERE id = ?1", [id], |r| r.get(0)).optional_row()?;
    match owner {
        Some(o) if o != *site => return Err(StoreError::NotFound),
        Some(_) => {
            tx.execute("UPDATE conversations SET updated_at = ?2 WHERE id = ?1", params![id, at])?;
        }
        None => {
            tx.execute(
                "INSERT INTO conversations (id, site_id, created_at, updated_at, token_hash) VALUES (?1, ?2, ?3, ?3, ?4)",
                params![id, site, at, token_hash.map(|h| &h[..])],
            )?;
        }
    }
    let next: i64 = tx.query_row("SELECT coalesce(max(seq), 0) + 1 FROM conversation_turns WHERE conversation_id = ?1", [id], |r| r.get(0))?;
    let mut insert = tx.prepare_cached("INSERT INTO conversation_turns (conversation_id, seq, role, text, query_id, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    insert.execute(params![id, next, Role::User.as_str(), bounded(question), query_id, at])?;
    insert.execute(params![id, next + 1, Role::Assistant.as_str(), bounded(answer), query_id, at])?;
    tx.execute("DELETE FROM conversation_turns WHERE conversation_id = ?1 AND seq <= ?2", params![id, next + 1 - MAX_TURNS])?;
    Ok(())
}

/// One site's conversations.
pub struct Conversations<'s> {
    site: SiteStore<'s>,
}

impl<'s> Conversations<'s> {
    pub(super) fn new(site: SiteStore<'s>) -> Self {
        Self { site }
    }

    /// The turns of one of the site's conversations, oldest first; `NotFound` for any other id.
    pub fn turns(&self, id: &ConversationId) -> Result<Vec<Turn>> {
        let site = self.site.id();
        self.site.store().read(|c| turns(c, &site, id))
    }

    /// Everything said in one of the site's conversations, human turns included, oldest first.
    pub fn transcript_turns(&self, id: &ConversationId) -> Result<Vec<Turn>> {
        let site = self.site.id();
        self.site.store().read(|c| transcript_turns(c, &site, id))
    }
}

/// Which conversations the console lists.
#[derive(Debug, Clone, Default)]
pub struct ConversationFilter {
    /// Conversations whose last turn is at or after this.
    pub since: Option<Timestamp>,
    /// Only those with a question the knowledge did not answer.
    pub unanswered: bool,
    /// Only those that ended in a lead.
    pub with_lead: bool,
    /// Only those with a rated answer.
    pub rated: bool,
    /// Only those with a question in this language (ISO 639-1 or BCP 47 as logged).
    pub lang: Option<String>,
    /// Only those where a turn contains this text (case-insensitive for ASCII).
    pub text: Option<String>,
}

/// A conversation in the console's list.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRow {
    pub id: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub turns: u64,
    pub first_question: String,
    pub unanswered: u64,
    pub has_lead: bool,
    /// Messages between the visitor and a person of the staff (live hand-off), beside `turns`.
    pub person_messages: u64,
}

/// One exchange of a transcript: the question, the answer, and what the answer cited and got.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub question: String,
    pub answer: String,
    pub at: Timestamp,
    pub query_id: Option<String>,
    pub resolved: Option<bool>,
    /// (title, url) of each cited source, in order.
    pub sources: Vec<(String, Option<String>)>,
    /// `up` or `down`, and the comment.
    pub rating: Option<(String, Option<String>)>,
}

fn like_pattern(text: &str) -> String {
    let escaped: String = text.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    format!("%{escaped}%")
}

/// A page of the console's list.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationPage {
    pub rows: Vec<ConversationRow>,
    /// Where the examination stopped when it reached its bound before `limit` rows matched: the key
    /// (`updated_at`, `id`) of the last conversation examined, to go on from.
    pub resume: Option<(Timestamp, String)>,
}

impl<'s> Conversations<'s> {
    /// The site's conversations matching `f`, the most recently active first, at most `limit`, before
    /// `(updated_at, id)` when given (keyset pagination). With `examine`, at most that many of the
    /// period's conversations are looked at: a filter few of them match (a rare text) reads a bounded
    /// slice instead of the whole period, and `resume` says where to go on.
    pub fn page(&self, f: &ConversationFilter, before: Option<(Timestamp, String)>, limit: usize, examine: Option<usize>) -> Result<ConversationPage> {
        let site = self.site.id();
        self.site.store().read(|c| {
            // The candidates are a keyset slice of the period in list order; the filters run on that
            // slice only. A candidate's rating is found through its questions (by conversation), then
            // each question's feedback row (by primary key), never by scanning the site's feedback.
            let mut stmt = c.prepare_cached(
                "SELECT c.id, c.created_at, c.updated_at,
                        (SELECT count(*) FROM conversation_turns t WHERE t.conversation_id = c.id),
                        coalesce((SELECT t.text FROM conversation_turns t WHERE t.conversation_id = c.id AND t.role = 'user' ORDER BY t.seq LIMIT 1), ''),
                        (SELECT count(*) FROM query_log q WHERE q.conversation_id = c.id AND q.site_id = c.site_id AND q.resolved = 0),
                        EXISTS (SELECT 1 FROM leads l WHERE l.conversation_id = c.id AND l.site_id = c.site_id),
                        (SELECT count(*) FROM conversation_events e WHERE e.conversation_id = c.id AND e.kind = 'message')
                 FROM (SELECT id, site_id, created_at, updated_at FROM conversations
                       WHERE site_id = ?1 AND (?2 IS NULL OR updated_at >= ?2) AND (?3 IS NULL OR (updated_at, id) < (?3, ?4))
                       ORDER BY updated_at DESC, id DESC LIMIT ?11) c
                 WHERE (?5 = 0 OR EXISTS (SELECT 1 FROM query_log q WHERE q.conversation_id = c.id AND q.site_id = c.site_id AND q.resolved = 0))
                   AND (?6 = 0 OR EXISTS (SELECT 1 FROM leads l WHERE l.conversation_id = c.id AND l.site_id = c.site_id))
                   AND (?7 = 0 OR EXISTS (SELECT 1 FROM query_log q WHERE q.conversation_id = c.id AND q.site_id = c.site_id
                                          AND EXISTS (SELECT 1 FROM feedback f WHERE f.site_id = q.site_id AND f.query_id = q.id)))
                   AND (?8 IS NULL OR EXISTS (SELECT 1 FROM query_log q WHERE q.conversation_id = c.id AND q.site_id = c.site_id AND q.lang = ?8))
                   AND (?9 IS NULL OR EXISTS (SELECT 1 FROM conversation_turns t WHERE t.conversation_id = c.id AND t.text LIKE ?9 ESCAPE '\\'))
                 ORDER BY c.updated_at DESC, c.id DESC LIMIT ?10",
            )?;
            let (at, id) = before.clone().map_or((None, None), |(a, i)| (Some(a), Some(i)));
            let text = f.text.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(like_pattern);
            // SQLite reads a negative LIMIT as none.
            let bound = examine.map_or(-1, |n| n as i64);
            let rows = stmt.query_map(params![site, f.since, at, id, f.unanswered, f.with_lead, f.rated, f.lang, text, limit as i64, bound], |r| {
                Ok(ConversationRow {
                    id: r.get(0)?,
                    created_at: r.get(1)?,
                    updated_at: r.get(2)?,
                    turns: r.get::<_, i64>(3)? as u64,
                    first_question: r.get(4)?,
                    unanswered: r.get::<_, i64>(5)? as u64,
                    has_lead: r.get(6)?,
                    person_messages: r.get::<_, i64>(7)? as u64,
                })
            })?;
            let rows: Vec<ConversationRow> = rows.collect::<rusqlite::Result<_>>()?;
            let resume = match examine {
                Some(n) if n > 0 && rows.len() < limit => {
                    // The last candidate examined, when there is one more after it.
                    let mut stmt = c.prepare_cached(
                        "SELECT updated_at, id FROM conversations
                         WHERE site_id = ?1 AND (?2 IS NULL OR updated_at >= ?2) AND (?3 IS NULL OR (updated_at, id) < (?3, ?4))
                         ORDER BY updated_at DESC, id DESC LIMIT 2 OFFSET ?5",
                    )?;
                    let keys = stmt.query_map(params![site, f.since, at, id, n as i64 - 1], |r| Ok((r.get::<_, Timestamp>(0)?, r.get::<_, String>(1)?)))?;
                    let keys: Vec<(Timestamp, String)> = keys.collect::<rusqlite::Result<_>>()?;
                    (keys.len() == 2).then(|| keys.into_iter().next()).flatten()
                }
                _ => None,
            };
            Ok(ConversationPage { rows, resume })
        })
    }

    /// A conversation's exchanges, oldest first, with each answer's sources and rating; `NotFound` for
    /// another site's id.
    pub fn transcript(&self, id: &str) -> Result<Vec<Exchange>> {
        let site = self.site.id();
        let cid = ConversationId::parse(id).map_err(|_| StoreError::NotFound)?;
        self.site.store().read(|c| {
            let turns = turns(c, &site, &cid)?;
            let mut out: Vec<Exchange> = Vec::new();
            let mut pending: Option<&Turn> = None;
            let mut stmt = c.prepare_cached("SELECT query_id FROM conversation_turns WHERE conversation_id = ?1 ORDER BY seq")?;
            let ids: Vec<Option<String>> = stmt.query_map([&cid], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
            for (turn, query_id) in turns.iter().zip(ids) {
                match turn.role {
                    Role::User => pending = Some(turn),
                    Role::Assistant => {
                        let question = pending.take().map(|q| q.text.clone()).unwrap_or_default();
                        let (resolved, sources, rating) = match &query_id {
                            Some(q) => {
                                let resolved: Option<bool> = c
                                    .query_row("SELECT resolved FROM query_log WHERE id = ?1 AND site_id = ?2", params![q, site], |r| r.get(0))
                                    .optional_row()?;
                                let mut s = c.prepare_cached("SELECT title, url FROM query_sources WHERE site_id = ?1 AND query_id = ?2 ORDER BY rank")?;
                                let sources = s.query_map(params![site, q], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
                                let rating = c
                                    .query_row("SELECT rating, comment FROM feedback WHERE site_id = ?1 AND query_id = ?2", params![site, q], |r| {
                                        Ok((r.get(0)?, r.get(1)?))
                                    })
                                    .optional_row()?;
                                (resolved, sources, rating)
                            }
                            None => (None, Vec::new(), None),
                        };
                        out.push(Exchange { question, answer: turn.text.clone(), at: turn.at, query_id, resolved, sources, rating });
                    }
                    // `turns` holds the questions and answers only; a hand-off's messages are in `transcript_turns`.
                    Role::Staff => {}
                }
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Currency, Lang, Slug, Tier};
    use crate::secrets::Keyring;
    use crate::store::history::Event;
    use crate::store::queries::QueryRecord;
    use crate::store::{NewSite, Store};

    #[test]
    fn a_rare_filter_reads_a_bounded_slice_and_says_where_to_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), Keyring::from_bytes(&[6; 32])).unwrap();
        let new = NewSite::new("S", Slug::vertical("dental").unwrap(), Tier::Pro, Currency::parse("EUR").unwrap(), Lang::parse("en").unwrap());
        let (site, _) = store.sites().create(new).unwrap();
        let start = Timestamp::now().as_millis() - 3_600_000;
        // 30 conversations a minute apart; the 3rd newest and the oldest mention a quokka.
        let events = (0..30i64)
            .map(|i| {
                let text = if i == 0 || i == 27 { "Is a quokka allowed?" } else { "When are you open?" };
                let q = QueryRecord::answered(site.id, text, Some(ConversationId::new()), Vec::new());
                (Timestamp::from_millis(start + i * 60_000), Event::Question(q))
            })
            .collect();
        store.site(site.id).history().write(events).unwrap();
        let list = store.site(site.id).conversations();
        let rare = ConversationFilter { text: Some("QUOKKA".into()), ..ConversationFilter::default() };

        let first = list.page(&rare, None, 5, Some(10)).unwrap();
        assert_eq!(first.rows.len(), 1, "the newest ten hold one");
        let resume = first.resume.clone().expect("the bound was reached: go on from the tenth");
        let all = list.page(&ConversationFilter::default(), None, 30, None).unwrap().rows;
        assert_eq!(resume, (all[9].updated_at, all[9].id.clone()));

        let second = list.page(&rare, Some(resume), 5, Some(10)).unwrap();
        assert!(second.rows.is_empty() && second.resume.is_some(), "{second:?}");
        let third = list.page(&rare, second.resume, 5, Some(10)).unwrap();
        assert_eq!(third.rows.len(), 1, "the oldest");
        assert_eq!(third.resume, None, "nothing after the last ten");
        // Unbounded, as the export reads: both at once.
        assert_eq!(list.page(&rare, None, 5, None).unwrap(), ConversationPage { rows: vec![first.rows[0].clone(), third.rows[0].clone()], resume: None });
    }
}
