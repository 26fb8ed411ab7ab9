"""One listening stream: caller audio in, speech events out (WS /v1/listen).

Silero VAD reads the 16 kHz audio in 32 ms windows. Speech starts after START_WINDOWS windows in a row
at or above 0.5 (96 ms) and stops after STOP_WINDOWS windows below 0.35 (192 ms; between the two
thresholds speech goes on, as in Silero's own segmenter). A segment is transcribed from PREROLL before its
start (soft first consonants) to the moment it stopped; the turn model reads the turn (from its first
segment, as long as the model judged it incomplete) up to the same moment, the last 8 s of it.

Recognition starts early: once SPECULATE_WINDOWS windows are quiet (64 ms), the segment so far is
transcribed, and when speech stops without having resumed that transcript is the segment's, ready 128 ms
sooner; speech that resumes makes it stale. Partial transcripts serve only barge-in (the engine turns them
on while its agent speaks, `{"type": "partials", "on": true}`), so they never hold a final transcript back.

Events of one segment are sent in this order: speech_started, partial*, speech_stopped, transcript, turn.
Transcripts and turns of successive segments keep their order; the next segment's speech_started is
sent as soon as it is heard, so it can come before the previous segment's transcript (a barge-in is
never held back by a recognizer).
"""

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

import audio
from vad import WINDOW, VadState

log = logging.getLogger("speech")

START_WINDOWS = 3  # 96 ms of speech
STOP_WINDOWS = 6  # 192 ms of silence
SPECULATE_WINDOWS = 2  # 64 ms of silence: the segment's transcription starts
SPEECH_THRESHOLD = 0.5
SILENCE_THRESHOLD = 0.35
PREROLL = audio.MODEL_RATE * 3 // 10  # 300 ms before the first speech window
TURN_PREROLL = audio.MODEL_RATE // 2  # 500 ms before the turn, as Smart Turn is fed in Pipecat
PARTIAL_EVERY = audio.MODEL_RATE * 4 // 10  # a partial transcript per 400 ms of new speech
LONGEST_SEGMENT = audio.MODEL_RATE * 28  # one Whisper window; a longer segment is cut there
KEPT = audio.MODEL_RATE * 9  # audio kept outside a segment: the turn model's 8 s and the preroll


class Engine(Protocol):
    """What a stream needs from the server: the shared models and the inference threads."""

    vad: Any
    recognizer: Any
    turn: Any

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def busy(self) -> bool: ...


def ms(samples: int) -> int:
    return int(round(samples * 1000 / audio.MODEL_RATE))


class AudioLog:
    """The stream's recent 16 kHz audio, addressed by sample index since the stream began."""

    def __init__(self) -> None:
        self._chunks: collections.deque[np.ndarray] = collections.deque()
        self.start = 0
        self.end = 0

    def append(self, samples: np.ndarray) -> None:
        if samples.size:
            self._chunks.append(samples)
            self.end += samples.size

    def slice(self, begin: int, stop: int) -> np.ndarray:
        begin, stop = max(begin, self.start), min(stop, self.end)
        if stop <= begin:
            return np.zeros(0, dtype=np.float32)
        parts, position = [], self.start
        for chunk in self._chunks:
            chunk_end = position + chunk.size
            if chunk_end > begin and position < stop:
                parts.append(chunk[max(0, begin - position) : min(chunk.size, stop - position)])
            position = chunk_end
            if position >= stop:
                break
        return np.concatenate(parts)

    def forget_before(self, index: int) -> None:
        while self._chunks and self.start + self._chunks[0].size <= index:
            self.start += self._chunks.popleft().size

    def clear(self) -> None:
        self._chunks.clear()
        self.start = self.end


class Listener:
    def __init__(self, engine: Engine, sample_rate: int, language: str, send: Callable[[dict], None], partials: bool = True):
        self._engine = engine
        self._language = language
        self._send = send
        self._partials = partials
        self._resampler = audio.StreamResampler(sample_rate)
        self._odd_byte = b""
        self._log = AudioLog()
        self._tasks: set[asyncio.Task] = set()
        self._last_finish: asyncio.Task | None = None
        self._generation = 0  # a reset makes every result still being computed stale
        self._reset_state()

    def _reset_state(self) -> None:
        self._vad = VadState()
        self._vad_position = self._log.end  # where the next VAD window starts
        self._speaking = False
        self._run = 0  # speech windows in a row, while not speaking
        self._quiet = 0  # silence windows in a row, while speaking
        self._candidate = 0
        self._segment_start = 0
        self._speech_end = 0
        self._segment = 0  # segments since the stream began
        self._segment_starts: dict[int, int] = {}
        self._turn_start: int | None = None  # first sample of the turn still open (judged incomplete so far)
        self._next_partial = 0
        self._partial_running = False
        self._last_partial = ""
        self._speculation: tuple[int, int, asyncio.Task] | None = None  # (segment, speech end, transcription)

    # -- input ---------------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """PCM16 LE mono at the stream's sample rate, any length."""
        data = self._odd_byte + data
        self._odd_byte = data[len(data) - len(data) % 2 :]
        samples = self._resampler.push(audio.pcm16_to_float(data[: len(data) - len(data) % 2]))
        self._log.append(samples)
        while self._vad_position + WINDOW <= self._log.end:
            window = self._log.slice(self._vad_position, self._vad_position + WINDOW)
            self._on_window(self._vad_position, self._engine.vad.probability(self._vad, window))
            self._vad_position += WINDOW
        keep = self._log.end - KEPT
        if self._speaking:
            keep = min(keep, self._segment_start - PREROLL)
        self._log.forget_before(keep)

    def set_partials(self, on: bool) -> None:
        self._partials = on

    def reset(self) -> None:
        """Forget buffered audio and the speech in progress; the stream's clock goes on."""
        self._generation += 1
        self._log.clear()
        self._reset_state()

    async def close(self) -> None:
        self._generation += 1
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- voice activity ------------------------------------------------------------------------

    def _on_window(self, position: int, probability: float) -> None:
        end = position + WINDOW
        if not self._speaking:
            if probability >= SPEECH_THRESHOLD:
                if self._run == 0:
                    self._candidate = position
                self._run += 1
                if self._run >= START_WINDOWS:
                    self._start_segment(end)
            else:
                self._run = 0
            return
        if probability < SILENCE_THRESHOLD:
            self._quiet += 1
            if self._quiet == SPECULATE_WINDOWS:
                speech = self._log.slice(self._segment_start - PREROLL, end)
                self._speculation = (self._segment, self._speech_end, self._transcription(speech))
            if self._quiet >= STOP_WINDOWS:
                self._stop_segment(end)
            return
        self._quiet = 0
        self._speech_end = end
        if end - self._segment_start >= LONGEST_SEGMENT:
            self._stop_segment(end)
            self._candidate = end
            self._start_segment(end)
        elif self._partials and end >= self._next_partial and not self._partial_running and not self._engine.busy():
            self._next_partial = end + PARTIAL_EVERY
            self._spawn(self._partial(self._generation, self._segment, self._log.slice(self._segment_start - PREROLL, end), end))

    def _start_segment(self, now: int) -> None:
        self._speaking = True
        self._run = 0
        self._quiet = 0
        self._segment += 1
        self._segment_start = self._candidate
        self._segment_starts[self._segment] = self._candidate
        self._speech_end = now
        self._next_partial = self._candidate + PARTIAL_EVERY
        self._last_partial = ""
        if self._turn_start is None:
            self._turn_start = self._candidate
        self._send({"type": "speech_started", "at_ms": ms(self._candidate)})

    def _stop_segment(self, now: int) -> None:
        self._speaking = False
        self._quiet = 0
        self._send({"type": "speech_stopped", "at_ms": ms(self._speech_end)})
        speculation, self._speculation = self._speculation, None
        if speculation and speculation[:2] == (self._segment, self._speech_end):
            recognized = speculation[2]  # nothing was said since it started
        else:
            recognized = self._transcription(self._log.slice(self._segment_start - PREROLL, now))
        turn_from = max(self._turn_start if self._turn_start is not None else self._segment_start, now - 8 * audio.MODEL_RATE)
        turn_audio = self._log.slice(turn_from - TURN_PREROLL, now)
        self._last_finish = self._spawn(
            self._finish(self._generation, self._segment, recognized, turn_audio, self._segment_start, self._speech_end, self._last_finish)
        )

    # -- inference -----------------------------------------------------------------------------

    def _spawn(self, coroutine) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _transcription(self, samples: np.ndarray) -> asyncio.Task:
        task = self._spawn(self._engine.run(self._recognize, samples))
        # A transcription made stale by speech that resumed is never awaited: its failure is not news.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return task

    def _recognize(self, samples: np.ndarray) -> tuple[str, int]:
        began = time.perf_counter()
        text = self._engine.recognizer.transcribe(samples, self._language)
        return text, int(round((time.perf_counter() - began) * 1000))

    def _judge(self, samples: np.ndarray) -> tuple[float, int]:
        began = time.perf_counter()
        probability = self._engine.turn.probability(samples)
        return probability, int(round((time.perf_counter() - began) * 1000))

    async def _partial(self, generation: int, segment: int, samples: np.ndarray, end: int) -> None:
        self._partial_running = True
        try:
            text, _ = await self._engine.run(self._recognize, samples)
        except Exception:
            log.exception("partial transcript failed")
            return
        finally:
            self._partial_running = False
        if generation == self._generation and segment == self._segment and self._speaking and text and text != self._last_partial:
            self._last_partial = text
            self._send({"type": "partial", "text": text, "at_ms": ms(end)})

    async def _finish(self, generation, segment, recognized: asyncio.Task, turn_audio, start, end, previous: asyncio.Task | None) -> None:
        judged = asyncio.ensure_future(self._engine.run(self._judge, turn_audio)) if self._engine.turn else None
        try:
            text, stt_ms = await recognized
        except Exception:
            log.exception("transcript failed")
            text, stt_ms = "", 0
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        if generation != self._generation:
            return
        self._send({"type": "transcript", "text": text, "start_ms": ms(start), "end_ms": ms(end), "stt_ms": stt_ms})
        if judged is None:
            self._send({"type": "turn", "complete": True, "probability": None, "turn_ms": 0})
            self._close_turn(segment)
            return
        try:
            probability, turn_ms = await judged
        except Exception:
            log.exception("turn model failed")
            probability, turn_ms = None, 0
        if generation != self._generation:
            return
        complete = probability is None or probability >= 0.5
        self._send({"type": "turn", "complete": complete, "probability": probability, "turn_ms": turn_ms})
        if complete:
            self._close_turn(segment)

    def _close_turn(self, segment: int) -> None:
        """The turn ending with `segment` is over: the next turn starts with the segment after it, if any yet."""
        self._turn_start = self._segment_starts.get(segment + 1)
        for old in [k for k in self._segment_starts if k <= segment]:
            del self._segment_starts[old]
