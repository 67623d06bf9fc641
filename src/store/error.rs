//! What went wrong in the store, told apart by whose fault it is: the caller's input (`Invalid`,
//! `Conflict`, `NotFound`), the stored data (`Corrupt`: a row this build cannot read back), or the
//! database itself (`Busy`, `Database`). Callers map these exhaustively; only the first group may be
//! shown to whoever made the request, the rest become a generic 5xx with the cause in the log.

/// The store's error type. rusqlite's own errors never leave `store/`: they are classified here.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// The caller's request contradicts what is stored (a slug that exists, a token on a tier without one).
    #[error("{0}")]
    Conflict(String),
    /// The caller's input is wrong, worded for the person who typed it.
    #[error("{0}")]
    Invalid(String),
    /// A stored value this build cannot read back (a bad enum, time or JSON column).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// Another connection holds the write lock for longer than the busy timeout.
    #[error("database busy")]
    Busy,
    /// The site is being moved to another node (`site export`): its writes are refused until the move
    /// ends; the client should try again (by then the balancer sends it to the new node).
    #[error("the site is being moved to another node")]
    Moving,
    #[error("database error: {0}")]
    Database(#[source] rusqlite::Error),
    #[error("the database was written by a newer sitebot (schema {found}, this build knows {known}); upgrade sitebot")]
    TooNew { found: i64, known: i64 },
    #[error(transparent)]
    Keyring(#[from] crate::secrets::KeyringError),
    #[error("background task failed: {0}")]
    Join(String),
}

impl StoreError {
    /// A stored value that does not parse.
    pub(super) fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt(format!("{what}: {e}"))
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::Error as E;
        match e {
            E::SqliteFailure(f, _) if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => StoreError::Busy,
            E::FromSqlConversionFailure(..) | E::InvalidColumnType(..) | E::IntegralValueOutOfRange(..) => StoreError::Corrupt(e.to_string()),
            e => StoreError::Database(e),
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_columns_are_corrupt_data_and_locks_are_busy() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let e: StoreError = conn.query_row("SELECT 'x'", [], |r| r.get::<_, i64>(0)).unwrap_err().into();
        assert!(matches!(e, StoreError::Corrupt(_)), "{e:?}");
        let busy = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
        assert!(matches!(StoreError::from(busy), StoreError::Busy));
        let e: StoreError = conn.execute("SELEC 1", []).unwrap_err().into();
        assert!(matches!(e, StoreError::Database(_)));
    }
}
