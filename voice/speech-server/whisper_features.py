"""Whisper's log-mel features in numpy, as the Smart Turn model was trained on them.

The same numbers as Hugging Face's WhisperFeatureExtractor(chunk_length=8) with do_normalize=True: the
waveform scaled to zero mean and unit variance, a centred 400-point STFT with a periodic Hann window
every 160 samples, 80 Slaney mel filters from 0 to 8 kHz, log10, floored 8 below the maximum, then
(x + 4) / 4. Written here so the turn model needs neither transformers nor torch.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

RATE = 16_000
N_FFT = 400
HOP = 160
N_MELS = 80


def _hz_to_mel(freq: np.ndarray) -> np.ndarray:
    freq = np.asarray(freq, dtype=np.float64)
    linear = 3.0 * freq / 200.0
    logarithmic = 15.0 + np.log(np.maximum(freq, 1e-10) / 1000.0) * (27.0 / np.log(6.4))
    return np.where(freq >= 1000.0, logarithmic, linear)


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    mels = np.asarray(mels, dtype=np.float64)
    linear = 200.0 * mels / 3.0
    logarithmic = 1000.0 * np.exp((np.log(6.4) / 27.0) * (mels - 15.0))
    return np.where(mels >= 15.0, logarithmic, linear)


def _mel_filters() -> np.ndarray:
    """(N_FFT // 2 + 1, N_MELS) triangular filters, each normalized to unit area (Slaney)."""
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(RATE / 2), N_MELS + 2))
    bins = np.linspace(0, RATE // 2, N_FFT // 2 + 1)
    slopes = edges[None, :] - bins[:, None]
    widths = np.diff(edges)
    down = -slopes[:, :-2] / widths[:-1]
    up = slopes[:, 2:] / widths[1:]
    filters = np.maximum(0.0, np.minimum(down, up))
    return filters * (2.0 / (edges[2:] - edges[:-2]))[None, :]


_FILTERS = _mel_filters()
_WINDOW = np.hanning(N_FFT + 1)[:-1]  # periodic Hann


def log_mel(samples: np.ndarray, seconds: int = 8) -> np.ndarray:
    """Features (N_MELS, seconds * 100) of 16 kHz audio, zero-padded at the end or cut to `seconds`."""
    length = seconds * RATE
    x = np.zeros(length, dtype=np.float32)
    x[: min(length, samples.size)] = samples[:length]
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    padded = np.pad(x.astype(np.float64), N_FFT // 2, mode="reflect")
    frames = sliding_window_view(padded, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _WINDOW, axis=-1)) ** 2
    mel = np.log10(np.maximum(1e-10, power @ _FILTERS)).T[:, :-1]
    mel = np.maximum(mel, mel.max() - 8.0)
    return ((mel + 4.0) / 4.0).astype(np.float32)
