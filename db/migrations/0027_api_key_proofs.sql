-- Up Migration
-- Client addresses that proved an ak_/pat_ key (its secret was verified from there), for a while: a
-- flood of wrong secrets on the key id from elsewhere does not lock them out, in any API process.
-- `address` is what per-address limits count by (an IPv4 address, or an IPv6 /64).
CREATE TABLE api_key_proofs (
  key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  address text NOT NULL CHECK (length(address) BETWEEN 1 AND 64),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, address)
);
ALTER TABLE api_key_proofs ENABLE ROW LEVEL SECURITY;

-- Down Migration
DROP TABLE api_key_proofs;
