-- Up Migration
-- An organization's speech and model providers (Deepgram, ElevenLabs, Cartesia, OpenAI), each connected with
-- an API key sealed in the connection's workflow credential: at most one connection per provider that is
-- not revoked, so the voice engine reads one key for each.
CREATE UNIQUE INDEX integration_connections_speech_idx ON integration_connections (org_id, integration)
  WHERE kind = 'api_key' AND integration IN ('deepgram', 'elevenlabs', 'cartesia', 'openai') AND status <> 'revoked';

-- Down Migration
DROP INDEX integration_connections_speech_idx;
