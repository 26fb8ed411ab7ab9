-- Up Migration
-- The Analytics Assistant reads every column a question may name: contacts' LinkedIn address, the
-- contacts of each calling campaign (status, attempts, last outcome) and the agents' calls
-- (conversations). The new views belong to analytics_definer like the others, so the tables'
-- row-level security and the signed-organization policy bind every read through them.
CREATE OR REPLACE VIEW analytics.contacts AS
  SELECT id, account_id, first_name, last_name, email, title, department, phone, company, company_domain, source, owner_id, stage,
         stage_changed_at, tags, created_at, updated_at, linkedin_url
  FROM public.contacts;
COMMENT ON COLUMN analytics.contacts.linkedin_url IS 'LinkedIn profile URL';

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['campaign_contacts', 'conversations'] LOOP
    EXECUTE format('CREATE POLICY analytics_signed_org ON %I AS RESTRICTIVE FOR SELECT TO analytics_definer USING (org_id = (SELECT analytics_private.token_org()))', t);
    EXECUTE format('GRANT SELECT ON %I TO analytics_definer', t);
  END LOOP;
END $$;

CREATE VIEW analytics.campaign_contacts AS
  SELECT id, campaign_id, phone_numbers[1] AS phone, timezone, scheduled_at, status, attempts, next_attempt_at, dialed_at, last_outcome,
         created_at, updated_at
  FROM public.campaign_contacts;
COMMENT ON VIEW analytics.campaign_contacts IS 'People a calling campaign calls, one row per campaign and person';
COMMENT ON COLUMN analytics.campaign_contacts.id IS 'Campaign contact id';
COMMENT ON COLUMN analytics.campaign_contacts.campaign_id IS 'The campaign (analytics.campaigns.id)';
COMMENT ON COLUMN analytics.campaign_contacts.phone IS 'The first number called';
COMMENT ON COLUMN analytics.campaign_contacts.timezone IS 'Time zone of the person, when given';
COMMENT ON COLUMN analytics.campaign_contacts.scheduled_at IS 'When the first call was scheduled, when given';
COMMENT ON COLUMN analytics.campaign_contacts.status IS 'pending, calling, completed, failed or canceled';
COMMENT ON COLUMN analytics.campaign_contacts.attempts IS 'Call attempts made';
COMMENT ON COLUMN analytics.campaign_contacts.next_attempt_at IS 'When the next attempt is due (pending only)';
COMMENT ON COLUMN analytics.campaign_contacts.dialed_at IS 'When the attempt in flight was dialed';
COMMENT ON COLUMN analytics.campaign_contacts.last_outcome IS 'Outcome of the last attempt (e.g. answered, no_answer, busy)';
COMMENT ON COLUMN analytics.campaign_contacts.created_at IS 'When the person was added to the campaign';
COMMENT ON COLUMN analytics.campaign_contacts.updated_at IS 'When the row last changed';

CREATE VIEW analytics.conversations AS
  SELECT id, agent_id, campaign_id, phone_number, direction, status, started_at, ended_at, duration_seconds, created_at
  FROM public.conversations;
COMMENT ON VIEW analytics.conversations IS 'Calls and chats the voice agents had';
COMMENT ON COLUMN analytics.conversations.id IS 'Conversation id';
COMMENT ON COLUMN analytics.conversations.agent_id IS 'The voice agent';
COMMENT ON COLUMN analytics.conversations.campaign_id IS 'The campaign that placed the call (analytics.campaigns.id), or null';
COMMENT ON COLUMN analytics.conversations.phone_number IS 'The other party''s number';
COMMENT ON COLUMN analytics.conversations.direction IS 'inbound or outbound';
COMMENT ON COLUMN analytics.conversations.status IS 'State of the conversation';
COMMENT ON COLUMN analytics.conversations.started_at IS 'When it started';
COMMENT ON COLUMN analytics.conversations.ended_at IS 'When it ended';
COMMENT ON COLUMN analytics.conversations.duration_seconds IS 'Length in seconds';
COMMENT ON COLUMN analytics.conversations.created_at IS 'When it was recorded';

DO $$
DECLARE v text;
BEGIN
  FOREACH v IN ARRAY ARRAY['campaign_contacts', 'conversations'] LOOP
    EXECUTE format('ALTER VIEW analytics.%I OWNER TO analytics_definer', v);
    EXECUTE format('REVOKE ALL ON analytics.%I FROM PUBLIC', v);
    EXECUTE format('GRANT SELECT ON analytics.%I TO analytics_reader', v);
  END LOOP;
END $$;

-- Down Migration
DROP VIEW analytics.conversations;
DROP VIEW analytics.campaign_contacts;
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['campaign_contacts', 'conversations'] LOOP
    EXECUTE format('DROP POLICY analytics_signed_org ON %I', t);
    EXECUTE format('REVOKE SELECT ON %I FROM analytics_definer', t);
  END LOOP;
END $$;
DROP VIEW analytics.contacts;
CREATE VIEW analytics.contacts AS
  SELECT id, account_id, first_name, last_name, email, title, department, phone, company, company_domain, source, owner_id, stage,
         stage_changed_at, tags, created_at, updated_at
  FROM public.contacts;
ALTER VIEW analytics.contacts OWNER TO analytics_definer;
REVOKE ALL ON analytics.contacts FROM PUBLIC;
GRANT SELECT ON analytics.contacts TO analytics_reader;
