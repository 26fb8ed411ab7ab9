-- Up Migration
-- A campaign's row commits before its workflow starts (the start is made after the create answers): until
-- the workflow's first step runs, the row carries workflow_pending_since, and the workers' sweep starts the
-- workflow of a row left pending (services/campaigns/workflow-start.ts). With the row always committed
-- first, a workflow can no longer run ahead of its create, and the fences that guarded that race go.
ALTER TABLE campaigns ADD COLUMN workflow_pending_since timestamptz;
CREATE INDEX campaigns_workflow_pending_idx ON campaigns (workflow_pending_since) WHERE workflow_pending_since IS NOT NULL;
DROP TABLE campaign_create_fences;

-- Down Migration
CREATE TABLE campaign_create_fences (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL,
  fenced_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, campaign_id)
);
ALTER TABLE campaign_create_fences ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON campaign_create_fences USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
DROP INDEX campaigns_workflow_pending_idx;
ALTER TABLE campaigns DROP COLUMN workflow_pending_since;
