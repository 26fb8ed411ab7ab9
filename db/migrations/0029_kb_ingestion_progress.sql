-- Up Migration
-- Ingestion progress on the source (the generation being written: chunks extracted, chunks embedded so
-- far), and a partial index that hands each embedding batch the next chunks without a vector directly,
-- so a 10,000-chunk source does not rescan its embedded chunks at every batch.

ALTER TABLE kb_sources
  ADD COLUMN chunks_total integer NOT NULL DEFAULT 0 CHECK (chunks_total >= 0),
  ADD COLUMN chunks_embedded integer NOT NULL DEFAULT 0 CHECK (chunks_embedded >= 0);
UPDATE kb_sources SET chunks_total = chunk_count, chunks_embedded = chunk_count WHERE file_upload_status = 'ready';

CREATE INDEX kb_chunks_unembedded_idx ON kb_chunks (source_id, generation, ordinal) WHERE embedding IS NULL;

-- Down Migration
DROP INDEX kb_chunks_unembedded_idx;
ALTER TABLE kb_sources DROP COLUMN chunks_total, DROP COLUMN chunks_embedded;
