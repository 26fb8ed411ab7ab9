-- Up Migration
-- Knowledge bases: datasets, sources (URL or FILE) that may serve several datasets, and the chunks of
-- each source with a full-text vector and an embedding. A source's chunks are written under a new
-- generation and become visible in one commit (kb_sources.generation), so a re-ingest never shows half.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE kb_datasets (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
  chunking_method text NOT NULL CHECK (chunking_method IN ('fixed_size', 'structure')),
  chunk_size integer NOT NULL CHECK (chunk_size BETWEEN 100 AND 8000),
  -- The embedding space of the dataset, fixed at creation: queries and chunks of another model never mix.
  embedding_model text NOT NULL,
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kb_datasets_org_created_idx ON kb_datasets (org_id, created_at DESC, id DESC);

CREATE TABLE kb_sources (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('FILE', 'URL')),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 500),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
  url text,
  domain text,
  file_id uuid REFERENCES files(id) ON DELETE SET NULL,
  file_upload_status text NOT NULL DEFAULT 'pending' CHECK (file_upload_status IN ('pending', 'processing', 'ready', 'failed')),
  failure_reason text,
  file_processor text,
  file_size bigint,
  chunking_method text CHECK (chunking_method IN ('fixed_size', 'structure')),
  chunk_size integer CHECK (chunk_size BETWEEN 100 AND 8000),
  -- The generation whose chunks queries see; ingestion writes the next one, then moves this.
  generation integer NOT NULL DEFAULT 0,
  chunk_count integer NOT NULL DEFAULT 0,
  embedding_model text,
  ingested_at timestamptz,
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((type = 'URL') = (url IS NOT NULL))
);
CREATE INDEX kb_sources_org_created_idx ON kb_sources (org_id, created_at DESC, id DESC);
CREATE INDEX kb_sources_org_type_name_idx ON kb_sources (org_id, type, lower(name));
CREATE INDEX kb_sources_file_fk_idx ON kb_sources (file_id) WHERE file_id IS NOT NULL;

CREATE TABLE kb_dataset_sources (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  dataset_id uuid NOT NULL REFERENCES kb_datasets(id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES kb_sources(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset_id, source_id)
);
CREATE INDEX kb_dataset_sources_source_idx ON kb_dataset_sources (source_id);

CREATE TABLE kb_chunks (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES kb_sources(id) ON DELETE CASCADE,
  generation integer NOT NULL,
  ordinal integer NOT NULL,
  content text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  embedding_model text,
  dimension integer,
  -- Untyped so each dataset keeps its own dimension; the HNSW indexes are per dimension (below).
  embedding vector,
  UNIQUE (source_id, generation, ordinal)
);
CREATE INDEX kb_chunks_tsv_idx ON kb_chunks USING gin (tsv);
-- One HNSW index per dimension in use: the built-in embedder (384) and the common OpenAI-compatible
-- sizes. A dimension without an index is still answered, by an exact scan.
CREATE INDEX kb_chunks_hnsw_384_idx ON kb_chunks USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dimension = 384;
CREATE INDEX kb_chunks_hnsw_768_idx ON kb_chunks USING hnsw ((embedding::vector(768)) vector_cosine_ops) WHERE dimension = 768;
CREATE INDEX kb_chunks_hnsw_1536_idx ON kb_chunks USING hnsw ((embedding::vector(1536)) vector_cosine_ops) WHERE dimension = 1536;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['kb_datasets', 'kb_sources', 'kb_dataset_sources', 'kb_chunks'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE kb_chunks;
DROP TABLE kb_dataset_sources;
DROP TABLE kb_sources;
DROP TABLE kb_datasets;
