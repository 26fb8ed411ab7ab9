-- Up Migration
-- Outreach sequences (cold-email campaigns), their enrollments, the unibox threads and every message
-- sent or received. Mailboxes (0022) are referenced by plain uuids: a sequence's pool is an array, and a
-- thread's history outlives the mailbox it went through.

CREATE TABLE outreach_sequences (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'completed', 'archived')),
  -- [{delay_days, subject, body, body_html, variants: [{subject, body, body_html}]}], in sending order.
  steps jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(steps) = 'array'),
  mailbox_ids uuid[] NOT NULL DEFAULT '{}',
  stop_on_reply boolean NOT NULL DEFAULT true,
  -- Nothing is sent before this instant (the schedule); mailbox windows and limits apply on top.
  start_at timestamptz,
  -- Round-robin position in the mailbox pool, advanced by each send.
  rotation integer NOT NULL DEFAULT 0,
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  activated_at timestamptz,
  completed_at timestamptz,
  archived_at timestamptz
);
CREATE INDEX outreach_sequences_org_created_idx ON outreach_sequences (org_id, created_at DESC, id DESC);

CREATE TABLE outreach_enrollments (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  sequence_id uuid NOT NULL REFERENCES outreach_sequences(id) ON DELETE CASCADE,
  contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  -- active: steps remain; completed: every step sent; replied, bounced: stopped by the contact's mail;
  -- removed: taken out by a user; failed: the address was refused for good.
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'replied', 'bounced', 'removed', 'failed')),
  -- Index of the next step to send.
  next_step integer NOT NULL DEFAULT 0 CHECK (next_step >= 0),
  -- When the next step is due (set while active).
  next_send_at timestamptz,
  thread_id uuid,
  last_sent_at timestamptz,
  stopped_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (sequence_id, contact_id),
  CHECK ((status = 'active') = (next_send_at IS NOT NULL))
);
-- The sender's page query: due enrollments of one sequence, earliest first.
CREATE INDEX outreach_enrollments_due_idx ON outreach_enrollments (sequence_id, next_send_at, id) WHERE status = 'active';
CREATE INDEX outreach_enrollments_list_idx ON outreach_enrollments (org_id, sequence_id, created_at, id);
CREATE INDEX outreach_enrollments_contact_idx ON outreach_enrollments (contact_id);

CREATE TABLE outreach_threads (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  mailbox_id uuid NOT NULL,
  sequence_id uuid REFERENCES outreach_sequences(id) ON DELETE SET NULL,
  enrollment_id uuid REFERENCES outreach_enrollments(id) ON DELETE SET NULL,
  contact_id uuid REFERENCES contacts(id) ON DELETE SET NULL,
  subject text NOT NULL DEFAULT '',
  -- The outside party's address (the contact's at the time).
  counterpart text NOT NULL,
  unread_count integer NOT NULL DEFAULT 0 CHECK (unread_count >= 0),
  -- The latest message came in and nobody has answered it yet.
  needs_reply boolean NOT NULL DEFAULT false,
  last_message_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE outreach_enrollments
  ADD CONSTRAINT outreach_enrollments_thread_fkey FOREIGN KEY (thread_id) REFERENCES outreach_threads(id) ON DELETE SET NULL;
CREATE INDEX outreach_threads_org_recent_idx ON outreach_threads (org_id, last_message_at DESC, id DESC);
CREATE INDEX outreach_threads_mailbox_idx ON outreach_threads (org_id, mailbox_id, last_message_at DESC);
CREATE INDEX outreach_threads_sequence_idx ON outreach_threads (sequence_id) WHERE sequence_id IS NOT NULL;

CREATE TABLE outreach_messages (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  thread_id uuid NOT NULL REFERENCES outreach_threads(id) ON DELETE CASCADE,
  mailbox_id uuid NOT NULL,
  direction text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  -- sequence: a step; reply: written in the unibox; inbound: a received message; bounce: a delivery report.
  kind text NOT NULL CHECK (kind IN ('sequence', 'reply', 'inbound', 'bounce')),
  enrollment_id uuid REFERENCES outreach_enrollments(id) ON DELETE SET NULL,
  step integer,
  variant integer,
  -- One per (enrollment, step): a retried send finds its reservation instead of making a second.
  idempotency_key text,
  -- reserved: counted against the limit, SMTP not yet confirmed; sent; unconfirmed: a reservation whose
  -- SMTP outcome was lost (never sent again); failed: refused by the server; received: inbound.
  status text NOT NULL CHECK (status IN ('reserved', 'sent', 'unconfirmed', 'failed', 'received')),
  message_id text NOT NULL,
  in_reply_to text,
  "references" text[] NOT NULL DEFAULT '{}',
  from_address text NOT NULL,
  to_addresses text[] NOT NULL DEFAULT '{}',
  subject text NOT NULL DEFAULT '',
  text_body text,
  html_body text,
  -- The mailbox's local calendar day of an outbound message: the daily limit counts per day.
  local_day date,
  sent_at timestamptz,
  received_at timestamptz,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX outreach_messages_idempotency_idx ON outreach_messages (org_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- A message delivered twice (webhook and IMAP, or a retried webhook) is stored once.
CREATE UNIQUE INDEX outreach_messages_message_id_idx ON outreach_messages (org_id, message_id);
CREATE INDEX outreach_messages_thread_idx ON outreach_messages (thread_id, created_at, id);
-- The daily limit's count.
CREATE INDEX outreach_messages_daily_idx ON outreach_messages (org_id, mailbox_id, local_day) WHERE direction = 'outbound' AND status <> 'failed';

-- Where IMAP polling of a mailbox left off.
CREATE TABLE outreach_imap_cursors (
  mailbox_id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  uid_validity text NOT NULL,
  last_uid bigint NOT NULL,
  polled_at timestamptz NOT NULL DEFAULT now()
);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['outreach_sequences', 'outreach_enrollments', 'outreach_threads', 'outreach_messages', 'outreach_imap_cursors'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
ALTER TABLE outreach_enrollments DROP CONSTRAINT IF EXISTS outreach_enrollments_thread_fkey;
DROP TABLE outreach_imap_cursors, outreach_messages, outreach_threads, outreach_enrollments, outreach_sequences;
