-- Up Migration
-- Open and click tracking of sent sequence steps. A message sent with tracking on has a row here: the
-- tracking domain's base URL its pixel and links were written with, and the URL of each rewritten link
-- in document order (the redirect of link i goes to links[i + 1], never to a URL taken from a request).
CREATE TABLE outreach_tracked_messages (
  message_id uuid PRIMARY KEY REFERENCES outreach_messages(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  base_url text NOT NULL,
  links text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Each load of the pixel (open) and each followed link (click). bot_reason is null for a person's,
-- otherwise why a machine made it (Apple Mail Privacy Protection, a prefetch, a scanner, a bot).
CREATE TABLE outreach_tracking_events (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  message_id uuid NOT NULL REFERENCES outreach_messages(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('open', 'click')),
  link_index integer CHECK ((kind = 'click') = (link_index IS NOT NULL)),
  bot_reason text CHECK (bot_reason IS NULL OR bot_reason IN ('apple_privacy', 'prefetch', 'scanner', 'bot', 'head')),
  user_agent text CHECK (user_agent IS NULL OR length(user_agent) <= 300),
  occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outreach_tracking_events_message_idx ON outreach_tracking_events (message_id, kind, occurred_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['outreach_tracked_messages', 'outreach_tracking_events'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE outreach_tracking_events, outreach_tracked_messages;
