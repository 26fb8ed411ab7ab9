"""Silero VAD (ONNX, from PyPI silero-vad's wheel): speech probability per 32 ms window at 16 kHz."""

from pathlib import Path

import numpy as np
import onnxruntime as ort

WINDOW = 512  # samples at 16 kHz: 32 ms, the model's fixed window
_CONTEXT = 64  # the model reads the last 64 samples of the previous window before each window


class VadState:
    """One stream's recurrent state; the model itself is shared by every stream."""

    def __init__(self) -> None:
        self.state = np.zeros((2, 1, 128), dtype=np.float32)
        self.context = np.zeros(_CONTEXT, dtype=np.float32)


class SileroVad:
    name = "silero-vad-6"

    def __init__(self, path: Path):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        self._rate = np.array(16000, dtype=np.int64)

    def probability(self, stream: VadState, window: np.ndarray) -> float:
        """Speech probability of one WINDOW-sample window (float32 at 16 kHz); advances the stream's state."""
        x = np.concatenate([stream.context, window])[None, :]
        out, stream.state = self._session.run(None, {"input": x, "state": stream.state, "sr": self._rate})
        stream.context = window[-_CONTEXT:].copy()
        return float(out[0, 0])
