// The agent's audio: 16 kHz mono samples queued by segment and played gap-free at the context's rate
// (linear interpolation). A segment has finished playing when the next segment's first sample is reached,
// or when its audio ran out and nothing more came for GRACE_SECONDS (the engine may still be sending it).
// `clear` drops everything queued at once. Messages out: {type:'finished', id}, {type:'playing', playing}.
const SOURCE_RATE = 16000;
const GRACE_SECONDS = 0.25;

class PlaybackProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = SOURCE_RATE / sampleRate;
    this.reset();
    this.playing = false;
    this.port.onmessage = (event) => this.receive(event.data);
  }

  reset() {
    /** Items in order: {start: id} markers and Float32Array chunks. */
    this.queue = [];
    this.chunk = null;
    this.index = 0;
    this.current = null;
    this.previous = 0;
    this.next = 0;
    this.phase = 1;
    this.starvedAt = null;
  }

  receive(message) {
    if (message.type === 'segment') this.queue.push({ start: message.id });
    else if (message.type === 'audio') this.queue.push(message.samples);
    else if (message.type === 'clear') this.reset();
  }

  /** The next source sample, or null when nothing is queued; passing a marker finishes the segment before it. */
  pull() {
    for (;;) {
      if (this.chunk && this.index < this.chunk.length) return this.chunk[this.index++];
      this.chunk = null;
      const item = this.queue.shift();
      if (item === undefined) return null;
      if (item instanceof Float32Array) {
        this.chunk = item;
        this.index = 0;
      } else {
        if (this.current !== null) this.port.postMessage({ type: 'finished', id: this.current });
        this.current = item.start;
      }
    }
  }

  process(_inputs, outputs) {
    const out = outputs[0][0];
    let played = 0;
    for (let i = 0; i < out.length; i++) {
      let starved = false;
      while (this.phase >= 1) {
        const sample = this.pull();
        if (sample === null) {
          starved = true;
          break;
        }
        this.previous = this.next;
        this.next = sample;
        this.phase -= 1;
      }
      if (starved) {
        out[i] = 0;
        continue;
      }
      out[i] = this.previous + (this.next - this.previous) * this.phase;
      this.phase += this.step;
      played++;
    }
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    if (played > 0) this.starvedAt = null;
    else if (this.current !== null) {
      if (this.starvedAt === null) this.starvedAt = currentTime;
      else if (currentTime - this.starvedAt >= GRACE_SECONDS) {
        this.port.postMessage({ type: 'finished', id: this.current });
        this.current = null;
        this.starvedAt = null;
      }
    }
    const playing = played > 0;
    if (playing !== this.playing) {
      this.playing = playing;
      this.port.postMessage({ type: 'playing', playing });
    }
    return true;
  }
}

registerProcessor('widget-playback', PlaybackProcessor);
