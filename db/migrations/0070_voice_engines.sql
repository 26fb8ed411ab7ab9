-- Up Migration
-- The voice engines that are up: each writes its heartbeat here twice a second, so the others can tell
-- a frozen engine (its process alive, its calls silent) and move its calls.
CREATE TABLE voice_engines (
  id text PRIMARY KEY,
  seen_at timestamptz NOT NULL DEFAULT now()
);
-- What the engines' watch reads every second: the live provider calls, by the engine holding them.
CREATE INDEX conversations_live_calls_idx ON conversations (engine_id)
  WHERE ended_at IS NULL AND end_reason IS NULL AND call_id IS NOT NULL;

-- Down Migration
DROP INDEX conversations_live_calls_idx;
DROP TABLE voice_engines;
