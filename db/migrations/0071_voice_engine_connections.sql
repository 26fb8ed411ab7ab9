-- Up Migration
-- The Postgres backend of the connection each voice engine beats on: while that backend exists the engine's
-- process does (a killed process's connections close with it), so a peer can tell a killed engine at once,
-- without waiting for its heartbeat to go stale.
ALTER TABLE voice_engines ADD COLUMN backend_pid integer;

-- Down Migration
ALTER TABLE voice_engines DROP COLUMN backend_pid;
