import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import * as conversations from '../db/conversations';
import { startSpeechServer, type LocalSpeechServer } from '../dev-servers/speech-server';
import { freePort } from '../dev-servers/ports';
import { createChatModel } from '../platform/adapters/llm/chat-model-factory';
import { ORGANIZATION_ID } from '../platform/core/temporal';
import { findSpeechServer, findTemporalCli } from '../platform/core/tools';
import { storeRecording } from '../services/conversations/recordings';
import { startFakeChatLlm, type ChatRequestBody } from '../test/support/fake-chat-llm-server';
import { wavFile } from '../voice/audio/pcm';
import { startReplayWorker } from '../voice/replay/worker';
import { localSpeechStack } from '../voice/speech/local';
import { jsonCaller, startBenchEnvironment } from './environment';
import { startWorker, stopWorker } from './worker-process';

// `npm run bench -- replay [--calls N]`: N (default 50) recorded conversations replayed through a second
// version of their agent as one batch (POST /core/agents/{id}/replays, last: N), end to end: the API, the
// replay workflows on a worker process, the engine's replay worker in this process (2 at once) with the
// local speech server recognizing each caller turn from its slice of the recording.
//
// The conversations are synthesized, not dialled: each has an opening and two caller turns whose audio (the
// speech server's voice at 8 kHz, as a phone call's) sits on the caller channel of a dual-channel WAV at
// the times its turns record, with the agent's answers as version 1 gave them. The model is a scripted
// OpenAI-compatible server answering from the question it is given, which version 2 answers otherwise for
// opening hours only: the changed turns are the hours questions the recognizer heard as such.

const QUESTIONS = [
  { say: 'What are your opening hours?', v1: 'We are open from nine to five.', v2: 'We are open from eight to six.' },
  { say: 'Can I book a cleaning next week?', v1: 'Yes, I can book a cleaning for you.', v2: 'Yes, I can book a cleaning for you.' },
  { say: 'Do you take new patients?', v1: 'Yes, we welcome new patients.', v2: 'Yes, we welcome new patients.' },
  { say: 'Where is the clinic?', v1: 'We are on Main Street, next to the bank.', v2: 'We are on Main Street, next to the bank.' },
] as const;
const OPENING = 'Hello, Bright Smile dental clinic. How can I help you?';
const RATE = 8_000;
const GAP_MS = 1_500;
const DEADLINE_MS = 30 * 60_000;

function answerFor(request: ChatRequestBody): string {
  const v2 = /Version two/.test(request.messages[0]?.content ?? '');
  const heard = (request.messages.at(-1)?.content ?? '').toLowerCase();
  const q = /hour|open/.test(heard)
    ? QUESTIONS[0]
    : /clean|book/.test(heard)
      ? QUESTIONS[1]
      : /patient/.test(heard)
        ? QUESTIONS[2]
        : QUESTIONS[3];
  return v2 ? q.v2 : q.v1;
}

const config = (version: string) => ({
  instructions: `You are the receptionist of the Bright Smile dental clinic. ${version}.`,
  first_message: OPENING,
  first_speaker: 'agent',
  recording: { enabled: true, channels: 'dual' },
});

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null;
};

export async function benchReplay(options: { calls: number }) {
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools` first');
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      searchAttributes: [ORGANIZATION_ID],
      log: { format: 'json', level: 'error' },
    },
  });
  let speechServer: LocalSpeechServer | undefined;
  let speechBaseUrl = process.env.SPEECH_BASE_URL;
  if (!speechBaseUrl) {
    const command = findSpeechServer();
    if (!command) throw new Error('the speech server is not installed: bash scripts/install-tools.sh speech');
    speechServer = await startSpeechServer({ command, port: await freePort() });
    speechBaseUrl = speechServer.url;
  }
  const llm = await startFakeChatLlm();
  llm.script = Array.from({ length: options.calls * 10 }, () => (r: ChatRequestBody) => ({ text: answerFor(r) }));
  const queue = 'bench-replay';
  const llmEnv = { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'scripted' };
  const env = await startBenchEnvironment({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: queue, ...llmEnv });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-bench-replay-worker-'));
  let worker: ChildProcess | undefined;
  let replays: { stop(): Promise<void> } | undefined;
  try {
    worker = await startWorker({
      DATABASE_URL: env.databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: queue,
      DATA_DIR: workerDir,
      ...llmEnv,
    });
    const speech = await localSpeechStack(speechBaseUrl);
    replays = await startReplayWorker({
      ...env.deps,
      speech,
      model: createChatModel(env.deps.config, env.deps.logger),
      engineId: 'bench-replay',
    });
    const session = await env.deps.devIdp!.sign({
      sub: 'bench',
      org_id: 'bench-replay',
      org_ids: ['bench-replay'],
      permissions: ['api:read', 'api:manage', 'agents:manage', 'organizations:manage'],
    });
    const api = jsonCaller(env.baseUrl, () => session);
    const agent = await api('POST', '/core/agents', { name: 'Bench clinic' });
    await api('POST', `/core/agents/${agent.id}/versions`, { config: config('Version one') });
    await api('POST', `/core/agents/${agent.id}/versions/1/publish`, {});
    await api('POST', `/core/agents/${agent.id}/versions`, { config: config('Version two') });
    const [org] = await env.deps.sql<{ id: string }[]>`SELECT id FROM organizations WHERE external_id = 'bench-replay'`;
    const orgId = org!.id;

    // Each question's audio once, reused by every conversation that asks it.
    const audio: Int16Array[] = [];
    for (const q of QUESTIONS) {
      const parts: Int16Array[] = [];
      for await (const chunk of speech.voice.speak(q.say, {
        sampleRate: RATE,
        voice: 'default',
        speed: 1,
        signal: AbortSignal.timeout(30_000),
      }))
        parts.push(chunk);
      audio.push(Int16Array.from(parts.flatMap((p) => Array.from(p))));
    }
    const recordStarted = performance.now();
    for (let i = 0; i < options.calls; i++) {
      const row = await conversations.insertConversation(env.deps.sql, {
        org_id: orgId,
        agent_id: agent.id,
        agent_version: 1,
        channel: 'twilio',
        direction: 'inbound',
        call_id: null,
        phone_number: null,
        contact_id: null,
        engine_id: 'bench',
      });
      const asked = [i % QUESTIONS.length, (i + 1 + Math.floor(i / QUESTIONS.length)) % QUESTIONS.length];
      let at = 3_000;
      const spans = asked.map((q) => {
        const span = { q, start: at, end: at + Math.round((audio[q]!.length * 1000) / RATE) };
        at = span.end + GAP_MS * 2;
        return span;
      });
      const caller = new Int16Array(Math.round((at * RATE) / 1000));
      for (const s of spans) caller.set(audio[s.q]!, Math.round((s.start * RATE) / 1000));
      const key = await storeRecording(env.deps, orgId, row.id, wavFile([caller, new Int16Array(caller.length)], RATE));
      const turns = [
        { role: 'agent' as const, text: OPENING, started_ms: 0, ended_ms: 2_500 },
        ...spans.flatMap((s) => [
          { role: 'caller' as const, text: QUESTIONS[s.q]!.say, started_ms: s.start, ended_ms: s.end },
          { role: 'agent' as const, text: QUESTIONS[s.q]!.v1, started_ms: s.end + 500, ended_ms: s.end + GAP_MS },
        ]),
      ];
      for (const [seq, t] of turns.entries())
        await conversations.insertTurn(env.deps.sql, orgId, row.id, { seq, ...t, heard_text: null, interrupted: false, audit: {} });
      await conversations.endConversation(env.deps.sql, orgId, row.id, {
        status: 'completed',
        end_reason: 'caller_hung_up',
        recording_key: key,
        recording_channels: 'dual',
        recording_retention_days: 30,
      });
    }
    const recordMs = performance.now() - recordStarted;

    const started = performance.now();
    const batch = await api('POST', `/core/agents/${agent.id}/replays`, { version: 2, last: options.calls });
    type Batch = { status: string; summary: Record<string, number> };
    let done = batch as Batch;
    while (['queued', 'running'].includes(done.status)) {
      if (performance.now() - started > DEADLINE_MS) throw new Error('the batch did not finish within 30 minutes');
      await new Promise((r) => setTimeout(r, 250));
      done = (await api('GET', `/core/agents/${agent.id}/replay-batches/${batch.id}`)) as Batch;
    }
    const totalMs = performance.now() - started;
    const rows = await env.deps.sql<
      {
        timings: { total_ms: number; stt_ms: number };
        started_at: Date;
        finished_at: Date;
        turns: { changed: boolean; caller: { source: string; text: string; heard: string } | null }[];
      }[]
    >`
      SELECT timings, started_at, finished_at, turns FROM conversation_replays WHERE batch_id = ${batch.id} AND status = 'completed'`;
    const perConversation = rows.map((r) => r.timings.total_ms);
    const callerTurns = rows.flatMap((r) => r.turns.filter((t) => t.caller));
    const hoursAsked = callerTurns.filter((t) => t.caller!.text === QUESTIONS[0].say).length;
    return {
      conversations: options.calls,
      how: 'synthesized: 8 kHz dual-channel WAVs of the speech server voice, an opening and two caller turns each; scripted model; 2 replays at once',
      record_setup_ms: Math.round(recordMs),
      total_ms: Math.round(totalMs),
      per_conversation_ms: { p50: pct(perConversation, 50), p95: pct(perConversation, 95), max: Math.max(...perConversation) },
      per_conversation_wall_ms: Math.round(totalMs / options.calls),
      stt_ms_per_turn: Math.round(rows.reduce((n, r) => n + r.timings.stt_ms, 0) / Math.max(1, callerTurns.length)),
      summary: done.summary,
      caller_audio: Object.fromEntries(
        ['recording', 'synthesized'].map((s) => [s, callerTurns.filter((t) => t.caller!.source === s).length]),
      ),
      hours_questions_asked: hoursAsked,
    };
  } finally {
    await replays?.stop().catch(() => {});
    await stopWorker(worker);
    await env.close();
    await llm.close();
    await speechServer?.stop();
    await temporal.teardown();
    fs.rmSync(workerDir, { recursive: true, force: true });
  }
}
