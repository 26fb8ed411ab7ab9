-- Up Migration
-- A connection is an OAuth grant (`oauth`) or an account's API keys (`api_key`: the telephony providers,
-- Twilio and Vapi, whose keys sit sealed in the connection's workflow credential). An organization's
-- campaigns, numbers and SIP endpoints go through one telephony account: at most one not revoked.
ALTER TABLE integration_connections
  ADD COLUMN kind text NOT NULL DEFAULT 'oauth' CHECK (kind IN ('oauth', 'api_key'));
CREATE UNIQUE INDEX integration_connections_telephony_idx ON integration_connections (org_id)
  WHERE kind = 'api_key' AND integration IN ('twilio', 'vapi') AND status <> 'revoked';

-- Down Migration
DROP INDEX integration_connections_telephony_idx;
ALTER TABLE integration_connections DROP COLUMN kind;
