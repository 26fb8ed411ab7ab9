-- Up Migration
-- Outreach sending domains (owned or bought through a registrar) with the DNS records a sending domain
-- needs and the status of each from the last verification run, and mailboxes (connected by SMTP/IMAP
-- settings or provisioned on a verified domain). Secrets (mailbox passwords, DKIM private keys) are
-- workflow credentials: only their ids are stored here.

CREATE TABLE outreach_domains (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  -- Lower-cased, without a trailing dot.
  name text NOT NULL CHECK (length(name) BETWEEN 3 AND 253 AND name = lower(name)),
  source text NOT NULL CHECK (source IN ('owned', 'purchased')),
  -- The registrar a purchased domain was bought through (`simulated` for the built-in one).
  registrar text,
  registrar_order_id text,
  price_cents integer CHECK (price_cents >= 0),
  currency text,
  registered_until timestamptz,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'failed')),
  dkim_selector text NOT NULL,
  dkim_public_key text NOT NULL,
  dkim_credential_id uuid REFERENCES workflow_credentials(id) ON DELETE SET NULL,
  tracking_host text NOT NULL,
  last_verified_at timestamptz,
  verified_at timestamptz,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);
CREATE INDEX outreach_domains_org_created_idx ON outreach_domains (org_id, created_at DESC, id DESC);

-- One row per DNS record the domain needs; status from the last verification run.
CREATE TABLE outreach_domain_records (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  domain_id uuid NOT NULL REFERENCES outreach_domains(id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('spf', 'dkim', 'dmarc', 'tracking')),
  type text NOT NULL CHECK (type IN ('TXT', 'CNAME')),
  host text NOT NULL,
  value text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'mismatch', 'missing', 'error')),
  found text[],
  checked_at timestamptz,
  PRIMARY KEY (domain_id, purpose)
);
CREATE INDEX outreach_domain_records_org_idx ON outreach_domain_records (org_id, domain_id);

CREATE TABLE outreach_mailboxes (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email_address text NOT NULL CHECK (length(email_address) BETWEEN 3 AND 320 AND email_address = lower(email_address)),
  display_name text CHECK (length(display_name) <= 200),
  kind text NOT NULL CHECK (kind IN ('smtp', 'simulated')),
  -- How the mailbox came to be: connected by its settings, or provisioned on one of our domains.
  origin text NOT NULL DEFAULT 'connected' CHECK (origin IN ('connected', 'provisioned')),
  provider text,
  domain_id uuid REFERENCES outreach_domains(id) ON DELETE RESTRICT,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  daily_limit integer NOT NULL DEFAULT 50 CHECK (daily_limit BETWEEN 1 AND 2000),
  window_start text NOT NULL DEFAULT '09:00' CHECK (window_start ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  window_end text NOT NULL DEFAULT '17:00' CHECK (window_end ~ '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$'),
  window_days integer[] NOT NULL DEFAULT '{1,2,3,4,5}'
    CHECK (cardinality(window_days) BETWEEN 1 AND 7 AND window_days <@ '{1,2,3,4,5,6,7}'::integer[]),
  timezone text NOT NULL DEFAULT 'UTC',
  warmup_enabled boolean NOT NULL DEFAULT false,
  bounce_count integer NOT NULL DEFAULT 0 CHECK (bounce_count >= 0),
  failure_count integer NOT NULL DEFAULT 0 CHECK (failure_count >= 0),
  last_bounce_at timestamptz,
  last_failure_at timestamptz,
  smtp_host text,
  smtp_port integer CHECK (smtp_port BETWEEN 1 AND 65535),
  smtp_secure boolean,
  smtp_username text,
  imap_host text,
  imap_port integer CHECK (imap_port BETWEEN 1 AND 65535),
  imap_secure boolean,
  imap_username text,
  -- The workflow credential holding {smtp_password, imap_password}; never returned.
  credential_id uuid REFERENCES workflow_credentials(id) ON DELETE SET NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, email_address),
  CHECK (window_start < window_end),
  CHECK (kind <> 'smtp' OR (smtp_host IS NOT NULL AND smtp_port IS NOT NULL AND smtp_secure IS NOT NULL))
);
CREATE INDEX outreach_mailboxes_org_created_idx ON outreach_mailboxes (org_id, created_at DESC, id DESC);
CREATE INDEX outreach_mailboxes_domain_idx ON outreach_mailboxes (domain_id) WHERE domain_id IS NOT NULL;
CREATE INDEX outreach_mailboxes_credential_idx ON outreach_mailboxes (credential_id) WHERE credential_id IS NOT NULL;
CREATE INDEX outreach_domains_credential_idx ON outreach_domains (dkim_credential_id) WHERE dkim_credential_id IS NOT NULL;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['outreach_domains', 'outreach_domain_records', 'outreach_mailboxes'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE outreach_mailboxes;
DROP TABLE outreach_domain_records;
DROP TABLE outreach_domains;
