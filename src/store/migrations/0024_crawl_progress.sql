-- #25 knowledge: where a running crawl of a source is (JSON: pages done, pages queued, the last URL,
-- when), written by the process that holds the source's lease a few times a second and cleared when
-- the crawl finishes, so the console shows a crawl's progress whichever process runs it.
ALTER TABLE crawl_sources ADD COLUMN progress TEXT;
