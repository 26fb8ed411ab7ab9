-- Up Migration
-- A provider's call (Twilio's CallSid) is one conversation: Twilio may ask for an inbound call's TwiML
-- again, and the row made for the first answer is the one the engine takes.
CREATE UNIQUE INDEX conversations_provider_call_idx ON conversations (org_id, channel, call_id)
  WHERE campaign_id IS NULL AND call_id IS NOT NULL;

-- Down Migration
DROP INDEX conversations_provider_call_idx;
