import os from 'node:os';
import { startFakeChatLlm } from '../test/support/fake-chat-llm-server';
import { startFakeTwilio, twilioDialerSettings } from '../test/support/fake-twilio';
import { PUBLIC_BASE_URL } from '../test/support/public-base';
import { startChildEngine, type ChildEngine } from '../test/support/voice/child-engine';
import type { SimulatedCaller } from '../test/support/voice/simulated-caller';
import { answerOn, openStream, streamAgain } from '../test/support/voice/twilio-stream';
import { percentile } from './voice';
import { publishBenchAgent, startVoiceBenchStack } from './voice-engine-env';

// Silence heard by the caller when a call's engine dies (goal: under 2 s at p95 over 20 kills), with the
// failover test's parts (test/integration/voice-failover.test.ts): engines in processes of their own, the
// fake Twilio, a simulated caller. Each kill: a new inbound call talks with engine A; a second or so into
// the agent's long answer A gets SIGKILL; Twilio (the fake) asks the <Connect action> what next and the
// call is streamed to engine B, which says its short line. Silence: the kill to the first audible frame
// of B's line as the caller hears it. A fresh engine process is started after each kill (not during the
// measurement), so every kill finds two. A call that does not go on within 15 s is a failure, counted.
// `--frozen N`: N more moves of a frozen engine (SIGSTOP: socket open and mute), measured from the stop;
// B's watch notices the missing beats (3 s) and moves the call through Twilio's call update.
//
// `npm run bench -- voice-failover [--kills 20] [--frozen 0] [--verbose]`

export interface VoiceFailoverOptions {
  kills: number;
  frozen: number;
  verbose?: boolean;
}

const LONG_ANSWER =
  'You are booked for Tuesday at ten in the morning. Please bring your insurance card and arrive ten minutes early so that we can finish the paperwork before your visit.';
const SHORT_ANSWER = 'All set, see you on Tuesday.';
const VOICE_PUBLIC_URL = 'wss://voice.bench.example';
const GO_ON_MS = 15_000;

const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`no ${what} within ${ms} ms`)))]);

interface Move {
  silenceMs: number | null;
  /** The caller heard the line ("… lost you … back") in the first utterance after the move. */
  lineHeard?: boolean;
  killedAfterSpeechMs: number;
  load1: number;
  error?: string;
}

export async function benchVoiceFailover(options: VoiceFailoverOptions) {
  const loadStart = loadAverage();
  const llm = await startFakeChatLlm();
  const twilio = await startFakeTwilio();
  const settings = {
    LLM_BASE_URL: llm.baseUrl,
    LLM_MODEL: 'fake-chat',
    ...twilioDialerSettings(twilio),
    PUBLIC_BASE_URL,
    VOICE_PUBLIC_URL,
  };
  const stack = await startVoiceBenchStack(settings);
  const engines: ChildEngine[] = [];
  try {
    const { env, speechBaseUrl } = stack;
    twilio.reachAppAt(PUBLIC_BASE_URL, env.baseUrl);
    const { orgId, agentId } = await publishBenchAgent(env, { instructions: 'Book visits.', first_speaker: 'user' });
    // The first engine's request gets the long answer (it dies in it); the one that took over, a short one.
    let longNext = false;
    llm.fallback = { text: SHORT_ANSWER };
    const answer = () => {
      const long = longNext;
      longNext = false;
      return long ? { text: LONG_ANSWER, delayMs: 40 } : { text: SHORT_ANSWER };
    };
    const startEngine = () => startChildEngine(env.deps, settings, speechBaseUrl);
    engines.push(await startEngine(), await startEngine());
    const log = (line: string) => options.verbose && process.stderr.write(`[voice-failover] ${line}\n`);

    const move = async (i: number, how: 'kill' | 'freeze'): Promise<Move> => {
      const [a, b] = engines as [ChildEngine, ChildEngine];
      const killedAfterSpeechMs = 1_000 + (i % 5) * 500; // 1 to 3 s into the answer: mid-sentence
      const record: Move = { silenceMs: null, killedAfterSpeechMs, load1: loadAverage()[0]! };
      let callers: SimulatedCaller[] = [];
      try {
        longNext = true;
        llm.script = [answer, answer];
        const ids = { orgId, agentId, from: `+1415555${String(1000 + i).slice(-4)}`, to: '+14155550100' };
        const { call, caller } = await answerOn(twilio, env.deps, ids, a.url, speechBaseUrl);
        callers = [caller];
        twilio.attachStream(call.sid, { hangUp: () => caller.hangUp() });
        await caller.say('Can I come in on Tuesday?');
        await caller.waitForSpeechStart({ timeoutMs: 30_000 });
        await sleep(killedAfterSpeechMs);
        const stoppedAt = performance.now();
        let resumed: SimulatedCaller;
        if (how === 'kill') {
          a.proc.kill('SIGKILL');
          await within(caller.closed, GO_ON_MS, 'close of the stream');
          const next = await streamAgain(twilio, call, b.url, speechBaseUrl);
          if (!next.caller) throw new Error(`the <Connect action> answered ${next.status} without a stream`);
          resumed = next.caller;
        } else {
          a.proc.kill('SIGSTOP');
          const moved = () => twilio.updates.some((u) => u.callSid === call.sid && u.twiml?.includes('<Stream'));
          while (!moved()) {
            if (performance.now() - stoppedAt > GO_ON_MS) throw new Error('the frozen engine’s call was not moved');
            await sleep(20);
          }
          resumed = await openStream(twilio, call, b.url, speechBaseUrl);
        }
        callers.push(resumed);
        const back = await resumed.waitForSpeechStart({ timeoutMs: Math.max(1, stoppedAt + GO_ON_MS - performance.now()) });
        record.silenceMs = Math.round(back.startedAt - stoppedAt);
        const heard = await resumed.hear({ timeoutMs: 30_000, transcribe: true });
        record.lineHeard = /back|lost/i.test(heard.text ?? '');
      } catch (error) {
        record.error = (error as Error).message;
      } finally {
        for (const c of callers) void c.hangUp();
        a.proc.kill('SIGKILL'); // a frozen one too (it is stopped), or one that lived through a failed attempt
        engines.shift();
        engines.push(await startEngine());
      }
      log(`${how} ${i + 1}: ${JSON.stringify(record)}`);
      return record;
    };

    const kills: Move[] = [];
    for (let i = 0; i < options.kills; i++) kills.push(await move(i, 'kill'));
    const frozen: Move[] = [];
    for (let i = 0; i < options.frozen; i++) frozen.push(await move(i, 'freeze'));
    return {
      killed: summary(kills),
      ...(options.frozen ? { frozen: summary(frozen) } : {}),
      load_average: { start: loadStart, end: loadAverage() },
      notes:
        'silence: the SIGKILL (or SIGSTOP) to the first audible frame of the next engine as the simulated caller hears it; nearest-rank percentiles over the moves that went on; a failure is a call that did not go on within 15 s; load_average is the whole machine’s (1, 5, 15 min)',
    };
  } finally {
    for (const e of engines) e.proc.kill('SIGKILL');
    await stack.close();
    await twilio.close();
    await llm.close();
  }
}

function summary(moves: Move[]) {
  const silences = moves.flatMap((m) => (m.silenceMs === null ? [] : [m.silenceMs]));
  return {
    n: moves.length,
    failures: moves.filter((m) => m.silenceMs === null).length,
    silence_ms: { p50: percentile(silences, 50), p95: percentile(silences, 95), max: silences.length ? Math.max(...silences) : null },
    under_2s: silences.filter((s) => s < 2_000).length,
    line_not_heard: moves.filter((m) => m.lineHeard === false).length,
    each_ms: moves.map((m) => m.silenceMs),
    errors: moves.flatMap((m, i) => (m.error ? [`${i + 1}: ${m.error}`] : [])),
  };
}
