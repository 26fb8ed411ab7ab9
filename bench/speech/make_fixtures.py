"""Renders the speech evaluation set (bench/fixtures/voice/) at telephone quality.

Each sentence of sentences.json is spoken twice: by espeak-ng (Debian's espeak-ng, a rotation of five
English voices and speeds: a voice the recognizers were never tuned on) and by the Piper voice the
service speaks with (en_US-joe-medium). Both go through the same telephone path: band-limited to
300-3400 Hz, 8 kHz G.711 mu-law, and back to 8 kHz PCM16 WAV, which is what a caller's audio looks like
by the time it reaches the recognizer. The WAVs are not committed: `npm run bench -- speech` runs this
script when they are missing:

    .tools/speech-venv/bin/python bench/speech/make_fixtures.py

espeak-ng's output is the same for the same text and version (1.51 here); Piper's is not (its
generator adds noise), so the Piper half differs slightly from one rendering to the next; keep the files
between runs that are compared.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "bench" / "fixtures" / "voice"
sys.path.insert(0, str(ROOT / "voice" / "speech-server"))

import audio  # noqa: E402  (voice/speech-server/audio.py)

ESPEAK_VOICES = [("en-us", 160), ("en-gb", 150), ("en-us+f3", 170), ("en-gb-x-rp+m3", 155), ("en-us+f2", 165)]


def telephone(samples: np.ndarray, rate: int) -> np.ndarray:
    """Float audio at `rate` -> 300-3400 Hz, 8 kHz, mu-law and back: int16 at 8 kHz."""
    x = audio.resample(samples.astype(np.float32), rate, 8000)
    spectrum = np.fft.rfft(x)
    freqs = np.fft.rfftfreq(len(x), 1 / 8000)
    spectrum[(freqs < 300) | (freqs > 3400)] = 0
    x = np.fft.irfft(spectrum, len(x))
    peak = np.max(np.abs(x)) or 1.0
    x = np.clip(x / peak * 0.7, -1.0, 1.0)
    return audio.mulaw_decode(audio.mulaw_encode(audio.float_to_pcm16(x)))


def write_wav(path: Path, pcm: np.ndarray, rate: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.astype("<i2").tobytes())


def read_wav(path: str) -> tuple[np.ndarray, int]:
    with wave.open(path, "rb") as src:
        rate = src.getframerate()
        pcm = np.frombuffer(src.readframes(src.getnframes()), dtype="<i2")
    return audio.pcm16_to_float(pcm.tobytes()), rate


def espeak(text: str, voice: str, speed: int) -> tuple[np.ndarray, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", out, text], check=True, timeout=60)
        return read_wav(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=str(ROOT / ".tools" / "speech-models"))
    args = parser.parse_args()
    sentences = json.loads((FIXTURES / "sentences.json").read_text())["sentences"]

    from synthesizer import Synthesizer  # voice/speech-server/synthesizer.py

    piper = Synthesizer.load(Path(args.models), threads=2)
    for index, text in enumerate(sentences):
        name = f"{index + 1:02d}.wav"
        voice, speed = ESPEAK_VOICES[index % len(ESPEAK_VOICES)]
        samples, rate = espeak(text, voice, speed)
        write_wav(FIXTURES / "espeak" / name, telephone(samples, rate), 8000)
        spoken = np.concatenate([chunk for chunk in piper.sentences(text, speed=1.0)])
        write_wav(FIXTURES / "piper-joe" / name, telephone(spoken, piper.sample_rate), 8000)
        print(f"{name} {voice}: {text}")


if __name__ == "__main__":
    main()
