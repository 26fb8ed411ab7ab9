"""Piper text-to-speech (piper-tts, espeak-ng phonemes built in) with the en_US-joe-medium voice.

Text is cut into sentences first, so the first sentence can be heard while the next is synthesized.
"""

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnxruntime as ort
from piper.config import PiperConfig, SynthesisConfig
from piper.voice import PiperVoice

VOICE = "en_US-joe-medium"
_LONGEST_PIECE = 220  # characters: a longer sentence is cut at a comma or semicolon as well
# An end of sentence: . ! ? (and closing quotes or brackets) followed by a space; "Dr." and the like are not one.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "st.", "jr.", "sr.", "vs.", "etc.", "e.g.", "i.e.", "no.", "approx."}


def split_sentences(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        candidate = text[start : match.start()].strip()
        if candidate.split()[-1:] and candidate.split()[-1].lower() in _ABBREVIATIONS:
            continue
        if candidate:
            pieces.append(candidate)
        start = match.end()
    if text[start:].strip():
        pieces.append(text[start:].strip())
    out: list[str] = []
    for piece in pieces:
        while len(piece) > _LONGEST_PIECE:
            cut = max(piece.rfind(",", 0, _LONGEST_PIECE), piece.rfind(";", 0, _LONGEST_PIECE))
            if cut < 20:
                cut = piece.rfind(" ", 0, _LONGEST_PIECE)
            if cut < 20:
                break
            out.append(piece[: cut + 1].strip())
            piece = piece[cut + 1 :].strip()
        out.append(piece)
    return out


class Synthesizer:
    def __init__(self, voice: PiperVoice, name: str):
        self._voice = voice
        self.name = name
        self.sample_rate = voice.config.sample_rate
        self._length_scale = voice.config.length_scale or 1.0

    @classmethod
    def load(cls, models: Path, threads: int = 1) -> "Synthesizer":
        model = models / "tts" / f"{VOICE}.onnx"
        config = PiperConfig.from_dict(json.loads(model.with_suffix(".onnx.json").read_text(encoding="utf-8")))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
        return cls(PiperVoice(session=session, config=config), VOICE)

    def synthesize(self, sentence: str, speed: float = 1.0) -> np.ndarray:
        """Float audio at self.sample_rate for one sentence, peak at 0.9 (room for resampling)."""
        config = SynthesisConfig(length_scale=self._length_scale / speed, volume=0.9)
        chunks = [chunk.audio_float_array for chunk in self._voice.synthesize(sentence, syn_config=config)]
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)

    def sentences(self, text: str, speed: float = 1.0) -> Iterator[np.ndarray]:
        for sentence in split_sentences(text):
            yield self.synthesize(sentence, speed)
