-- Up Migration
-- The telephony account's inventory (docs/decisions/telephony.md): a number imported from the provider
-- keeps the provider's id of it; an agent's SIP endpoint records which provider made it, the provider's
-- id (Twilio's SIP domain sid) and its state: `recorded` (the address only: the simulated dialer, Vapi),
-- `provisioning` (written before the provider is asked; a failure removes the row), `active`.
ALTER TABLE phone_numbers
  ADD COLUMN provider text,
  ADD COLUMN provider_number_id text;

ALTER TABLE agent_sip_endpoints
  ADD COLUMN provider text NOT NULL DEFAULT 'simulated',
  ADD COLUMN provider_id text,
  ADD COLUMN state text NOT NULL DEFAULT 'recorded' CHECK (state IN ('recorded', 'provisioning', 'active')),
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

-- Down Migration
ALTER TABLE agent_sip_endpoints DROP COLUMN updated_at, DROP COLUMN state, DROP COLUMN provider_id, DROP COLUMN provider;
ALTER TABLE phone_numbers DROP COLUMN provider_number_id, DROP COLUMN provider;
