-- Reserved for the knowledge issue (documents, chunks, FTS5, embeddings). Empty until it lands.
SELECT 1;
