// The microphone, resampled to 16 kHz mono PCM16 and posted to the page in 20 ms frames (320 samples).
// Each output sample is the mean of the input samples of its span (a box filter): enough against aliasing
// for speech at 44.1 or 48 kHz, and exact for any input rate.
const TARGET_RATE = 16000;
const FRAME_SAMPLES = 320;

class CaptureProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / TARGET_RATE;
    this.span = 0;
    this.sum = 0;
    this.count = 0;
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
  }

  emit(value) {
    const clamped = Math.min(1, Math.max(-1, value));
    this.frame[this.filled++] = clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff;
    if (this.filled === FRAME_SAMPLES) {
      const buffer = this.frame.buffer;
      this.port.postMessage(buffer, [buffer]);
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.filled = 0;
    }
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const length = channels[0].length;
    for (let i = 0; i < length; i++) {
      let sample = 0;
      for (let c = 0; c < channels.length; c++) sample += channels[c][i];
      this.sum += sample / channels.length;
      this.count++;
      this.span++;
      if (this.span >= this.ratio) {
        this.emit(this.sum / this.count);
        this.span -= this.ratio;
        this.sum = 0;
        this.count = 0;
      }
    }
    return true;
  }
}

registerProcessor('widget-capture', CaptureProcessor);
