"""The install path a user takes: build the wheel, install it ALONE in a fresh venv (its
dependencies from the package index, through pip's cache), and run this package's README quick
start with that venv's Python against the live Cubicle, outside the source tree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start() -> str:
    """The ```python block after the marker in clients/python/README.md."""
    text = (ROOT / "README.md").read_text()
    marker = text.index("<!-- quickstart")
    match = re.search(r"```python\n(.*?)```", text[marker:], re.S)
    assert match, "clients/python/README.md: no ```python block after the quickstart marker"
    return match.group(1)


def install_command() -> str:
    """The `pip install ...` line the README tells a user to run."""
    match = re.search(r"^pip install (\S+)$", (ROOT / "README.md").read_text(), re.M)
    assert match, "clients/python/README.md: no `pip install <name>` line"
    return match.group(1)


def test_wheel_installs_alone_and_the_readme_quick_start_runs(tmp_path, pool, endpoint, admin_key):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
        + ["-w", str(tmp_path / "dist"), str(ROOT)],
        check=True,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    name = install_command()
    assert wheel.name.startswith(name.replace("-", "_") + "-")

    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    (tmp_path / "quickstart.py").write_text(quick_start())
    # As a user turns on the SDK's request log: the "cubicle" logger at DEBUG, to stderr.
    (tmp_path / "run.py").write_text(
        "import logging, runpy\n"
        "logging.basicConfig()\n"
        "logging.getLogger('cubicle').setLevel(logging.DEBUG)\n"
        "runpy.run_path('quickstart.py', run_name='__main__')\n"
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CUBICLE_API_KEY": admin_key,
        "CUBICLE_URL": endpoint,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    ran = subprocess.run(
        [python, "run.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"^clm_\w+ hello from the desktop$", ran.stdout, re.M), ran.stdout
    assert re.search(r"^screenshot: \d{3,} bytes$", ran.stdout, re.M), ran.stdout
    assert "no such pool: req_" in ran.stdout, ran.stdout
    # Requests are logged, the key is not.
    claim_line = r"POST http://127\.0\.0\.1:\d+/v1/pools/default/claims -> 20[12]"
    assert re.search(claim_line, ran.stderr), ran.stderr
    assert admin_key not in ran.stdout + ran.stderr

    probe = "import cubicle, importlib.metadata as m; "
    probe += f"print(cubicle.__file__, cubicle.__version__, m.version({name!r}))"
    where = subprocess.run(
        [python, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where[0].startswith(str(tmp_path / "venv")), where  # the installed copy, not src/
    assert where[1] == where[2]
