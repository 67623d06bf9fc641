-- Multilingual knowledge. Every chunk records which embedding model made its vector (the model's
-- fingerprint: manifest name and sha256 of model.onnx); a server whose model differs re-embeds the
-- site's chunks and meanwhile searches them by BM25 only, so vectors of two models are never mixed.
-- Chunks stored before this migration carry '' and count as stale for every model.
ALTER TABLE kb_chunks ADD COLUMN model TEXT NOT NULL DEFAULT '';
CREATE INDEX kb_chunks_by_model ON kb_chunks(site_id, model);
-- Each document's language as detected at import (ISO 639-1) and the detector's confidence; NULL when
-- nothing could be told (too little text) and for documents imported before this migration.
ALTER TABLE kb_documents ADD COLUMN lang TEXT;
ALTER TABLE kb_documents ADD COLUMN lang_confidence REAL;
