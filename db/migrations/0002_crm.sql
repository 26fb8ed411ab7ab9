-- Up Migration
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 300),
  domain text,
  industry text,
  website text,
  description text,
  owner_id text,
  employee_count integer CHECK (employee_count >= 0),
  health_score integer CHECK (health_score BETWEEN 0 AND 100),
  tags text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX accounts_org_name_idx ON accounts (org_id, name, id);
-- Substring search on name or domain within one organization (btree_gin puts org_id in the same index).
CREATE INDEX accounts_search_name_idx ON accounts USING gin (org_id, lower(name) gin_trgm_ops);
CREATE INDEX accounts_search_domain_idx ON accounts USING gin (org_id, lower(domain) gin_trgm_ops);

CREATE TABLE account_health_scores (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  score integer NOT NULL CHECK (score BETWEEN 0 AND 100),
  factors jsonb NOT NULL DEFAULT '{}',
  computed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_health_scores_account_idx ON account_health_scores (org_id, account_id, computed_at DESC);

CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  first_name text,
  last_name text,
  email text,
  title text,
  department text,
  phone text,
  linkedin_url text,
  company text,
  company_domain text,
  source text,
  notes text,
  owner_id text,
  stage text NOT NULL DEFAULT 'new',
  stage_changed_at timestamptz,
  tags text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX contacts_org_created_idx ON contacts (org_id, created_at DESC, id);
CREATE INDEX contacts_org_account_idx ON contacts (org_id, account_id);
CREATE INDEX contacts_org_email_idx ON contacts (org_id, lower(email));
CREATE INDEX contacts_tags_idx ON contacts USING gin (org_id, tags);

CREATE TABLE deals (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  contact_id uuid REFERENCES contacts(id) ON DELETE SET NULL,
  name text NOT NULL,
  stage text NOT NULL,
  value numeric(16, 2),
  currency char(3),
  owner_id text,
  close_date date,
  tags text[] NOT NULL DEFAULT '{}',
  closed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deals_org_created_idx ON deals (org_id, created_at DESC, id);
CREATE INDEX deals_org_account_idx ON deals (org_id, account_id);

CREATE TABLE activities (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  deal_id uuid REFERENCES deals(id) ON DELETE SET NULL,
  contact_id uuid REFERENCES contacts(id) ON DELETE SET NULL,
  type text NOT NULL,
  subject text,
  body text,
  direction text,
  due_at timestamptz,
  duration_minutes integer,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  effective_time timestamptz GENERATED ALWAYS AS (coalesce(due_at, created_at)) STORED
);
CREATE INDEX activities_account_feed_idx ON activities (org_id, account_id, effective_time DESC, id);
CREATE INDEX activities_deal_feed_idx ON activities (org_id, deal_id, effective_time DESC, id);

CREATE TABLE tags (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  color text CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);

CREATE TABLE folders (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  parent_id uuid REFERENCES folders(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX folders_name_idx ON folders (org_id, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), name);

CREATE TABLE files (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  folder_id uuid REFERENCES folders(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  content_type text NOT NULL DEFAULT 'application/octet-stream',
  size_bytes bigint,
  storage_key text NOT NULL UNIQUE,
  status text NOT NULL DEFAULT 'pending_upload' CHECK (status IN ('pending_upload', 'uploaded', 'archived')),
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  deal_id uuid REFERENCES deals(id) ON DELETE SET NULL,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  uploaded_at timestamptz,
  archived_at timestamptz
);
CREATE INDEX files_org_folder_idx ON files (org_id, folder_id, created_at DESC, id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['accounts', 'account_health_scores', 'contacts', 'deals', 'activities', 'tags', 'folders', 'files'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE files, folders, tags, activities, deals, contacts, account_health_scores, accounts;
