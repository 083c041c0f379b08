"""pyproject.toml builds a wheel (hatchling, no network: the backend comes from the lock) that
holds the generated modules, marks the package typed and accepts ranges of its dependencies
(a library must not pin: requirements.lock pins for the tests only)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from cubicle import __version__

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
    (wheel,) = tmp_path.glob(f"cubicle_sdk-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"cubicle_sdk-{__version__}.dist-info/METADATA").decode()
    for module in ("_models.py", "_operations.py", "_client_sync.py", "_client_async.py", "py.typed"):
        assert f"cubicle/{module}" in names
    assert not any(n.startswith("tests/") for n in names)
    assert "Name: cubicle-sdk" in metadata
    assert f"Version: {__version__}" in metadata
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    # No exact pin (the part before any `; extra == ...` marker).
    assert requires and not any("==" in line.split(";")[0] for line in requires), requires
    assert "Requires-Dist: httpx<1,>=0.27" in requires
    assert "Requires-Python: >=3.10" in metadata
