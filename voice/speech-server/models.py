"""The model files under the models folder (written by install_models.py) and the engine that holds them."""

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recognizer import WhisperRecognizer
from synthesizer import Synthesizer
from turn_model import SmartTurn
from vad import SileroVad

log = logging.getLogger("speech")

DEFAULT_STT = "whisper-base"  # measured against whisper-tiny.en: docs/decisions/voice.md


def stt_models(models: Path) -> list[str]:
    """Recognizers installed under models/stt/ (one CTranslate2 Whisper folder each)."""
    folder = models / "stt"
    return sorted(p.name for p in folder.iterdir() if (p / "model.bin").exists()) if folder.is_dir() else []


@dataclass
class Engine:
    vad: SileroVad
    recognizer: WhisperRecognizer
    turn: SmartTurn | None
    voice: Synthesizer
    workers: int
    _executor: concurrent.futures.ThreadPoolExecutor = field(init=False)
    _running: int = 0

    def __post_init__(self) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="inference")

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Runs fn on an inference thread, so no stream waits for another's model."""
        self._running += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        finally:
            self._running -= 1

    def busy(self) -> bool:
        """Every inference thread is taken: optional work (partial transcripts) waits for a free one."""
        return self._running >= self.workers

    def names(self) -> dict[str, str | None]:
        return {"vad": self.vad.name, "stt": self.recognizer.name, "tts": self.voice.name, "turn": self.turn.name if self.turn else None}

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def load_engine(models: Path, stt: str, threads: int, workers: int, context: str) -> Engine:
    installed = stt_models(models)
    if stt not in installed:
        raise SystemExit(f"speech recognizer {stt!r} is not under {models / 'stt'} (installed: {', '.join(installed) or 'none'})")
    turn_file = models / "turn" / "smart-turn-v3.2-cpu.onnx"
    turn = SmartTurn(turn_file, threads) if turn_file.exists() else None
    if turn is None:
        log.warning("no turn model at %s: every turn is judged complete", turn_file)
    return Engine(
        vad=SileroVad(models / "vad" / "silero_vad.onnx"),
        recognizer=WhisperRecognizer(models / "stt" / stt, stt, threads=threads, workers=workers, context=context),
        turn=turn,
        voice=Synthesizer.load(models, threads),
        workers=workers,
    )
