-- Up Migration
-- Inbound calls reach the service (docs/decisions/telephony.md): a number with an inbound agent is pointed
-- at the service at its provider, and what it pointed at before (Twilio's VoiceUrl, method, status
-- callback and application; Vapi's assistant, squad, workflow and server) is kept to be put back when no
-- agent answers it any more. An agent's SIP endpoint keeps what was made to let callers in (Twilio's
-- credential or IP access list and their mappings, or Vapi's SIP number) so removing it removes them.
ALTER TABLE phone_numbers
  ADD COLUMN routed_at timestamptz,
  ADD COLUMN routed_previous jsonb;

ALTER TABLE agent_sip_endpoints
  ADD COLUMN auth_kind text CHECK (auth_kind IN ('credentials', 'ip_addresses')),
  ADD COLUMN auth_username text,
  ADD COLUMN auth_resources jsonb NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE agent_sip_endpoints DROP COLUMN auth_resources, DROP COLUMN auth_username, DROP COLUMN auth_kind;
ALTER TABLE phone_numbers DROP COLUMN routed_previous, DROP COLUMN routed_at;
