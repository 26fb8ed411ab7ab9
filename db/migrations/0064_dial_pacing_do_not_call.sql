-- Up Migration
-- Pacing beside the concurrency limit: calls started per second through the organization's account and
-- through each of its caller numbers (null: the deployment's defaults).
ALTER TABLE campaign_concurrency_settings
  ADD COLUMN calls_per_second integer CHECK (calls_per_second BETWEEN 1 AND 100),
  ADD COLUMN calls_per_second_per_number integer CHECK (calls_per_second_per_number BETWEEN 1 AND 10);

-- The earliest instant the next call may start, per organization and scope (`account`, or `number:<E.164>`,
-- `number:` alone for the account's default caller id). A dial reserves its instant and moves this on in
-- one transaction, so workers and retried activities share one spacing.
CREATE TABLE dial_pacing (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  scope text NOT NULL CHECK (length(scope) <= 40),
  next_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, scope)
);

-- The organization's do-not-call list: numbers (E.164) its campaigns never dial.
CREATE TABLE do_not_call_numbers (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  number text NOT NULL CHECK (number ~ '^\+[1-9][0-9]{6,14}$'),
  reason text CHECK (reason IS NULL OR length(reason) <= 500),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, number)
);

-- Adding a number cancels the pending contacts that carry it.
CREATE INDEX campaign_contacts_pending_numbers_idx ON campaign_contacts USING gin (phone_numbers) WHERE status = 'pending';

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['dial_pacing', 'do_not_call_numbers'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP INDEX campaign_contacts_pending_numbers_idx;
DROP TABLE do_not_call_numbers, dial_pacing;
ALTER TABLE campaign_concurrency_settings DROP COLUMN calls_per_second_per_number, DROP COLUMN calls_per_second;
