"""Numba's cache of the kernels: a folder named for the kernels' sources, chosen before numba is imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline.systems import kernel_cache

ROOT = Path(__file__).resolve().parents[1]


def test_the_digest_follows_every_kernel_file(tmp_path, monkeypatch):
    (tmp_path / "systems" / "kernels").mkdir(parents=True)
    (tmp_path / "rating").mkdir()
    (tmp_path / "systems" / "kernels" / "ids.py").write_text("A = 1\n")
    (tmp_path / "rating" / "checks.py").write_text("from numba import njit\n")
    (tmp_path / "rating" / "plain.py").write_text("C = 1\n")
    monkeypatch.setattr(kernel_cache, "PACKAGE", tmp_path)
    monkeypatch.setattr(kernel_cache, "SYSTEMS", tmp_path / "systems")
    kernel_cache.sources_digest.cache_clear()
    try:
        digests = [kernel_cache.sources_digest()]
        for path, text in [("systems/kernels/ids.py", "A = 3\n"), ("rating/checks.py", "from numba import njit\n#\n")]:
            (tmp_path / path).write_text(text)
            kernel_cache.sources_digest.cache_clear()
            digests.append(kernel_cache.sources_digest())
        (tmp_path / "rating" / "plain.py").write_text("C = 2\n")  # no kernel in it
        kernel_cache.sources_digest.cache_clear()
        assert kernel_cache.sources_digest() == digests[-1]
        assert len(set(digests)) == 3
    finally:
        kernel_cache.sources_digest.cache_clear()


def test_a_folder_the_user_set_is_kept(monkeypatch):
    monkeypatch.delenv(kernel_cache.CACHE_VARIABLE, raising=False)
    assert kernel_cache.use_kernel_cache_dir() == str(kernel_cache.kernel_cache_dir())
    monkeypatch.setenv(kernel_cache.CACHE_VARIABLE, "/somewhere/of/the/user")
    assert kernel_cache.use_kernel_cache_dir() == "/somewhere/of/the/user"


def test_the_program_chooses_the_folder_before_numba_is_imported():
    """The program's module imports no numba, so that its entry can still set NUMBA_CACHE_DIR."""
    check = "import sys, pipeline.cli.main, pipeline.systems.kernel_cache; print('numba' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


HELPER = """from pipeline.systems.kernels import plain_njit


@plain_njit
def probe_value():
    return {value}
"""

CALLER = """from numba import njit

from pipeline.systems.kernels.probe_helper import probe_value


@njit(cache=True)
def probe():
    return probe_value() * 10
"""

CALL_THE_CALLER = """
from pipeline.systems.kernel_cache import use_kernel_cache_dir
use_kernel_cache_dir()
from pipeline.systems.probe import probe
print(probe())
"""


def run_the_caller(project: Path, user_cache: Path) -> subprocess.CompletedProcess:
    """The cached caller's result, in a new process of `project` whose user cache folder is `user_cache`."""
    env = {key: value for key, value in os.environ.items() if key != kernel_cache.CACHE_VARIABLE}
    env.update(XDG_CACHE_HOME=str(user_cache), NUMBA_DEBUG_CACHE="1", PYTHONPATH=str(project))
    return subprocess.run(
        [sys.executable, "-c", CALL_THE_CALLER], capture_output=True, text=True, env=env, cwd=project, timeout=300
    )


def test_a_change_to_a_called_kernel_file_compiles_its_callers_again(tmp_path):
    """Numba's own cache would keep the caller, whose file did not change, with the old helper in it."""
    project = tmp_path / "project"
    systems = project / "pipeline" / "systems"
    (systems / "kernels").mkdir(parents=True)
    for path in [
        "pipeline/__init__.py",
        "pipeline/systems/__init__.py",
        "pipeline/systems/kernel_cache.py",
        "pipeline/systems/kernels/__init__.py",
    ]:
        shutil.copyfile(ROOT / path, project / path)
    (systems / "probe.py").write_text(CALLER)
    (systems / "kernels" / "probe_helper.py").write_text(HELPER.format(value=1))
    user_cache = tmp_path / "cache"

    def result(run):
        assert run.returncode == 0, run.stderr
        return run.stdout.splitlines()[-1]

    first = run_the_caller(project, user_cache)
    assert result(first) == "10"
    again = run_the_caller(project, user_cache)
    assert result(again) == "10"
    assert any("data loaded" in line and "probe" in line for line in again.stdout.splitlines())  # the cache is used

    (systems / "kernels" / "probe_helper.py").write_text(HELPER.format(value=2))
    assert result(run_the_caller(project, user_cache)) == "20"
