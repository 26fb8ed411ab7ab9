import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ChatModel } from '../platform/adapters/llm/chat-model';
import type { ServiceDeps } from '../services/deps';
import { listenToVoiceEvents } from '../services/conversations/engine-events';
import { openConversation } from '../services/conversations/runtime';
import { isDomainError } from '../domain/errors';
import { ENGINE_BEAT_MS, engineGone, engineHeart, letGo, moveStrandedCalls } from '../services/conversations/watchdog';
import { mintResumeToken, type VoiceSessionClaims, verifyVoiceSessionToken } from '../services/conversations/session-tokens';
import { Conversation } from './pipeline/conversation';
import { conversationPorts } from './ports';
import { conversationProviders, withProviderAudit } from './speech/selection';
import type { SpeechStack } from './speech/types';
import { acceptTwilioStream } from './transports/twilio-media-stream';
import type { CallTransport } from './transports/types';
import { WidgetSocket } from './transports/widget-socket';

// The engine's HTTP server: a health answer, and two WebSocket doors (Twilio Media Streams, the widget).
// Each socket opened with a valid voice session token becomes one Conversation.

export interface EngineDeps extends ServiceDeps {
  speech: SpeechStack;
  model: ChatModel;
  engineId: string;
}

const START_TIMEOUT_MS = 10_000;
/** WebSocket close codes: the session's token was refused; the conversation could not open. */
const REFUSED = 4401;
const FAILED = 4500;
/** A conversation refused for a reason the API would answer with this status: 4000 + the status (a widget's resume). */
const REFUSAL_CODES = { forbidden: 4403, not_found: 4404, conflict: 4409, gone: 4410 } as const;
const closeCodeOf = (error: unknown) =>
  isDomainError(error) && error.kind in REFUSAL_CODES ? REFUSAL_CODES[error.kind as keyof typeof REFUSAL_CODES] : FAILED;

export interface Engine {
  server: http.Server;
  live: Set<Conversation>;
  draining: boolean;
  /** Resolves once the engine hears the API's events about live conversations (answering-machine verdicts). */
  listening: Promise<{ unlisten(): Promise<void> }>;
  /** Stops beating, watching and listening (the process is going away). */
  stop(): Promise<void>;
  /**
   * SIGTERM: health answers 503 and no conversation is taken from now; live ones get `drainMs` to end, then
   * move (a Twilio call is streamed again, a widget's page resumes elsewhere); then the engine stops.
   */
  drain(drainMs: number): Promise<void>;
}

export function createEngine(deps: EngineDeps): Engine {
  const live = new Set<Conversation>();
  // The API tells every engine; the one holding the conversation acts.
  const listening = listenToVoiceEvents(deps, (event) => {
    for (const c of live) if (c.id === event.conversation) c.answeredBy(event.answered_by);
  });
  // Beat twice a second; watch the others' beats and move the calls of a silent one (services/conversations/watchdog.ts).
  const warn = (what: string) => (error: unknown) => deps.logger.warn({ err: error }, what);
  const heart = engineHeart(deps, deps.engineId);
  void heart.beat().catch(warn('the engine could not beat'));
  const beating = setInterval(() => void heart.beat().catch(warn('the engine could not beat')), ENGINE_BEAT_MS);
  const watching = setInterval(() => void moveStrandedCalls(deps, deps.engineId).catch(warn('the watch failed')), ENGINE_BEAT_MS * 2);
  let stopping = false;
  const engine: Engine = {
    server: http.createServer(),
    live,
    draining: false,
    listening,
    async stop() {
      if (!stopping) stopping = true;
      else return;
      clearInterval(beating);
      clearInterval(watching);
      await (await listening).unlisten();
      await engineGone(deps, deps.engineId).catch(warn('the engine could not say it is gone'));
      heart.release();
    },
    async drain(drainMs) {
      if (engine.draining) return;
      engine.draining = true;
      deps.logger.info({ live: live.size }, 'voice engine draining');
      const until = Date.now() + drainMs;
      while (live.size && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      // Marked as moving before their streams close: a peer's watch never moves them a second time once this
      // engine's beat row is gone, and whoever takes one resumes it.
      const moving = [...live].filter((c) => c.movable);
      await letGo(
        deps,
        deps.engineId,
        moving.map((c) => c.id),
      ).catch(warn('the calls could not be marked as moving'));
      for (const conversation of live)
        if (conversation.movable) conversation.release();
        else await conversation.end({ reason: 'engine_stopped', status: 'failed' }, false);
      engine.server.close();
      await engine.stop();
    },
  };
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });

  engine.server.on('request', (req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(engine.draining ? 503 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: engine.draining ? 'draining' : 'ok', conversations: live.size, draining: engine.draining }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: 'Not Found' }));
  });

  async function converse(
    claims: VoiceSessionClaims,
    makeTransport: (conversationId: string) => CallTransport | Promise<CallTransport>,
    socket: WebSocket,
  ) {
    let conversation: Conversation | undefined;
    try {
      const opened = await openConversation(deps, claims, deps.engineId);
      // The agent's cloud providers with the organization's keys, the local models behind them.
      const providers = await conversationProviders(deps, opened);
      const transport = await makeTransport(opened.id);
      conversation = new Conversation({
        opened,
        transport,
        speech: providers.speech,
        model: providers.model,
        ports: withProviderAudit(conversationPorts(deps, deps.engineId, opened, transport.callId), providers),
        logger: deps.logger.child({ conversationId: opened.id }),
      });
      live.add(conversation);
      await conversation.run();
    } catch (error) {
      const code = closeCodeOf(error);
      if (code === FAILED) deps.logger.error({ err: error }, 'a conversation failed to start');
      socket.close(code, code === FAILED ? 'the conversation could not start' : (error as Error).message.slice(0, 120));
    } finally {
      if (conversation) live.delete(conversation);
    }
  }

  engine.server.on('upgrade', (req, raw, head) => {
    const url = new URL(req.url ?? '/', 'http://engine');
    if (engine.draining || (url.pathname !== '/twilio/media-stream' && url.pathname !== '/widget')) {
      raw.end(`HTTP/1.1 ${engine.draining ? '503 Service Unavailable' : '404 Not Found'}\r\n\r\n`);
      return;
    }
    sockets.handleUpgrade(req, raw, head, (socket) => {
      if (url.pathname === '/twilio/media-stream') {
        void acceptTwilioStream(socket, START_TIMEOUT_MS).then(
          async (stream) => {
            const claims = await verifyVoiceSessionToken(deps.config, stream.start.customParameters.token ?? '');
            if (!claims || claims.channel === 'widget') return socket.close(REFUSED, 'invalid session token');
            await converse({ ...claims, call_id: claims.call_id ?? stream.start.callSid }, () => stream, socket);
          },
          () => socket.close(REFUSED, 'no start frame'),
        );
        return;
      }
      void (async () => {
        const claims = await verifyVoiceSessionToken(deps.config, url.searchParams.get('token') ?? '');
        // The page that opened the socket must be the one the session was minted for.
        if (claims?.channel !== 'widget' || (claims.origin && req.headers.origin !== claims.origin))
          return socket.close(REFUSED, 'invalid session token');
        // A widget token naming a conversation is a resume token (only engines mint them): the page comes back.
        const resumeToken = async (id: string) => (await mintResumeToken(deps.config, claims, id)).token;
        await converse(
          claims,
          async (id) => new WidgetSocket(socket, id, { token: await resumeToken(id), refresh: () => resumeToken(id) }),
          socket,
        );
      })();
    });
  });
  return engine;
}
