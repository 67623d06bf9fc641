-- The console's conversations page: a conversation's questions and its lead, found by index.
CREATE INDEX query_log_by_conversation ON query_log(conversation_id) WHERE conversation_id IS NOT NULL;
CREATE INDEX leads_by_conversation ON leads(conversation_id) WHERE conversation_id IS NOT NULL;
