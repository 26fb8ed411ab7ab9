"""The local speech server: voice activity, speech recognition, end of turn and a voice, on the CPU.

    python speech_server.py --port 8099 [--models .tools/speech-models] [--stt whisper-base]

GET  /health                                   200 {"vad", "stt", "tts", "turn"} once every model is loaded
WS   /v1/listen?sample_rate=8000|16000&language=en[&partials=0]
                                               binary PCM16 LE mono in, JSON events out (listen.py); text {"type":"reset"},
                                               {"type":"partials","on":bool} (partial transcripts, for barge-in)
POST /v1/speak {"text","voice","sample_rate","speed"}
                                               200 audio/L16;rate=<sr>;channels=1, chunked, sentence by sentence
POST /v1/transcribe?sample_rate=8000|16000     PCM16 body -> {"text", "stt_ms"}
POST /v1/turn?sample_rate=8000|16000           PCM16 body -> {"complete", "probability", "turn_ms"}

Errors are {"detail": "..."}. Models are read from files only (HF_HUB_OFFLINE): nothing is downloaded.
"""

import os

# Before the model libraries load: no model hub, and idle OpenMP threads sleep instead of spinning
# (they share two cores with Postgres, the API and the worker).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from aiohttp import WSMsgType, web  # noqa: E402

import audio  # noqa: E402
from listen import Listener  # noqa: E402
from models import DEFAULT_STT, Engine, load_engine  # noqa: E402
from synthesizer import split_sentences  # noqa: E402

log = logging.getLogger("speech")

ROOT = Path(__file__).resolve().parents[2]
LISTEN_RATES = (8000, 16000)
SPEAK_RATES = (8000, 16000, 24000)
LONGEST_TEXT = 5000  # characters per /v1/speak
LONGEST_UPLOAD_SECONDS = 120  # audio per /v1/transcribe or /v1/turn
ENGINE = web.AppKey("engine", Engine)


def bad_request(detail: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"detail": detail}), content_type="application/json")


@web.middleware
async def json_errors(request: web.Request, handler):
    """Every error the server answers is {"detail": ...}, including aiohttp's own (404, 405, 413)."""
    try:
        return await handler(request)
    except web.HTTPException as error:
        if error.content_type == "application/json" or error.status < 400:
            raise
        return web.json_response({"detail": error.reason}, status=error.status)


def sample_rate_of(request: web.Request, allowed=LISTEN_RATES) -> int:
    raw = request.query.get("sample_rate", "16000")
    if not raw.isdigit() or int(raw) not in allowed:
        raise bad_request(f"sample_rate must be one of {', '.join(map(str, allowed))}")
    return int(raw)


def language_of(request: web.Request) -> str:
    language = request.query.get("language", "en").lower()
    languages = request.app[ENGINE].recognizer.languages()
    if language not in languages:
        raise bad_request(f"language must be one of {', '.join(languages)} for {request.app[ENGINE].recognizer.name}")
    return language


async def pcm_body(request: web.Request, rate: int) -> np.ndarray:
    """The request's PCM16 body as 16 kHz float audio."""
    body = await request.read()
    if not body:
        raise bad_request("the body must be PCM16 LE mono audio")
    if len(body) % 2:
        raise bad_request("the body must hold whole 16-bit samples (an even number of bytes)")
    if len(body) > LONGEST_UPLOAD_SECONDS * rate * 2:
        raise web.HTTPRequestEntityTooLarge(max_size=LONGEST_UPLOAD_SECONDS * rate * 2, actual_size=len(body))
    return audio.resample(audio.pcm16_to_float(body), rate, audio.MODEL_RATE)


async def health(request: web.Request) -> web.Response:
    return web.json_response(request.app[ENGINE].names())


async def transcribe(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    rate = sample_rate_of(request)
    language = language_of(request)
    samples = await pcm_body(request, rate)
    began = time.perf_counter()
    text = await engine.run(engine.recognizer.transcribe, samples, language)
    return web.json_response({"text": text, "stt_ms": int(round((time.perf_counter() - began) * 1000))})


async def turn(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    samples = await pcm_body(request, sample_rate_of(request))
    if engine.turn is None:
        return web.json_response({"complete": True, "probability": None, "turn_ms": 0})
    began = time.perf_counter()
    probability = await engine.run(engine.turn.probability, samples)
    turn_ms = int(round((time.perf_counter() - began) * 1000))
    return web.json_response({"complete": probability >= 0.5, "probability": probability, "turn_ms": turn_ms})


async def speak(request: web.Request) -> web.StreamResponse:
    engine = request.app[ENGINE]
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise bad_request("the body must be JSON") from None
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    text, voice = body.get("text"), body.get("voice", "default")
    rate, speed = body.get("sample_rate", 16000), body.get("speed", 1.0)
    if not isinstance(text, str) or not text.strip():
        raise bad_request("text must be a non-empty string")
    if len(text) > LONGEST_TEXT:
        raise bad_request(f"text must be at most {LONGEST_TEXT} characters")
    if voice not in ("default", engine.voice.name):
        raise bad_request(f"voice must be 'default' or {engine.voice.name!r}")
    if isinstance(rate, bool) or rate not in SPEAK_RATES:
        raise bad_request(f"sample_rate must be one of {', '.join(map(str, SPEAK_RATES))}")
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0.5 <= speed <= 2.0:
        raise bad_request("speed must be a number from 0.5 to 2.0")

    response = web.StreamResponse(headers={"Content-Type": f"audio/L16;rate={rate};channels=1", "X-Voice": engine.voice.name})
    response.enable_chunked_encoding()
    await response.prepare(request)

    def render(sentence: str, first: bool) -> bytes:
        samples = engine.voice.synthesize(sentence, float(speed))
        if first:
            samples = audio.trim_leading_silence(samples, engine.voice.sample_rate)
        return audio.float_to_pcm16(audio.resample(samples, engine.voice.sample_rate, rate)).tobytes()

    sentences = split_sentences(text)
    # The next sentence is synthesized while the current one is sent.
    pending = asyncio.ensure_future(engine.run(render, sentences[0], True))
    try:
        for index in range(len(sentences)):
            chunk = await pending
            if index + 1 < len(sentences):
                pending = asyncio.ensure_future(engine.run(render, sentences[index + 1], False))
            await response.write(chunk)
    except (ConnectionResetError, asyncio.CancelledError):
        pending.cancel()
        raise
    await response.write_eof()
    return response


async def listen(request: web.Request) -> web.WebSocketResponse:
    engine = request.app[ENGINE]
    rate = sample_rate_of(request)
    language = language_of(request)
    partials = request.query.get("partials", "1") not in ("0", "false")
    socket = web.WebSocketResponse(max_msg_size=4 * 1024 * 1024)
    await socket.prepare(request)
    events: asyncio.Queue[dict | None] = asyncio.Queue()

    async def writer() -> None:
        while (event := await events.get()) is not None:
            if socket.closed:
                return
            await socket.send_str(json.dumps(event))

    sending = asyncio.ensure_future(writer())
    listener = Listener(engine, rate, language, events.put_nowait, partials=partials)
    try:
        async for message in socket:
            if message.type == WSMsgType.BINARY:
                listener.feed(message.data)
            elif message.type == WSMsgType.TEXT:
                try:
                    command = json.loads(message.data)
                except json.JSONDecodeError:
                    command = None
                if isinstance(command, dict) and command.get("type") == "reset":
                    listener.reset()
                elif isinstance(command, dict) and command.get("type") == "partials" and isinstance(command.get("on"), bool):
                    listener.set_partials(command["on"])
                else:
                    events.put_nowait({"type": "error", "detail": 'text messages must be {"type":"reset"} or {"type":"partials","on":true|false}'})
            elif message.type == WSMsgType.ERROR:
                break
    finally:
        await listener.close()
        events.put_nowait(None)
        await asyncio.gather(sending, return_exceptions=True)
    return socket


def build_app(engine: Engine) -> web.Application:
    app = web.Application(middlewares=[json_errors], client_max_size=LONGEST_UPLOAD_SECONDS * 16000 * 2 + 1024)
    app[ENGINE] = engine
    app.router.add_get("/health", health)
    app.router.add_get("/v1/listen", listen)
    app.router.add_post("/v1/speak", speak)
    app.router.add_post("/v1/transcribe", transcribe)
    app.router.add_post("/v1/turn", turn)
    app.on_cleanup.append(stop_engine)
    return app


async def stop_engine(app: web.Application) -> None:
    app[ENGINE].shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description="The local speech server (voice activity, recognition, end of turn, a voice).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--models", default=str(ROOT / ".tools" / "speech-models"), help="folder written by install_models.py")
    parser.add_argument("--stt", default=os.environ.get("SPEECH_STT", DEFAULT_STT), help="recognizer folder under <models>/stt (env SPEECH_STT)")
    parser.add_argument("--context", choices=("fit", "full"), default="fit", help="Whisper's window: the utterance, or 30 s")
    parser.add_argument("--threads", type=int, default=1, help="threads per model call")
    parser.add_argument("--workers", type=int, default=2, help="model calls at once (streams served in parallel)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="[speech] %(message)s")

    began = time.perf_counter()
    engine = load_engine(Path(args.models), args.stt, args.threads, args.workers, args.context)
    log.info("models loaded in %.1f s: %s", time.perf_counter() - began, json.dumps(engine.names()))
    web.run_app(build_app(engine), host=args.host, port=args.port, print=lambda _: log.info("listening on http://%s:%d", args.host, args.port), access_log=None)


if __name__ == "__main__":
    main()
