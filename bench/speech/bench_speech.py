"""Speech models benchmark: recognizers' word error rate and time, the voice, the VAD and the turn model.

    npm run bench -- speech          (runs this with .tools/speech-venv/bin/python)

The evaluation set is bench/fixtures/voice/: 42 caller sentences at telephone quality (8 kHz mu-law
and back), spoken by espeak-ng and by the Piper voice (make_fixtures.py). Every recognizer installed
under .tools/speech-models/stt is scored (install_models.py --candidates adds the ones compared with
the default), each with Whisper's window fitted to the utterance and padded to 30 s. Model times are
measured in this process, one call at a time, with the server's settings (one thread per call);
the served figures start the real server on a loopback port and time its first audio and its
transcript after the caller stops. Prints one JSON object.
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import wave
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SERVER = ROOT / "voice" / "speech-server"
FIXTURES = ROOT / "bench" / "fixtures" / "voice"
sys.path.insert(0, str(SERVER))

import audio  # noqa: E402
from models import stt_models  # noqa: E402
from normalize import edit_distance, normalize  # noqa: E402
from recognizer import WhisperRecognizer  # noqa: E402
from synthesizer import Synthesizer  # noqa: E402
from turn_model import SmartTurn  # noqa: E402
from vad import WINDOW, SileroVad, VadState  # noqa: E402

REPLIES = [
    "Sure, I can help with that. Could you tell me your account number?",
    "Thanks, Maria. I have booked you for Tuesday, March third at two thirty. You will get a confirmation by email.",
    "The premium plan is forty nine dollars a month. It includes unlimited users and priority support.",
    "I'm sorry, I didn't catch that. Could you repeat the last part?",
    "Great. Is there anything else I can help you with today?",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict:
    return {"p50": round(percentile(values, 50), 1), "p95": round(percentile(values, 95), 1), "mean": round(statistics.mean(values), 1)}


def load_set() -> dict[str, list[tuple[str, np.ndarray]]]:
    sentences = json.loads((FIXTURES / "sentences.json").read_text())["sentences"]
    sets = {}
    for voice in ("espeak", "piper-joe"):
        items = []
        for index, text in enumerate(sentences):
            with wave.open(str(FIXTURES / voice / f"{index + 1:02d}.wav"), "rb") as src:
                pcm = src.readframes(src.getnframes())
                rate = src.getframerate()
            items.append((text, audio.resample(audio.pcm16_to_float(pcm), rate, audio.MODEL_RATE)))
        sets[voice] = items
    return sets


def bench_recognizers(models: Path, sets, threads: int) -> dict:
    results = {}
    for name in stt_models(models):
        for context in ("fit", "full"):
            recognizer = WhisperRecognizer(models / "stt" / name, name, threads=threads, workers=1, context=context)
            recognizer.transcribe(sets["espeak"][0][1])  # warm-up
            row: dict = {"stt_ms": None, "wer": {}, "errors": []}
            times: list[float] = []
            for voice, items in sets.items():
                errors = words = 0
                for text, samples in items:
                    began = time.perf_counter()
                    said = recognizer.transcribe(samples, "en")
                    times.append((time.perf_counter() - began) * 1000)
                    reference, hypothesis = normalize(text), normalize(said)
                    distance = edit_distance(reference, hypothesis)
                    errors, words = errors + distance, words + len(reference)
                    if distance:
                        row["errors"].append(f"{voice}: {text} -> {said}")
                row["wer"][voice] = round(errors / words, 3)
            row["stt_ms"] = summary(times)
            results[f"{name} ({context})"] = row
            print(f"[bench] {name} ({context}): WER {row['wer']}, ms {row['stt_ms']}", file=sys.stderr)
    return results


def bench_voice(models: Path, threads: int) -> dict:
    voice = Synthesizer.load(models, threads)
    voice.synthesize("Warm up.")
    first, rtf = [], []
    for reply in REPLIES:
        began = time.perf_counter()
        total = 0.0
        for index, samples in enumerate(voice.sentences(reply)):
            audio.float_to_pcm16(audio.resample(samples, voice.sample_rate, 8000))
            if index == 0:
                first.append((time.perf_counter() - began) * 1000)
            total += samples.size / voice.sample_rate
        rtf.append((time.perf_counter() - began) / total)
    return {"voice": voice.name, "first_audio_ms": summary(first), "real_time_factor": round(statistics.mean(rtf), 3)}


def bench_vad(models: Path, sets) -> dict:
    vad = SileroVad(models / "vad" / "silero_vad.onnx")
    times = []
    for items in sets.values():
        for _, samples in items:
            state = VadState()
            for start in range(0, samples.size - WINDOW + 1, WINDOW):
                began = time.perf_counter()
                vad.probability(state, samples[start : start + WINDOW])
                times.append((time.perf_counter() - began) * 1000)
    return {"model": vad.name, "windows": len(times), "ms_per_32ms_window": {k: round(v, 3) for k, v in summary(times).items()}}


def bench_turn(models: Path, sets, threads: int) -> dict:
    turn = SmartTurn(models / "turn" / "smart-turn-v3.2-cpu.onnx", threads)
    silence = np.zeros(audio.MODEL_RATE // 5, dtype=np.float32)  # the 200 ms after which the server asks
    turn.probability(silence)
    times, whole, cut = [], [], []
    for items in sets.values():
        for text, samples in items:
            if len(text.split()) < 5:
                continue  # too short to cut in the middle of a thought
            for kind, clip in (("whole", samples), ("cut", samples[: int(samples.size * 0.55)])):
                began = time.perf_counter()
                p = turn.probability(np.concatenate([clip, silence]))
                times.append((time.perf_counter() - began) * 1000)
                (whole if kind == "whole" else cut).append(p >= 0.5)
    return {
        "model": turn.name,
        "turn_ms": summary(times),
        "complete_sentences_judged_complete": round(sum(whole) / len(whole), 3),
        "sentences_cut_at_55pct_judged_incomplete": round(1 - sum(cut) / len(cut), 3),
        "pairs": len(whole),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def bench_served(models: Path, stt: str, sets) -> dict:
    import aiohttp

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER / "speech_server.py"), "--port", str(port), "--models", str(models), "--stt", stt],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
            for _ in range(600):
                try:
                    async with http.get(f"{base}/health") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            first_byte = []
            for reply in REPLIES * 2:
                began = time.perf_counter()
                async with http.post(f"{base}/v1/speak", json={"text": reply, "sample_rate": 8000}) as r:
                    await r.content.readany()
                    first_byte.append((time.perf_counter() - began) * 1000)
                    await r.read()
            # The caller's audio at 8 kHz in 20 ms frames, sent as fast as it is taken, then silence:
            # from the moment the server says speech stopped to the transcript, and to the turn.
            transcript_after_stop, turn_after_stop = [], []
            for _, samples in sets["piper-joe"][8:28]:
                pcm = audio.float_to_pcm16(audio.resample(np.concatenate([np.zeros(4000, np.float32), samples, np.zeros(16000, np.float32)]), 16000, 8000)).tobytes()
                async with http.ws_connect(f"{base}/v1/listen?sample_rate=8000&partials=0") as ws:
                    for i in range(0, len(pcm), 320):
                        await ws.send_bytes(pcm[i : i + 320])
                    stopped = heard = None
                    async for message in ws:
                        event = json.loads(message.data)
                        if event["type"] == "speech_stopped":
                            stopped = stopped or time.perf_counter()
                        elif event["type"] == "transcript" and stopped and heard is None:
                            heard = time.perf_counter()
                            transcript_after_stop.append((heard - stopped) * 1000)
                        elif event["type"] == "turn" and heard is not None:
                            turn_after_stop.append((time.perf_counter() - stopped) * 1000)
                            break
            return {
                "speak_first_byte_ms_8khz": summary(first_byte),
                "listen_transcript_after_speech_stopped_ms": summary(transcript_after_stop),
                "listen_turn_after_speech_stopped_ms": summary(turn_after_stop),
            }
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description="Speech models benchmark")
    parser.add_argument("--models", default=str(ROOT / ".tools" / "speech-models"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--stt", default="whisper-tiny.en", help="the recognizer the served figures use")
    args = parser.parse_args()
    models = Path(args.models)
    began = time.time()
    sets = load_set()
    result = {
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "threads_per_call": args.threads},
        "set": {voice: len(items) for voice, items in sets.items()},
        "vad": bench_vad(models, sets),
        "turn": bench_turn(models, sets, args.threads),
        "tts": bench_voice(models, args.threads),
        "stt": bench_recognizers(models, sets, args.threads),
    }
    result["served"] = asyncio.run(bench_served(models, args.stt, sets))
    result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.time() - began, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
