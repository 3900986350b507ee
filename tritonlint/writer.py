"""Writing a fixed file: all or nothing, mode kept."""

from __future__ import annotations

import os
import stat
import tempfile


def write_atomic(path: str, text: str, encoding: str) -> None:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tritonlint")
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)  # atomic on POSIX: readers see the old file or the new one
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
