//! The ids a client sends back: `cnv_<ULID>` for a conversation, `qry_<ULID>` for an answer, `usr_<ULID>`
//! for a console user. Parsed once
//! where they come in (a JSON field, a stored row) and canonical after: Crockford base32 in upper case,
//! so `cnv_01j...` and `cnv_01J...` are the same conversation.

use std::fmt;

use serde::{Serialize, Serializer};

use super::{Invalid, prefixed_ulid};

macro_rules! prefixed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub const PREFIX: &'static str = $prefix;

            /// A new id (a ULID: ordered by creation time).
            pub fn new() -> $name {
                $name(format!("{}{}", $prefix, ulid::Ulid::new()))
            }

            /// The id in `s`, in canonical case; an error worded for the client that sent it otherwise.
            pub fn parse(s: &str) -> Result<$name, Invalid> {
                prefixed_ulid($prefix, s).map($name).ok_or_else(|| Invalid(format!(concat!("must be the id of ", $what, " ({}...)"), $prefix)))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
    };
}

prefixed_id!(
    /// A visitor's conversation with a site's assistant (`cnv_...`).
    ConversationId,
    "cnv_",
    "a conversation as a previous answer gave it"
);

prefixed_id!(
    /// One answer to one question (`qry_...`): what feedback and widget events refer to.
    QueryId,
    "qry_",
    "an answer"
);

prefixed_id!(
    /// A person who signs in to the console (`usr_...`).
    UserId,
    "usr_",
    "a console user"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_to_their_canonical_case_and_name_what_they_are() {
        let id = ConversationId::new();
        assert!(id.as_str().starts_with("cnv_") && id.as_str().len() == 30);
        assert_eq!(ConversationId::parse(&id.as_str().to_ascii_lowercase()).unwrap(), id);
        assert_eq!(ConversationId::parse(&id.to_string()).unwrap(), id);
        let e = ConversationId::parse("qry_01JABCDEFGHJKMNPQRSTVWXYZ0").unwrap_err();
        assert!(e.0.contains("cnv_"), "{e}");
        assert!(QueryId::parse("qry_81JABCDEFGHJKMNPQRSTVWXYZ0").is_err(), "above 128 bits");
        assert!(QueryId::parse("qry_").is_err());
        assert_eq!(serde_json::to_string(&QueryId::parse("qry_01jabcdefghjkmnpqrstvwxyz0").unwrap()).unwrap(), r#""qry_01JABCDEFGHJKMNPQRSTVWXYZ0""#);
    }
}
