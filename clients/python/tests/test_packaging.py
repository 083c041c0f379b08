"""pyproject.toml builds a wheel (hatchling, no network: the backend comes from the lock) that
holds the generated modules, marks the package typed and pins its dependencies."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_builds_with_the_generated_modules(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("cubicle-0.1.0-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read("cubicle-0.1.0.dist-info/METADATA").decode()
    for module in ("_models.py", "_operations.py", "_client_sync.py", "_client_async.py", "py.typed"):
        assert f"cubicle/{module}" in names
    assert not any(n.startswith("tests/") for n in names)
    assert "Requires-Dist: httpx==0.28.1" in metadata
    assert "Requires-Python: >=3.10" in metadata
