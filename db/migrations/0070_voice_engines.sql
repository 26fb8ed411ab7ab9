-- Up Migration
-- The voice engines that are up: each writes its heartbeat here twice a second, so the others can tell
-- a frozen engine (its process alive, its calls silent) and move its calls.
CREATE TABLE voice_engines (
  id text PRIMARY KEY,
  seen_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE voice_engines;
