-- The analysis each site's FTS5 table was built with (knowledge::analysis::VERSION): 0 is FTS5's
-- Porter tokenizer over the raw text, as every table before this migration. A table of another version
-- than the running build's is rebuilt from the stored chunks at `serve` start and before an import.
ALTER TABLE kb_generations ADD COLUMN fts_analyzer INTEGER NOT NULL DEFAULT 0;
