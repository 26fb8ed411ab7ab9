import crypto from 'node:crypto';
import { publicBaseUrl, type Config } from '../../core/config';
import type { Logger } from '../../core/logger';
import { VendorRejected, type CreateBotRequest, type MeetingVendor } from './types';
import { signWebhook, webhookSecrets } from './webhooks';

// The built-in `simulated` meeting vendor: it joins no meeting. After a bot is created it posts the
// event stream a Recall.ai bot produces (joining → waiting room → in call → recording → call ended →
// done → recording done), signed like Recall's (Standard Webhooks, the first MEETING_WEBHOOK_SECRETS
// entry), to the service's own capture webhook at PUBLIC_BASE_URL; a requested transcript is
// `transcript.done` one step later. Its state lives in this process, as a development stand-in.

const CAPTURE_PATH = '/meetings/webhooks/capture';
const DELIVERY_ATTEMPTS = 5;

interface SimulatedBot {
  request: CreateBotRequest;
  timers: NodeJS.Timeout[];
  joined: boolean;
  ended: boolean;
  recordingId: string;
  recordingStartedAt: string | null;
  recordingEndedAt: string | null;
}

/** A short sales call, the same for every bot; every speaker is named as simulated. */
const SCRIPT: [speaker: string, email: string, text: string][] = [
  [
    'Alex Rivera (simulated)',
    'alex.rivera@simulated.invalid',
    'Thanks for making the time today. This transcript comes from the simulated meeting vendor; no meeting was joined.',
  ],
  [
    'Jordan Lee (simulated)',
    'jordan.lee@simulated.invalid',
    'Happy to. We are looking at replacing our call tracking before the next quarter.',
  ],
  ['Alex Rivera (simulated)', 'alex.rivera@simulated.invalid', 'What matters most to your team: coverage, reporting, or cost?'],
  [
    'Jordan Lee (simulated)',
    'jordan.lee@simulated.invalid',
    'Reporting first. We also need it to work with our CRM. Can you send a proposal by Friday?',
  ],
  [
    'Alex Rivera (simulated)',
    'alex.rivera@simulated.invalid',
    'Yes, I will send the proposal by Friday and set up a follow-up call next week.',
  ],
];

export function createSimulatedVendor(config: Config, logger: Logger): MeetingVendor {
  const stepMs = config.MEETING_SIMULATED_STEP_MS;
  const callMs = config.MEETING_SIMULATED_CALL_MS;
  const bots = new Map<string, SimulatedBot>();
  const recordings = new Map<string, string>(); // recording id → vendor bot id
  const log = logger.child({ vendor: 'simulated' });

  async function post(
    bot: SimulatedBot,
    vendorBotId: string,
    event: string,
    extra: Record<string, unknown> = {},
    code?: string,
  ): Promise<void> {
    const [secret] = webhookSecrets(config);
    if (!secret) return;
    const body = JSON.stringify({
      event,
      data: {
        data: { code: code ?? event.split('.')[1], sub_code: null, updated_at: new Date().toISOString() },
        bot: { id: vendorBotId, metadata: { bot_id: bot.request.bot_id, org_id: bot.request.org_id } },
        ...extra,
      },
    });
    const id = `msg_sim_${crypto.randomUUID()}`;
    for (let attempt = 1; attempt <= DELIVERY_ATTEMPTS; attempt++) {
      try {
        // Signed per attempt, as a redelivery carries a fresh timestamp and the same message id.
        const response = await fetch(`${publicBaseUrl(config)}${CAPTURE_PATH}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...signWebhook(secret, id, body) },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        if (response.status < 500) return;
      } catch (err) {
        log.debug({ err, event }, 'simulated webhook delivery failed');
      }
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
    log.warn({ event, vendorBotId }, 'simulated webhook not delivered');
  }

  /** Queues the rest of the stream, one event after another. */
  function play(bot: SimulatedBot, vendorBotId: string, steps: { after: number; run: () => Promise<void> }[]): void {
    let at = 0;
    let chain = Promise.resolve();
    for (const step of steps) {
      at += step.after;
      bot.timers.push(
        setTimeout(() => {
          chain = chain.then(step.run).catch((err: unknown) => log.warn({ err, vendorBotId }, 'simulated step failed'));
        }, at),
      );
    }
  }

  const recordingExtra = (bot: SimulatedBot) => ({ recording: { id: bot.recordingId, metadata: {} } });

  function endSteps(bot: SimulatedBot, vendorBotId: string) {
    return [
      {
        after: stepMs,
        run: async () => {
          bot.recordingEndedAt ??= new Date().toISOString();
          bot.ended = true;
          await post(bot, vendorBotId, 'bot.call_ended');
        },
      },
      { after: stepMs, run: () => post(bot, vendorBotId, 'bot.done') },
      { after: stepMs, run: () => post(bot, vendorBotId, 'recording.done', recordingExtra(bot), 'done') },
    ];
  }

  return {
    name: 'simulated',

    async createBot(request) {
      if (!webhookSecrets(config).length) {
        throw new VendorRejected('MEETING_WEBHOOK_SECRETS is not set: the simulated meeting vendor cannot sign its events');
      }
      const vendorBotId = `sim_${crypto.randomUUID()}`;
      const bot: SimulatedBot = {
        request,
        timers: [],
        joined: false,
        ended: false,
        recordingId: `sim_rec_${crypto.randomUUID()}`,
        recordingStartedAt: null,
        recordingEndedAt: null,
      };
      bots.set(vendorBotId, bot);
      recordings.set(bot.recordingId, vendorBotId);
      play(bot, vendorBotId, [
        { after: stepMs, run: () => post(bot, vendorBotId, 'bot.joining_call') },
        { after: stepMs, run: () => post(bot, vendorBotId, 'bot.in_waiting_room') },
        {
          after: stepMs,
          run: async () => {
            bot.joined = true;
            await post(bot, vendorBotId, 'bot.in_call_not_recording');
          },
        },
        {
          after: stepMs,
          run: async () => {
            bot.recordingStartedAt = new Date().toISOString();
            await post(bot, vendorBotId, 'bot.in_call_recording');
          },
        },
        { after: callMs, run: async () => {} },
        ...endSteps(bot, vendorBotId),
      ]);
      log.info({ vendorBotId, botId: request.bot_id }, 'simulated meeting bot created (no meeting is joined)');
      return { vendor_bot_id: vendorBotId };
    },

    async removeBot(vendorBotId) {
      const bot = bots.get(vendorBotId);
      if (!bot || bot.ended) return;
      for (const timer of bot.timers) clearTimeout(timer);
      bot.timers = [];
      bot.ended = true;
      // A bot that was in the call leaves it, and what it recorded is finalized, as Recall's leave_call does.
      if (bot.joined) play(bot, vendorBotId, endSteps(bot, vendorBotId));
    },

    async latestRecording(vendorBotId) {
      const bot = bots.get(vendorBotId);
      return bot?.recordingStartedAt ? bot.recordingId : null;
    },

    async requestTranscript(recordingId) {
      const transcriptId = `sim_tr_${recordingId}`;
      const vendorBotId = recordings.get(recordingId);
      const bot = vendorBotId ? bots.get(vendorBotId) : undefined;
      if (bot && vendorBotId) {
        play(bot, vendorBotId, [
          {
            after: stepMs,
            run: () =>
              post(bot, vendorBotId, 'transcript.done', { ...recordingExtra(bot), transcript: { id: transcriptId, metadata: {} } }, 'done'),
          },
        ]);
      }
      return { transcript_id: transcriptId };
    },

    async fetchRecording(recordingId) {
      const vendorBotId = recordings.get(recordingId);
      const bot = vendorBotId ? bots.get(vendorBotId) : undefined;
      return {
        id: recordingId,
        started_at: bot?.recordingStartedAt ?? null,
        completed_at: bot?.recordingEndedAt ?? null,
        download_url: `https://recordings.simulated.invalid/${encodeURIComponent(recordingId)}.mp4`,
      };
    },

    async fetchTranscript() {
      return SCRIPT.map(([speaker, email, text], i) => ({ speaker, email, text, start_seconds: i * 12 }));
    },
  };
}
