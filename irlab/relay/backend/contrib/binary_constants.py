"""Large constants (a network's weights) in generated C without printing them: the bytes go
to a file named by their hash and the assembler embeds them (``.incbin``) in the library's
read-only data, so the C compiler never parses millions of literals."""

from __future__ import annotations

import hashlib
import os
import tempfile

import numpy as np


def _blob_folder() -> str:
    from irlab.target.llvm_jit import cache_dir

    root = cache_dir()
    folder = os.path.join(root, "c", "constants") if root else os.path.join(
        tempfile.gettempdir(), "irlab-constants")
    os.makedirs(folder, exist_ok=True)
    return folder


def write_blob(data: bytes) -> str:
    """The path of a file holding ``data`` (content-addressed, written once, atomically)."""
    path = os.path.join(_blob_folder(), hashlib.sha256(data).hexdigest() + ".bin")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    return path


def embedded_array(name: str, c_type: str, array: np.ndarray) -> str:
    """C declaring ``const c_type name[]`` whose contents are ``array``'s bytes (row-major,
    64-byte aligned), embedded from a file by the assembler."""
    data = np.ascontiguousarray(array).tobytes()
    path = write_blob(data).replace("\\", "\\\\").replace('"', '\\"')
    size = len(data)
    blob = os.path.basename(path)
    return (f"/* {name}: {array.dtype}{list(array.shape)}, {size} bytes from {blob} */\n"
            f"__asm__(\".section .rodata\\n.balign 64\\n.globl {name}\\n.hidden {name}\\n"
            f".type {name}, @object\\n.size {name}, {size}\\n{name}:\\n"
            f".incbin \\\"{path}\\\"\\n.previous\\n\");\n"
            f"extern const {c_type} {name}[{max(array.size, 1)}] "
            f"__attribute__((visibility(\"hidden\")));")


__all__ = ["embedded_array", "write_blob"]
