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
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
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
    rows.into_iter().map(|(role, text, at)| Ok(Turn { role: Role::parse(&role)?, text, at })).collect()
}

/// Appends a question and its answer to the conversation (created when new), dropping turns beyond the
/// bound. `NotFound` when the id belongs to another site.
pub(super) fn append(tx: &Transaction<'_>, site: &SiteId, id: &ConversationId, question: &str, answer: &str, query_id: &QueryId, at: Timestamp) -> Result<()> {
    let owner: Option<SiteId> = tx.query_row("SELECT site_id FROM conversations WHERE id = ?1", [id], |r| r.get(0)).optional_row()?;
    match owner {
        Some(o) if o != *site => return Err(StoreError::NotFound),
        Some(_) => {
            tx.execute("UPDATE conversations SET updated_at = ?2 WHERE id = ?1", params![id, at])?;
        }
        None => {
            tx.execute("INSERT INTO conversations (id, site_id, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)", params![id, site, at])?;
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
}
