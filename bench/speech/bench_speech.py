"""Speech models benchmark: recognizers' word error rate and time, the voice, the VAD and the turn model.

    npm run bench -- speech          (runs this with .tools/speech-venv/bin/python)

The evaluation set is bench/fixtures/voice/: 42 caller sentences at telephone quality (8 kHz mu-law
and back), spoken by espeak-ng and by the Piper voice (make_fixtures.py). Every recognizer installed
under .tools/speech-models/stt is scored (install_models.py --candidates adds the ones compared with
the default), each with Whisper's window fitted to the utterance and padded to 30 s. Model times are
measured in this process, one call at a time, with the server's settings (one thread per call), as
wall time and as the process's CPU time (what the call costs whatever else runs on the machine);
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
from models import DEFAULT_STT, stt_models  # noqa: E402
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


def summary(values: list[float], digits: int = 1) -> dict:
    return {
        "p50": round(percentile(values, 50), digits),
        "p95": round(percentile(values, 95), digits),
        "mean": round(statistics.mean(values), digits),
    }


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
    """Every installed recognizer, each with both windows, utterance by utterance in turn (so a busy
    machine slows them alike and their times stay comparable)."""
    variants = {}
    for name in stt_models(models):
        for context in ("fit", "full"):
            recognizer = WhisperRecognizer(models / "stt" / name, name, threads=threads, workers=1, context=context)
            recognizer.transcribe(sets["espeak"][0][1])  # warm-up
            variants[f"{name} ({context})"] = recognizer
    rows = {key: {"wer": {}, "errors": [], "times": [], "cpu": [], "heard": []} for key in variants}
    for voice, items in sets.items():
        counts = {key: [0, 0] for key in variants}
        for text, samples in items:
            reference = normalize(text)
            for key, recognizer in variants.items():
                began, cpu = time.perf_counter(), time.process_time()
                said = recognizer.transcribe(samples, "en")
                rows[key]["times"].append((time.perf_counter() - began) * 1000)
                rows[key]["cpu"].append((time.process_time() - cpu) * 1000)
                rows[key]["heard"].append(said)
                distance = edit_distance(reference, normalize(said))
                counts[key][0] += distance
                counts[key][1] += len(reference)
                if distance:
                    rows[key]["errors"].append(f"{voice}: {text} -> {said}")
        for key, (errors, words) in counts.items():
            rows[key]["wer"][voice] = round(errors / words, 3)
    results = {}
    for key, row in rows.items():
        results[key] = {
            "wer": row["wer"],
            "stt_ms": summary(row["times"]),
            "stt_cpu_ms": summary(row["cpu"]),
            "errors": row["errors"],
            "heard": row["heard"],
        }
        print(f"[bench] {key}: WER {row['wer']}, ms {results[key]['stt_ms']}", file=sys.stderr)
    return results


def bench_voice(models: Path, threads: int) -> dict:
    voice = Synthesizer.load(models, threads)
    voice.synthesize("Warm up.")
    first, first_cpu, rtf = [], [], []
    for reply in REPLIES:
        began, cpu = time.perf_counter(), time.process_time()
        total = 0.0
        for index, samples in enumerate(voice.sentences(reply)):
            audio.float_to_pcm16(audio.resample(samples, voice.sample_rate, 8000))
            if index == 0:
                first.append((time.perf_counter() - began) * 1000)
                first_cpu.append((time.process_time() - cpu) * 1000)
            total += samples.size / voice.sample_rate
        rtf.append((time.perf_counter() - began) / total)
    return {
        "voice": voice.name,
        "first_audio_ms": summary(first),
        "first_audio_cpu_ms": summary(first_cpu),
        "real_time_factor": round(statistics.mean(rtf), 3),
    }


def bench_vad(models: Path, sets) -> dict:
    vad = SileroVad(models / "vad" / "silero_vad.onnx")
    times, cpu_times = [], []
    for items in sets.values():
        for _, samples in items:
            state = VadState()
            for start in range(0, samples.size - WINDOW + 1, WINDOW):
                began, cpu = time.perf_counter(), time.process_time()
                vad.probability(state, samples[start : start + WINDOW])
                times.append((time.perf_counter() - began) * 1000)
                cpu_times.append((time.process_time() - cpu) * 1000)
    return {
        "model": vad.name,
        "windows": len(times),
        "ms_per_32ms_window": summary(times, 3),
        "cpu_ms_per_32ms_window": summary(cpu_times, 3),
    }


def bench_turn(models: Path, sets, threads: int) -> dict:
    turn = SmartTurn(models / "turn" / "smart-turn-v3.2-cpu.onnx", threads)
    silence = np.zeros(audio.MODEL_RATE // 5, dtype=np.float32)  # the 200 ms after which the server asks
    turn.probability(silence)
    times, cpu_times, whole, cut = [], [], [], []
    for items in sets.values():
        for text, samples in items:
            if len(text.split()) < 5:
                continue  # too short to cut in the middle of a thought
            for kind, clip in (("whole", samples), ("cut", samples[: int(samples.size * 0.55)])):
                began, cpu = time.perf_counter(), time.process_time()
                p = turn.probability(np.concatenate([clip, silence]))
                times.append((time.perf_counter() - began) * 1000)
                cpu_times.append((time.process_time() - cpu) * 1000)
                (whole if kind == "whole" else cut).append(p >= 0.5)
    return {
        "model": turn.name,
        "turn_ms": summary(times),
        "turn_cpu_ms": summary(cpu_times),
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
    parser.add_argument("--stt", default=DEFAULT_STT, help="the recognizer the served figures use")
    parser.add_argument("--parts", default="vad,turn,tts,stt,served", help="which figures, comma-separated")
    args = parser.parse_args()
    models = Path(args.models)
    began = time.time()
    sets = load_set()
    parts = args.parts.split(",")
    result: dict = {
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "threads_per_call": args.threads},
        "set": {voice: len(items) for voice, items in sets.items()},
    }
    if "vad" in parts:
        result["vad"] = bench_vad(models, sets)
    if "turn" in parts:
        result["turn"] = bench_turn(models, sets, args.threads)
    if "tts" in parts:
        result["tts"] = bench_voice(models, args.threads)
    if "stt" in parts:
        result["stt"] = bench_recognizers(models, sets, args.threads)
    if "served" in parts:
        result["served"] = {"stt": args.stt, **asyncio.run(bench_served(models, args.stt, sets))}
    result["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.time() - began, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
