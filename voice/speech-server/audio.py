"""PCM16 and float audio, resampling, and G.711 mu-law (the telephone's encoding, for the evaluation set)."""

import numpy as np
import soxr

MODEL_RATE = 16_000  # every model here (Silero, Whisper, Smart Turn) listens at 16 kHz


def pcm16_to_float(data: bytes) -> np.ndarray:
    """Little-endian PCM16 bytes -> float32 in [-1, 1)."""
    return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(samples: np.ndarray) -> np.ndarray:
    return (np.clip(samples, -1.0, 1.0) * 32767.0).round().astype("<i2")


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """Whole-signal resampling (soxr, high quality)."""
    if from_rate == to_rate or samples.size == 0:
        return samples.astype(np.float32, copy=False)
    return soxr.resample(samples.astype(np.float32, copy=False), from_rate, to_rate, quality="HQ").astype(np.float32)


def trim_leading_silence(samples: np.ndarray, rate: int, threshold: float = 0.01, keep_ms: int = 10) -> np.ndarray:
    """Drops the quiet before the first sample above `threshold`, but `keep_ms` of it (the voice's onset).

    Piper begins every sentence with 40-60 ms of near silence: before the first word a request asks for, it is
    only delay (a listener waits for it); between sentences the pause after the one before is kept.
    """
    loud = np.flatnonzero(np.abs(samples) > threshold)
    if loud.size == 0:
        return samples
    return samples[max(0, int(loud[0]) - rate * keep_ms // 1000) :]


class StreamResampler:
    """Chunk-by-chunk resampling of one stream to 16 kHz; the filter's state carries across chunks."""

    def __init__(self, from_rate: int):
        self._stream = None if from_rate == MODEL_RATE else soxr.ResampleStream(from_rate, MODEL_RATE, 1, dtype="float32", quality="HQ")

    def push(self, samples: np.ndarray) -> np.ndarray:
        if self._stream is None:
            return samples
        return self._stream.resample_chunk(samples)


_BIAS = 0x84
_CLIP = 32635


def mulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """int16 samples -> G.711 mu-law bytes (uint8)."""
    x = pcm.astype(np.int32)
    sign = (x < 0).astype(np.int32)
    magnitude = np.minimum(np.abs(x), _CLIP) + _BIAS
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return (~((sign << 7) | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8)


def mulaw_decode(codes: np.ndarray) -> np.ndarray:
    """G.711 mu-law bytes -> int16 samples."""
    b = (~codes.astype(np.int32)) & 0xFF
    exponent = (b >> 4) & 0x07
    magnitude = ((((b & 0x0F) << 3) + _BIAS) << exponent) - _BIAS
    return np.where(b & 0x80, -magnitude, magnitude).astype(np.int16)
