-- #28 exactness: a second vector for chunks of English documents, from an English-only model
-- (all-MiniLM-L6-v2), filled in the background (`knowledge::import::english`). English questions on English
-- passages are scored with its cosine as well (`knowledge::search::English`). NULL until filled; `en_model`
-- is the fingerprint of the model that made it ('' for none), so a model change fills them again.
ALTER TABLE kb_chunks ADD COLUMN en_embedding BLOB;
ALTER TABLE kb_chunks ADD COLUMN en_model TEXT NOT NULL DEFAULT '';
