-- Up Migration
-- A campaign id whose workflow found no row: the create that would write it is refused, so a create
-- whose transaction commits after its workflow gave up cannot leave a row without a workflow
-- (docs/decisions/campaigns.md, "Row and workflow together"). Only needed while such a transaction
-- could still commit (well under an hour); the workflow's first step deletes older ones.
CREATE TABLE campaign_create_fences (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL,
  fenced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, campaign_id)
);

ALTER TABLE campaign_create_fences ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_create_fences USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE campaign_create_fences;
