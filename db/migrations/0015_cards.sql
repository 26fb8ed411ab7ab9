-- Up Migration
-- Digital business cards, their public media, share links (reached without a token through a link or
-- a QR code), the leads captured through them, and the attribution events they produce. No client
-- address is ever stored.

CREATE TABLE cards (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  owner_user_id uuid NOT NULL REFERENCES users(id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  title text,
  company text,
  email text,
  phone text,
  website text,
  bio text,
  links jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(links) = 'array'),
  photo_key text,
  logo_key text,
  primary_color text NOT NULL DEFAULT '#1f2937' CHECK (primary_color ~ '^#[0-9a-fA-F]{6}$'),
  accent_color text NOT NULL DEFAULT '#2563eb' CHECK (accent_color ~ '^#[0-9a-fA-F]{6}$'),
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cards_org_created_idx ON cards (org_id, created_at DESC, id DESC);
CREATE INDEX cards_org_owner_idx ON cards (org_id, owner_user_id);
CREATE INDEX cards_owner_fk_idx ON cards (owner_user_id);
CREATE INDEX cards_account_fk_idx ON cards (account_id) WHERE account_id IS NOT NULL;

-- Images uploaded for a card; the key has the public allowlisted shape cards/<card_id>/<uuid>.<ext>.
CREATE TABLE card_media (
  key text PRIMARY KEY CHECK (key ~ '^cards/[0-9a-f-]{36}/[0-9a-f-]{36}\.(png|jpg|webp)$'),
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  card_id uuid NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp')),
  size_bytes integer NOT NULL CHECK (size_bytes > 0),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_media_org_card_idx ON card_media (org_id, card_id, created_at);

CREATE TABLE card_share_links (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  card_id uuid NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
  -- 128 random bits, base64url: the capability printed on QR codes, so kept readable for its owner.
  token text NOT NULL UNIQUE CHECK (token ~ '^[A-Za-z0-9_-]{22}$'),
  source text CHECK (length(source) BETWEEN 1 AND 100),
  expires_at timestamptz,
  revoked_at timestamptz,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_share_links_org_card_idx ON card_share_links (org_id, card_id, created_at DESC, id DESC);

-- One row per lead form submission (what the visitor sent and the consent given), beside the contact it
-- created or filled.
CREATE TABLE card_leads (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  card_id uuid NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
  share_link_id uuid NOT NULL REFERENCES card_share_links(id) ON DELETE CASCADE,
  contact_id uuid REFERENCES contacts(id) ON DELETE SET NULL,
  contact_created boolean NOT NULL,
  name text NOT NULL,
  email text NOT NULL,
  phone text,
  company text,
  note text,
  consent_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_leads_org_card_idx ON card_leads (org_id, card_id, created_at DESC);
CREATE INDEX card_leads_link_fk_idx ON card_leads (share_link_id);
CREATE INDEX card_leads_contact_fk_idx ON card_leads (contact_id) WHERE contact_id IS NOT NULL;

CREATE TABLE card_events (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  card_id uuid NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
  share_link_id uuid NOT NULL REFERENCES card_share_links(id) ON DELETE CASCADE,
  event_type text NOT NULL CHECK (event_type IN ('view', 'qr_scan', 'vcard_download', 'link_click', 'lead_submitted')),
  -- The link's source label as it was when the event happened.
  source text,
  utm_source text,
  utm_medium text,
  utm_campaign text,
  utm_term text,
  utm_content text,
  referrer text,
  -- link_click: the clicked link's label and URL; lead_submitted: the lead and its contact.
  detail jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_events_org_card_time_idx ON card_events (org_id, card_id, occurred_at DESC, id DESC);
CREATE INDEX card_events_link_time_idx ON card_events (share_link_id, occurred_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['cards', 'card_media', 'card_share_links', 'card_leads', 'card_events'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE card_events, card_leads, card_share_links, card_media, cards;
