"""Where the in-process model runs: onnxruntime's CUDA provider when it is installed and a GPU is visible."""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence

from rag.errors import UserError

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"


def gpu_visible(env: Mapping[str, str] | None = None, devices: Sequence[str] | None = None) -> bool:
    """An NVIDIA device node exists and CUDA_VISIBLE_DEVICES does not hide every GPU.

    Checked without initialising CUDA (which costs seconds and fails noisily where there is none)."""
    env = os.environ if env is None else env
    hidden = env.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and hidden.strip() in ("", "-1", "none", "NoDevFiles"):
        return False
    devices = glob.glob("/dev/nvidia[0-9]*") if devices is None else devices
    return bool(devices)


def choose_providers(device: str, available: Sequence[str], visible: bool) -> list[str]:
    """onnxruntime providers for PAPERCHAT_EMBEDDINGS__DEVICE: `cpu`, `cuda` (asked: fail clearly if it
    cannot be had), or `auto` (CUDA when onnxruntime-gpu is installed and a GPU is visible)."""
    has_cuda = CUDA in available
    if device == "cpu":
        return [CPU]
    if device == "cuda":
        if not has_cuda:
            raise UserError("PAPERCHAT_EMBEDDINGS__DEVICE=cuda, but this onnxruntime has no CUDA provider: "
                            "pip install onnxruntime-gpu (in place of onnxruntime), or set the device to auto or cpu")
        return [CUDA, CPU]
    if device != "auto":
        raise UserError(f"PAPERCHAT_EMBEDDINGS__DEVICE must be auto, cpu or cuda, not {device!r}")
    return [CUDA, CPU] if has_cuda and visible else [CPU]


def label(provider: str) -> str:
    """What `stats` and the UI say: 'CPU' or 'CUDA'."""
    return provider.removesuffix("ExecutionProvider")
