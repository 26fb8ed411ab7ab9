-- Up Migration
-- Rate limits shared by every API process: one counter per subject ('org:<id>', 'key:<id>', 'user:<id>') and
-- fixed window. A process reserves a lease of several requests at once (services/rate-limits.ts) with one
-- upsert, and serves them from memory; `used` counts what was leased, never more than the quota. UNLOGGED:
-- counters of the current minute need no crash safety (lost on a crash, they start again from zero), and
-- skip the write-ahead log. Windows past are swept by the API.
CREATE UNLOGGED TABLE rate_limit_windows (
  subject text NOT NULL CHECK (length(subject) <= 100),
  window_ends_at timestamptz NOT NULL,
  used integer NOT NULL CHECK (used >= 0),
  -- the last lease's size, for RETURNING
  granted integer NOT NULL CHECK (granted >= 0),
  PRIMARY KEY (subject, window_ends_at)
);
CREATE INDEX rate_limit_windows_end_idx ON rate_limit_windows (window_ends_at);

-- Down Migration
DROP TABLE rate_limit_windows;
