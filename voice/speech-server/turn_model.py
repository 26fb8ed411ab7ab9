"""Smart Turn v3.2 (ONNX, from PyPI pipecat-ai's wheel): is the caller done speaking, judged on the audio.

The model reads the last 8 s of the turn (Whisper log-mel features, zero-padded in front when shorter)
and answers the probability that the turn is complete: intonation and rhythm, not words, so a caller
who pauses mid-sentence ("my number is... ") is told apart from one who finished.
"""

from pathlib import Path

import numpy as np
import onnxruntime as ort

import whisper_features

SECONDS = 8
THRESHOLD = 0.5


class SmartTurn:
    name = "smart-turn-v3.2"

    def __init__(self, path: Path, threads: int = 1):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self._session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

    def probability(self, samples: np.ndarray) -> float:
        """Probability that the turn ending with these 16 kHz samples is complete."""
        last = samples[-SECONDS * whisper_features.RATE :]
        padded = np.concatenate([np.zeros(SECONDS * whisper_features.RATE - last.size, dtype=np.float32), last])
        features = whisper_features.log_mel(padded, SECONDS)[None, :, :]
        return float(self._session.run(None, {"input_features": features})[0][0, 0])
