-- Optional generative answers. Each site chooses whether the operator's language model may write its
-- answers ('generative', used only when a generator is configured) or they are always quoted
-- ('extractive'). The query log records how each answer was made, by which model, the tokens it used and
-- how long the first validated sentence took.
ALTER TABLE sites ADD COLUMN answers TEXT NOT NULL DEFAULT 'generative' CHECK (answers IN ('generative', 'extractive'));
ALTER TABLE query_log ADD COLUMN mode TEXT NOT NULL DEFAULT 'extractive' CHECK (mode IN ('generative', 'extractive'));
ALTER TABLE query_log ADD COLUMN model TEXT;
ALTER TABLE query_log ADD COLUMN prompt_tokens INTEGER;
ALTER TABLE query_log ADD COLUMN completion_tokens INTEGER;
ALTER TABLE query_log ADD COLUMN first_sentence_ms INTEGER;
