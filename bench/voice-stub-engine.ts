import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { mulawToPcm, pcmToMulaw } from '../voice/audio/mulaw';
import { rms } from '../voice/audio/pcm';
import { tone } from '../test/support/voice/pcm';

// A deliberately naive engine for `npm run bench -- voice --stub`: it shows that the bench measures what
// it says, without the real engine. Its end of turn is a fixed silence (`hangMs`, so a pause while
// spelling ends the turn), it answers `thinkMs` later with a tone of `replyMs`, and caller speech of at
// least `bargeInMs` over its audio clears it (shorter speech, a backchannel, is ignored). The bench should
// then read voice-to-voice latency ≈ hangMs + thinkMs, spelled turns cut, and no backchannel interrupting.

export interface StubEngineOptions {
  hangMs?: number;
  thinkMs?: number;
  replyMs?: number;
  bargeInMs?: number;
  greetingMs?: number;
}

const AUDIBLE = 250;
const FRAME_MS = 20;

export async function startStubVoiceEngine(options: StubEngineOptions = {}) {
  const hangMs = options.hangMs ?? 500;
  const thinkMs = options.thinkMs ?? 200;
  const replyMs = options.replyMs ?? 3000;
  const bargeInMs = options.bargeInMs ?? 600;
  const reply = Buffer.from(pcmToMulaw(tone(replyMs, { hz: 330, amplitude: 6000 })));
  const greeting = Buffer.from(pcmToMulaw(tone(options.greetingMs ?? 1500, { hz: 392, amplitude: 6000 })));

  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: '/twilio/media-stream' });
  wss.on('connection', (socket) => {
    let streamSid = '';
    let speakingUntil = 0; // when the audio sent so far ends playing at the caller
    let voiced = 0; // consecutive audible milliseconds from the caller
    let silent = 0; // consecutive silent milliseconds after them
    let turnOpen = false;
    let pending: NodeJS.Timeout | undefined;
    const send = (body: unknown) => socket.readyState === socket.OPEN && socket.send(JSON.stringify(body));
    const speak = (audio: Buffer) => {
      for (let i = 0; i < audio.length; i += 160)
        send({ event: 'media', streamSid, media: { payload: audio.subarray(i, i + 160).toString('base64') } });
      send({ event: 'mark', streamSid, mark: { name: `reply-${Date.now()}` } });
      speakingUntil = Math.max(performance.now(), speakingUntil) + audio.length / 8;
    };
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.event === 'start') {
        streamSid = message.streamSid;
        setTimeout(() => speak(greeting), 300);
        return;
      }
      if (message.event !== 'media') return;
      const loud = rms(mulawToPcm(Buffer.from(message.media.payload, 'base64'))) >= AUDIBLE;
      const agentSpeaking = performance.now() < speakingUntil;
      if (loud) {
        voiced += FRAME_MS;
        silent = 0;
        if (agentSpeaking && voiced >= bargeInMs) {
          send({ event: 'clear', streamSid });
          speakingUntil = 0;
        }
        if (!agentSpeaking || voiced >= bargeInMs) turnOpen = true;
        clearTimeout(pending);
        return;
      }
      silent += FRAME_MS;
      // Gaps between words do not end a stretch of speech; a fifth of a second does.
      if (silent >= 200) voiced = 0;
      if (turnOpen && silent >= hangMs) {
        turnOpen = false;
        pending = setTimeout(() => speak(reply), thinkMs);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    expectedLatencyMs: hangMs + thinkMs,
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
