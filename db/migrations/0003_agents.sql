-- Up Migration
-- API-visible times of agents, versions and numbers keep milliseconds (timestamptz(3)), as JSON shows them,
-- so a time read from a response and sent back as a filter compares exactly.
CREATE TABLE agents (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text,
  active boolean NOT NULL DEFAULT true,
  is_demo boolean NOT NULL DEFAULT false,
  metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  -- The version that phone numbers and the SIP endpoint serve: the one published last.
  published_version integer,
  created_by text,
  modified_by text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX agents_org_created_idx ON agents (org_id, created_at DESC, id DESC);
CREATE INDEX agents_metadata_idx ON agents USING gin (metadata jsonb_path_ops);

CREATE TABLE agent_versions (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  version integer NOT NULL CHECK (version >= 1),
  config jsonb NOT NULL,
  instruction_builder_inputs jsonb,
  published boolean NOT NULL DEFAULT false,
  published_at timestamptz(3),
  -- Instructions state; stale = instructions_dirty AND NOT instructions_manually_edited.
  instructions_generating boolean NOT NULL DEFAULT false,
  instructions_dirty boolean NOT NULL DEFAULT false,
  instructions_manually_edited boolean NOT NULL DEFAULT false,
  instructions_generated_at timestamptz,
  instructions_error text,
  -- The scaffolding run that made this draft, so a retried activity finds it again.
  scaffold_run_id text,
  created_by text,
  modified_by text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (agent_id, version),
  CHECK (published = (published_at IS NOT NULL)),
  CHECK (NOT (published AND instructions_generating))
);
CREATE INDEX agent_versions_org_agent_idx ON agent_versions (org_id, agent_id, version DESC);

-- An organization's phone-number inventory; each number serves at most one agent per direction.
CREATE TABLE phone_numbers (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  number text NOT NULL CHECK (number ~ '^\+[1-9][0-9]{6,14}$'),
  label text,
  inbound_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
  outbound_agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
  created_by text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (org_id, number)
);
CREATE INDEX phone_numbers_inbound_idx ON phone_numbers (org_id, inbound_agent_id);
CREATE INDEX phone_numbers_outbound_idx ON phone_numbers (org_id, outbound_agent_id);

CREATE TABLE agent_widgets (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  name text NOT NULL,
  config jsonb NOT NULL DEFAULT '{}',
  allowed_origins text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_widgets_agent_idx ON agent_widgets (org_id, agent_id, created_at);

CREATE TABLE agent_sip_endpoints (
  agent_id uuid PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  sip_uri text NOT NULL UNIQUE,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Calls of agents: campaigns write them, agents read their statistics.
CREATE TABLE conversations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
  agent_version integer,
  campaign_id uuid,
  contact_ref text,
  phone_number text,
  direction text CHECK (direction IN ('inbound', 'outbound')),
  status text NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  duration_seconds integer CHECK (duration_seconds >= 0),
  outcome jsonb NOT NULL DEFAULT '{}',
  idempotency_key text UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_org_agent_created_idx ON conversations (org_id, agent_id, created_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['agents', 'agent_versions', 'phone_numbers', 'agent_widgets', 'agent_sip_endpoints', 'conversations'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE conversations, agent_sip_endpoints, agent_widgets, phone_numbers, agent_versions, agents;
