//! The conversation token (`X-Conversation-Token`): the key to a conversation for every route that
//! names one (the hand-off routes, a question that continues it, a lead that attaches its transcript).
//! A conversation id alone, which webhooks, logs and the console show, opens nothing.

use poem::Request;

use crate::domain::ConversationId;
use crate::http::error::ApiError;
use crate::secrets::token_hash;

/// The longest token header read.
pub const MAX_TOKEN_CHARS: usize = 100;

/// The hash of the `X-Conversation-Token` a request carries: the key to a conversation for the hand-off
/// routes. Missing or malformed is the same 404 `conversation_not_found` as a wrong token.
pub fn token_of(req: &Request) -> Result<[u8; 32], ApiError> {
    let token = req.headers().get("x-conversation-token").and_then(|v| v.to_str().ok()).map(str::trim).filter(|t| !t.is_empty() && t.len() <= MAX_TOKEN_CHARS);
    token.map(token_hash).ok_or(ApiError::ConversationNotFound)
}

/// The token of a conversation a body names (a question that continues it, a lead that attaches its
/// transcript): a header over the documented length is 422 whether or not a conversation is named; with
/// `conversationId`, a missing token is 404 `conversation_not_found`, as a wrong one is.
pub fn token_for(req: &Request, id: Option<ConversationId>) -> Result<Option<(ConversationId, [u8; 32])>, ApiError> {
    let header = req.headers().get("x-conversation-token");
    if header.is_some_and(|v| v.len() > MAX_TOKEN_CHARS) {
        return Err(ApiError::validation("X-Conversation-Token", format!("must be at most {MAX_TOKEN_CHARS} characters")));
    }
    id.map(|id| Ok((id, token_of(req)?))).transpose()
}
