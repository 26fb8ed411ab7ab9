-- Up Migration
-- Notifications: the outbox written in the same transaction as the change it reports, the in-app feed,
-- per-user preferences, digest entries waiting for their window, and outgoing emails keyed for idempotency.

-- The identity provider's `email` claim, kept on the user (refreshed by every session that carries it).
ALTER TABLE users ADD COLUMN email text CHECK (email IS NULL OR length(email) BETWEEN 3 AND 320);

-- One row per event; the id is the event id the actor deduplicates on. relayed_at is set once the
-- organization's actor has durably received it (a Temporal signal), so an unreachable Temporal loses nothing.
CREATE TABLE notification_outbox (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  event_type text NOT NULL,
  entity_type text NOT NULL,
  entity_id text NOT NULL,
  payload jsonb NOT NULL,
  actor_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
  recipient_user_ids uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  relayed_at timestamptz
);
CREATE INDEX notification_outbox_pending_idx ON notification_outbox (created_at, id) WHERE relayed_at IS NULL;
CREATE INDEX notification_outbox_org_idx ON notification_outbox (org_id, created_at);

-- The in-app feed: one item per recipient and event (the unique key makes a redelivered event a no-op).
CREATE TABLE notification_items (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  category text NOT NULL,
  entity_type text NOT NULL,
  entity_id text NOT NULL,
  title text NOT NULL,
  body text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  read_at timestamptz,
  archived_at timestamptz,
  UNIQUE (org_id, user_id, event_id)
);
-- created_at is the event's time (millisecond precision), the feed's order and cursor.
CREATE INDEX notification_items_feed_idx ON notification_items (org_id, user_id, created_at DESC, id DESC) WHERE archived_at IS NULL;
CREATE INDEX notification_items_unread_idx ON notification_items (org_id, user_id, created_at DESC, id DESC)
  WHERE archived_at IS NULL AND read_at IS NULL;
CREATE INDEX notification_items_user_fk_idx ON notification_items (user_id);

-- Only what a user changed is stored; anything else follows the registry's defaults.
CREATE TABLE notification_preferences (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  event_type text NOT NULL,
  in_app boolean,
  email_cadence text CHECK (email_cadence IN ('off', 'immediate', 'digest')),
  subscribed boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id, event_type)
);
CREATE INDEX notification_preferences_subscribers_idx ON notification_preferences (org_id, event_type) WHERE subscribed;
CREATE INDEX notification_preferences_user_fk_idx ON notification_preferences (user_id);

-- Events waiting for the recipient's next digest email.
CREATE TABLE notification_digest_entries (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  title text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  digest_email_id uuid,
  PRIMARY KEY (org_id, user_id, event_id)
);
CREATE INDEX notification_digest_entries_pending_idx ON notification_digest_entries (org_id, user_id, created_at)
  WHERE digest_email_id IS NULL;
CREATE INDEX notification_digest_entries_user_fk_idx ON notification_digest_entries (user_id);

-- Every email, rendered before it is sent. idempotency_key (immediate:<event>:<user>, digest:<user>:<window>)
-- makes a repeated delivery or a retried activity a no-op; sent_at is set once the transport accepted it.
CREATE TABLE notification_emails (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('immediate', 'digest')),
  to_address text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  sent_at timestamptz,
  UNIQUE (org_id, idempotency_key)
);
CREATE INDEX notification_emails_pending_idx ON notification_emails (org_id, created_at) WHERE sent_at IS NULL;
CREATE INDEX notification_emails_user_fk_idx ON notification_emails (user_id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['notification_outbox', 'notification_items', 'notification_preferences',
                           'notification_digest_entries', 'notification_emails'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE notification_emails, notification_digest_entries, notification_preferences, notification_items, notification_outbox;
ALTER TABLE users DROP COLUMN email;
