"""Whisper (CTranslate2 int8 through faster-whisper) on one utterance at a time.

Whisper's encoder is trained on 30 s windows; a caller's utterance is a few seconds. `context="fit"`
encodes a shorter window (the utterance plus 1 s, at least SHORTEST_WINDOW; the encoder's positions cut
to it, as whisper.cpp's audio_ctx does) at a third of the 30 s window's cost; `context="full"` pads to
30 s like Whisper itself. Below about 10 s the model no longer sees enough silence after the speech to
end its text and repeats itself ("Yes. Yes. Yes."): measured on the caller set, a 5 s window had 3.5
times the word errors of 30 s, a 10 s one about the same (bench/speech/bench_speech.py, docs/performance.md).
"""

import math
from pathlib import Path

import numpy as np
from faster_whisper import WhisperModel
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_suppressed_tokens

RATE = 16_000
FRAMES_PER_SECOND = 100
LONGEST_DIRECT = 28 * RATE  # above this, faster-whisper's own 30 s windowing
_TOKENS_PER_SECOND = 8  # bound on decoding: fast speech is ~4 tokens a second
SHORTEST_WINDOW = 10  # seconds


class WhisperRecognizer:
    def __init__(self, path: Path, name: str, threads: int = 1, workers: int = 2, context: str = "fit", beam_size: int = 1):
        self.name = name
        self.context = context
        self.beam_size = beam_size
        self._model = WhisperModel(
            str(path), device="cpu", compute_type="int8", cpu_threads=threads, num_workers=workers, local_files_only=True
        )
        self.multilingual = self._model.model.is_multilingual
        self._tokenizers: dict[str, Tokenizer] = {}

    def languages(self) -> list[str]:
        return list(self._model.supported_languages) if self.multilingual else ["en"]

    def _tokenizer(self, language: str) -> Tokenizer:
        if language not in self._tokenizers:
            self._tokenizers[language] = Tokenizer(
                self._model.hf_tokenizer, self.multilingual, task="transcribe", language=language if self.multilingual else "en"
            )
        return self._tokenizers[language]

    def transcribe(self, samples: np.ndarray, language: str = "en") -> str:
        """Text of 16 kHz float audio (one utterance)."""
        if samples.size < RATE // 10:
            samples = np.pad(samples, (0, RATE // 10 - samples.size))
        if samples.size > LONGEST_DIRECT:
            segments, _ = self._model.transcribe(
                samples,
                language=language,
                beam_size=self.beam_size,
                condition_on_previous_text=False,
                without_timestamps=True,
                vad_filter=False,
            )
            return " ".join(segment.text.strip() for segment in segments).strip()
        tokenizer = self._tokenizer(language)
        seconds = 30 if self.context == "full" else min(30, max(SHORTEST_WINDOW, math.ceil(samples.size / RATE + 1.0)))
        padded = np.zeros(seconds * RATE, dtype=np.float32)
        padded[: samples.size] = samples
        features = self._model.feature_extractor(padded, padding=0)[:, : seconds * FRAMES_PER_SECOND]
        encoded = self._model.encode(features)
        prompt = tokenizer.sot_sequence + [tokenizer.no_timestamps]
        result = self._model.model.generate(
            encoded,
            [prompt],
            beam_size=self.beam_size,
            max_length=len(prompt) + min(220, int(samples.size / RATE * _TOKENS_PER_SECOND) + 10),
            suppress_blank=True,
            suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])),
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        return tokenizer.decode(tokens).strip()
