"""`memscope score` starts no BLAS thread pool (issue 19): every product runs on one thread anyway
(scorer.metrics.resample.one_blas_thread), and OpenBLAS's pool threads spin-wait on start, after
every fork and at every change of the limit. A value the user set is kept."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.paths import DEMO, REPO

# Scores the demo through the command line's main (no quick exit), then prints the thread count of
# each BLAS library loaded in the process, and the environment's setting.
SCRIPT = ("import os, sys\n"
          "from scorer.cli import main\n"
          "assert main(sys.argv[1:]) == 0\n"
          "from threadpoolctl import threadpool_info\n"
          "print([i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'],"
          " os.environ.get('OPENBLAS_NUM_THREADS'))\n")


def _score(tmp_path, **env) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, "score", str(DEMO), "--runs", str(DEMO / "runs"),
                           "--format", "json", "--out", str(tmp_path / "rep")],
                          capture_output=True, text=True, cwd=REPO, timeout=300, env={**clean, **env})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS starts one thread whatever we do")
def test_score_runs_blas_on_one_thread_from_the_start(tmp_path):
    assert _score(tmp_path) == "[1] 1"


def test_a_thread_count_the_user_set_is_kept(tmp_path):
    assert _score(tmp_path, OPENBLAS_NUM_THREADS="2").endswith(" 2")
