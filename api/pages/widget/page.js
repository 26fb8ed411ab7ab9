// The widget's page: a visitor talks to the agent from the microphone. It opens a session
// (POST /widgets/{id}/sessions), then the engine's WebSocket: microphone audio goes out as 16 kHz PCM16
// frames of 20 ms (capture-worklet.js), the agent's segments come back as 16 kHz PCM16 and play gap-free
// (playback-worklet.js); `clear` stops playback at once, `played` tells the engine what was heard.
// When the socket drops without `end` (the engine died, froze or drains and said `move`), the page takes
// the conversation to another engine with the resume token the engine gave it, a few times with backoff.
// Everything the engine says is put on the page as text, never as markup.
(() => {
  const data = JSON.parse(document.getElementById('widget-data').textContent);
  const $ = (id) => document.getElementById(id);
  const startButton = $('start');
  const hangupButton = $('hangup');
  const statusLine = $('status');
  const transcript = $('transcript');
  document.documentElement.style.setProperty('--accent', data.config.theme_color);

  /** Frames waiting in the socket's buffer past this are dropped: a stalled connection must not hold seconds of speech. */
  const MAX_BUFFERED_BYTES = 64 * 1024;
  /** When the socket drops, resume tries go after these delays (the first at once); then the call has ended. */
  const RESUME_DELAYS_MS = [0, 250, 500, 1000, 2000, 4000];
  /** An engine that says `alive` every second and then nothing for this long is taken as lost (frozen). */
  const SILENT_ENGINE_MS = 4000;
  /** Refusals no later try can change: the token, the origin, a conversation gone or ended. */
  const FINAL_CLOSE_CODES = new Set([4401, 4403, 4404, 4410]);
  let call = null;

  function setState(state, text) {
    document.body.dataset.state = state;
    statusLine.textContent = text;
    const active = state === 'connecting' || state === 'live' || state === 'reconnecting';
    startButton.hidden = active;
    hangupButton.hidden = !active;
  }

  /** One line per turn: a partial transcript replaces the open line of its role, a final one closes it. */
  const openLines = {};
  function showTranscript(role, text, final) {
    if (role !== 'agent' && role !== 'caller') return;
    let line = openLines[role];
    if (!line) {
      line = document.createElement('li');
      line.className = role;
      transcript.append(line);
    }
    line.textContent = String(text);
    line.classList.toggle('partial', !final);
    openLines[role] = final ? null : line;
    transcript.scrollTop = transcript.scrollHeight;
  }

  async function openSession() {
    const res = await fetch(`/widgets/${encodeURIComponent(data.widget_id)}/sessions`, { method: 'POST' });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(typeof body.detail === 'string' ? body.detail : `The session could not be opened (${res.status})`);
    return body;
  }

  class Call {
    constructor() {
      this.audio = new AudioContext();
      this.ended = false;
      this.ready = false;
      this.segment = null;
      this.framesSent = 0;
      this.resumeToken = null;
      this.resumeTries = 0;
      this.reconnects = 0;
      this.watchAlive = false;
      this.lastHeard = 0;
    }

    async start() {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
      });
      if (this.ended) return this.stop();
      const session = await openSession();
      await Promise.all([
        this.audio.audioWorklet.addModule('/widget-assets/capture-worklet.js'),
        this.audio.audioWorklet.addModule('/widget-assets/playback-worklet.js'),
      ]);
      if (this.ended) return this.stop();
      await this.audio.resume();
      this.playback = new AudioWorkletNode(this.audio, 'widget-playback', { numberOfInputs: 0, outputChannelCount: [1] });
      this.playback.port.onmessage = (event) => this.fromPlayback(event.data);
      this.playback.connect(this.audio.destination);
      this.capture = new AudioWorkletNode(this.audio, 'widget-capture', { numberOfOutputs: 1, outputChannelCount: [1] });
      this.capture.port.onmessage = (event) => this.sendFrame(event.data);
      this.source = this.audio.createMediaStreamSource(this.stream);
      this.source.connect(this.capture);
      // The capture node writes silence; connected to the destination so every browser keeps pulling it.
      this.capture.connect(this.audio.destination);
      this.session = session;
      this.connect(session.websocket_url);
      this.aliveTimer = setInterval(() => this.checkAlive(), 1000);
    }

    connect(url) {
      const socket = new WebSocket(url);
      this.socket = socket;
      socket.binaryType = 'arraybuffer';
      socket.onmessage = (event) => this.fromEngine(event.data);
      socket.onclose = (event) => this.lost(socket, event.code);
      // Before the first `ready` there is no conversation to go back to.
      socket.onerror = () => {
        if (!this.resumeToken) this.fail(new Error('The connection to the agent failed.'));
      };
    }

    /** The socket closed: the end, or an engine lost (a resume is tried while tries and the token last). */
    lost(socket, code) {
      if (this.ended || socket !== this.socket) return;
      this.ready = false;
      if (!this.resumeToken || FINAL_CLOSE_CODES.has(code) || this.resumeTries >= RESUME_DELAYS_MS.length)
        return this.finish('The conversation ended.');
      const delay = RESUME_DELAYS_MS[this.resumeTries++];
      setState('reconnecting', 'Reconnecting…');
      // What the lost engine had queued is not played: the engine that takes over says where it goes on.
      this.segment = null;
      this.playback?.port.postMessage({ type: 'clear' });
      clearTimeout(this.resumeTimer);
      this.resumeTimer = setTimeout(() => {
        if (this.ended) return;
        const url = new URL(this.session.websocket_url);
        url.searchParams.set('token', this.resumeToken);
        this.connect(url.toString());
      }, delay);
    }

    /** A frozen engine keeps its socket open and says nothing: past SILENT_ENGINE_MS the page lets it go. */
    checkAlive() {
      if (this.ready && this.watchAlive && Date.now() - this.lastHeard >= SILENT_ENGINE_MS) this.drop(1006);
    }

    /** Lets the socket go without waiting for its closing handshake, and resumes. */
    drop(code) {
      const socket = this.socket;
      socket.onclose = null;
      socket.onmessage = null;
      socket.close();
      this.lost(socket, code);
    }

    sendFrame(buffer) {
      const socket = this.socket;
      if (!this.ready || !socket || socket.readyState !== WebSocket.OPEN) return;
      if (socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
      socket.send(buffer);
      this.framesSent++;
      document.body.dataset.framesSent = String(this.framesSent);
    }

    send(message) {
      if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
    }

    fromEngine(payload) {
      this.lastHeard = Date.now();
      if (typeof payload !== 'string') {
        // Audio of the current segment; after a clear, audio still in flight is dropped until the next segment.
        if (this.segment === null || !this.playback) return;
        const pcm = new Int16Array(payload, 0, payload.byteLength >> 1);
        const samples = new Float32Array(pcm.length);
        for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 0x8000;
        this.playback.port.postMessage({ type: 'audio', samples }, [samples.buffer]);
        return;
      }
      let message;
      try {
        message = JSON.parse(payload);
      } catch {
        return;
      }
      switch (message.type) {
        case 'ready':
          if (this.resumeToken) document.body.dataset.reconnects = String(++this.reconnects);
          this.ready = true;
          this.resumeTries = 0;
          this.resumeToken = typeof message.resume_token === 'string' ? message.resume_token : null;
          setState('live', 'Connected: speak any time.');
          break;
        case 'resume_token':
          if (typeof message.token === 'string') this.resumeToken = message.token;
          break;
        case 'alive':
          this.watchAlive = true;
          break;
        case 'move':
          // The engine drains: another one takes the conversation at once.
          this.drop(1012);
          break;
        case 'segment':
          this.segment = String(message.id);
          this.playback?.port.postMessage({ type: 'segment', id: this.segment });
          break;
        case 'clear':
          this.segment = null;
          this.playback?.port.postMessage({ type: 'clear' });
          break;
        case 'transcript':
          showTranscript(message.role, message.text, message.final !== false);
          break;
        case 'end':
          this.finish('The conversation ended.');
          break;
      }
    }

    fromPlayback(message) {
      if (message.type === 'finished') this.send({ type: 'played', id: message.id });
      else if (message.type === 'playing') document.body.dataset.playing = String(message.playing);
    }

    hangUp() {
      this.send({ type: 'hangup' });
      this.finish('You hung up.');
    }

    finish(text) {
      if (this.ended) return;
      this.stop();
      setState('ended', text);
    }

    fail(error) {
      if (this.ended) return;
      this.stop();
      setState('error', error && error.name === 'NotAllowedError' ? 'The microphone is blocked for this page.' : error.message);
    }

    stop() {
      this.ended = true;
      this.ready = false;
      clearTimeout(this.resumeTimer);
      clearInterval(this.aliveTimer);
      if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000);
      for (const track of this.stream ? this.stream.getTracks() : []) track.stop();
      this.audio.close().catch(() => {});
      document.body.dataset.playing = 'false';
      if (call === this) call = null;
    }
  }

  startButton.addEventListener('click', () => {
    if (call) return;
    const current = new Call();
    call = current;
    setState('connecting', 'Connecting…');
    current.start().catch((error) => current.fail(error));
  });
  hangupButton.addEventListener('click', () => call?.hangUp());
  window.addEventListener('pagehide', () => call?.hangUp());
})();
