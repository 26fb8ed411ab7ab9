-- Up Migration
-- Every card gets the share link its email signature opens it through (source `email-signature`), so
-- signature traffic is attributed; new cards get theirs when created. Tokens: 16 random bytes, base64url.
INSERT INTO card_share_links (id, org_id, card_id, token, source, created_by)
SELECT gen_random_uuid(), c.org_id, c.id,
  translate(rtrim(encode(uuid_send(gen_random_uuid()), 'base64'), '='), '+/', '-_'),
  'email-signature', 'system:signature'
FROM cards c
WHERE NOT EXISTS (SELECT 1 FROM card_share_links l WHERE l.card_id = c.id AND l.source = 'email-signature');

-- Down Migration
DELETE FROM card_share_links WHERE source = 'email-signature' AND created_by = 'system:signature';
