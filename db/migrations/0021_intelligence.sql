-- Up Migration
-- Customer intelligence (ICP profiles, research runs, ICP-fit runs) and account readiness profiles.

-- A named ICP criteria set. `version` grows on every criteria change; each version is kept, so a
-- score names the exact criteria it used.
CREATE TABLE icp_profiles (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  criteria jsonb NOT NULL CHECK (jsonb_typeof(criteria) = 'array'),
  is_default boolean NOT NULL DEFAULT false,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);
CREATE INDEX icp_profiles_org_created_idx ON icp_profiles (org_id, created_at DESC, id DESC);
-- At most one default profile (the readiness fit axis) per organization.
CREATE UNIQUE INDEX icp_profiles_org_default_idx ON icp_profiles (org_id) WHERE is_default;

CREATE TABLE icp_profile_versions (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  profile_id uuid NOT NULL REFERENCES icp_profiles(id) ON DELETE CASCADE,
  version integer NOT NULL,
  criteria jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (profile_id, version)
);

CREATE TABLE research_runs (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  domain text NOT NULL,
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete')),
  pages jsonb NOT NULL DEFAULT '[]',
  facts jsonb NOT NULL DEFAULT '[]',
  summary text,
  summary_source text CHECK (summary_source IN ('llm', 'builtin')),
  applied_fields text[] NOT NULL DEFAULT '{}',
  kept_fields text[] NOT NULL DEFAULT '{}',
  credits_used integer NOT NULL DEFAULT 0 CHECK (credits_used >= 0),
  error text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX research_runs_org_created_idx ON research_runs (org_id, created_at DESC, id DESC);
CREATE INDEX research_runs_account_idx ON research_runs (org_id, account_id, completed_at DESC) WHERE account_id IS NOT NULL;
CREATE INDEX research_runs_account_fk_idx ON research_runs (account_id) WHERE account_id IS NOT NULL;

-- The facts research last found for an account, and the value research last wrote into each account
-- column: a column whose value differs from what research wrote was edited by a person and is kept.
CREATE TABLE account_facts (
  account_id uuid PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  run_id uuid NOT NULL,
  facts jsonb NOT NULL,
  written jsonb NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_facts_org_idx ON account_facts (org_id);

CREATE TABLE icp_fit_runs (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  profile_id uuid REFERENCES icp_profiles(id) ON DELETE SET NULL,
  profile_version integer NOT NULL,
  account_count integer NOT NULL CHECK (account_count BETWEEN 1 AND 100),
  status text NOT NULL DEFAULT 'queued'
    CHECK (status IN ('queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete')),
  scored integer NOT NULL DEFAULT 0,
  error text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX icp_fit_runs_org_created_idx ON icp_fit_runs (org_id, created_at DESC, id DESC);
CREATE INDEX icp_fit_runs_profile_fk_idx ON icp_fit_runs (profile_id) WHERE profile_id IS NOT NULL;

-- One row per requested account, in input order (position); filled in as the run scores.
CREATE TABLE icp_fit_results (
  run_id uuid NOT NULL REFERENCES icp_fit_runs(id) ON DELETE CASCADE,
  position integer NOT NULL,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid NOT NULL,
  outcome text CHECK (outcome IN ('scored', 'not_found', 'no_score')),
  fit_score integer CHECK (fit_score BETWEEN 0 AND 100),
  grade text CHECK (grade IN ('A', 'B', 'C', 'D')),
  breakdown jsonb NOT NULL DEFAULT '[]',
  confidence numeric(3, 2),
  PRIMARY KEY (run_id, position)
);

CREATE TABLE readiness_profiles (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  label text NOT NULL CHECK (label IN ('hot', 'warm', 'nurture', 'not_a_fit', 'unknown_fit')),
  fit jsonb NOT NULL,
  engagement jsonb NOT NULL,
  timing jsonb NOT NULL,
  icp_profile_id uuid,
  icp_profile_version integer,
  trigger text NOT NULL CHECK (trigger IN ('manual', 'nightly')),
  computed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX readiness_profiles_account_idx ON readiness_profiles (org_id, account_id, computed_at DESC);
CREATE INDEX readiness_profiles_account_fk_idx ON readiness_profiles (account_id);

-- Readiness's engagement axis finds an account's campaign calls by its contacts' phone numbers.
CREATE INDEX campaign_contacts_phones_idx ON campaign_contacts USING gin (org_id, phone_numbers);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['icp_profiles', 'icp_profile_versions', 'research_runs', 'account_facts', 'icp_fit_runs', 'icp_fit_results', 'readiness_profiles'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP INDEX campaign_contacts_phones_idx;
DROP TABLE readiness_profiles, icp_fit_results, icp_fit_runs, account_facts, research_runs, icp_profile_versions, icp_profiles;
