"""The Label Studio round trip against a real Label Studio server (issue 18).

label-studio lives in its own virtualenv (its pins must not touch ours): .ci/run makes it and sets
MEMSCOPE_LABEL_STUDIO to its `label-studio` executable. The test starts it on 127.0.0.1 (free
port, temporary data dir, admin user and token from LABEL_STUDIO_* variables), creates Label Studio
users for the demo's annotators, a project with the labeling config memscope writes, imports the
demo's export through the REST API, exports it again, imports that into a fresh memscope database
and checks that every event comes back as it was. Outside CI it is skipped only when label-studio
is not installed; in CI (CI=true) a missing label-studio fails.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from scorer.cli import main as cli_main
from scorer.store import Store

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "fixtures" / "demo"
TOKEN = "memscope0test0token0for0label0studio"
ADMIN = "admin@memscope.test"
START_TIMEOUT_S = 600  # the first start migrates a new database: minutes on a loaded 2-core machine


def _executable() -> str | None:
    given = os.environ.get("MEMSCOPE_LABEL_STUDIO")
    if given:
        return given if Path(given).is_file() else None
    return shutil.which("label-studio") or next(
        (str(p) for p in [Path("/opt/ls-venv/bin/label-studio")] if p.is_file()), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabelStudio:
    def __init__(self, base: str):
        self.base = base

    def call(self, method: str, path: str, body: object = None, raw: bool = False) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Token {TOKEN}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=300) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as err:
            raise AssertionError(f"{method} {path}: HTTP {err.code}: {err.read()[:2000]!r}") from None
        return payload if raw else json.loads(payload)


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory: pytest.TempPathFactory):
    exe = _executable()
    if exe is None:
        if os.environ.get("CI") == "true":
            pytest.fail("label-studio is not installed: .ci/run must create its virtualenv "
                        "and set MEMSCOPE_LABEL_STUDIO")
        pytest.skip("label-studio is not installed (set MEMSCOPE_LABEL_STUDIO to its executable)")
    data_dir = tmp_path_factory.mktemp("label-studio")
    port = _free_port()
    env = {**os.environ,
           "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
           "LABEL_STUDIO_USERNAME": ADMIN, "LABEL_STUDIO_PASSWORD": "memscope-test-password",
           "LABEL_STUDIO_USER_TOKEN": TOKEN, "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
           "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true", "LATEST_VERSION_CHECK": "false",
           "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
           "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(DEMO.parent)}
    log = data_dir / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([exe, "start", "--no-browser", "--internal-host", "127.0.0.1", "-p", str(port),
                                 "--data-dir", str(data_dir)], env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=data_dir)
    ls = LabelStudio(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"label-studio exited ({proc.returncode}):\n{log.read_text(errors='replace')[-3000:]}")
            try:
                ls.call("GET", "/api/current-user/whoami")
                break
            except (AssertionError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"label-studio did not answer in {START_TIMEOUT_S} s:\n"
                                f"{log.read_text(errors='replace')[-3000:]}")
                time.sleep(2)
        yield ls
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _events(db: Path) -> list[dict]:
    with Store(db, create=False) as s:
        return sorted((ev.record() for ev in s.events()), key=lambda r: json.dumps(r, sort_keys=True))


def test_round_trip_through_a_real_label_studio(label_studio: LabelStudio, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    ls = label_studio
    # Label Studio users for the demo's annotators; memscope's export names them by e-mail.
    annotators = ("ann1", "ann2", "ann3")
    ids = {}
    for name in annotators:
        user = ls.call("POST", "/api/users/", {"email": f"{name}@memscope.test", "username": name,
                                               "first_name": name})
        ids[name] = user["id"]
    users = tmp_path / "users.json"
    users.write_text(json.dumps({n: f"{n}@memscope.test" for n in annotators}))

    src = tmp_path / "demo.db"
    assert cli_main(["annotations", "import", str(DEMO / "annotations.jsonl"), "--db", str(src)]) == 0
    tasks_file, config = tmp_path / "tasks.json", tmp_path / "config.xml"
    assert cli_main(["annotations", "export", "--db", str(src), "--format", "labelstudio",
                     "--bench", str(DEMO), "--runs", str(DEMO / "runs"), "--out", str(tasks_file),
                     "--config-out", str(config), "--media-url", f"/data/local-files/?d={DEMO.name}/",
                     "--users", str(users)]) == 0
    capsys.readouterr()
    original = _events(src)
    tasks = json.loads(tasks_file.read_text())
    n_annotations = sum(len(t["annotations"]) for t in tasks)

    project = ls.call("POST", "/api/projects/", {"title": "memscope demo", "label_config": config.read_text()})
    imported = ls.call("POST", f"/api/projects/{project['id']}/import", tasks)
    assert (imported["task_count"], imported["annotation_count"]) == (len(tasks), n_annotations)
    back = ls.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON&download_all_tasks=true", raw=True)
    exported = tmp_path / "from-label-studio.json"
    exported.write_bytes(back)
    ls_tasks = json.loads(back)
    assert len(ls_tasks) == len(tasks)
    assert sum(len(t["annotations"]) for t in ls_tasks) == n_annotations

    # Label Studio kept who judged what: each annotation is its annotator's Label Studio user.
    for t in ls_tasks:
        for ann in t["annotations"]:
            rids = {r["id"] for r in ann["result"]}
            owners = {rec["annotator"] for rid, rec in t["data"]["memscope"]["events"].items() if rid in rids}
            assert len(owners) == 1 and ann["completed_by"] == ids[owners.pop()]
    # Media resolve through Label Studio's local-files serving (a local storage on the benchmark
    # folder grants it), byte for byte: an image, a video and an audio clip.
    ls.call("POST", "/api/storages/localfiles/", {"project": project["id"], "path": str(DEMO),
                                                  "title": "memscope demo media", "use_blob_urls": False})
    for key in ("images", "video", "audio"):
        url = next(t["data"][key] for t in ls_tasks if t["data"][key])
        url = url[0] if key == "images" else url
        assert ls.call("GET", url, raw=True) == (DEMO.parent / url.split("?d=", 1)[1]).read_bytes(), url

    fresh = tmp_path / "fresh.db"
    assert cli_main(["annotations", "import", str(exported), "--format", "labelstudio", "--db", str(fresh),
                     "--users", str(users)]) == 0
    first = capsys.readouterr().out
    assert cli_main(["annotations", "import", str(exported), "--format", "labelstudio", "--db", str(fresh)]) == 0
    second = capsys.readouterr().out
    assert f"{len(original)} added" in first and "0 added" in second, (first, second)
    back_events = _events(fresh)
    missing = [e for e in original if e not in back_events]
    extra = [e for e in back_events if e not in original]
    with capsys.disabled():
        print(f"\nLabel Studio round trip: {len(original)} event(s) out, {len(ls_tasks)} task(s) and "
              f"{n_annotations} annotation(s) in Label Studio, {len(back_events)} event(s) back, "
              f"{len(missing) + len(extra)} difference(s)")
    assert not missing and not extra
    kinds = {e["kind"] for e in back_events}
    assert kinds == {"verdict", "label", "oracle", "note", "flag"}
    assert {e["payload"]["rotation"] for e in back_events if e["kind"] == "oracle"} == {0, 1, 2, 3}

    # An act made in Label Studio itself comes back as that user's, at Label Studio's time.
    verdict_task = next(t for t in ls_tasks if t["data"]["memscope"]["form"] == "verdict")
    ls.call("POST", f"/api/tasks/{verdict_task['id']}/annotations/", {"result": [
        {"id": "made-in-ls", "from_name": "verdict", "to_name": "prediction", "type": "choices",
         "value": {"choices": ["borderline"]}}]})
    again = tmp_path / "again.json"
    again.write_bytes(ls.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON&download_all_tasks=true",
                              raw=True))
    assert cli_main(["annotations", "import", str(again), "--format", "labelstudio", "--db", str(fresh)]) == 0
    assert "1 added" in capsys.readouterr().out
    (new,) = [e for e in _events(fresh) if e not in original]
    meta = verdict_task["data"]["memscope"]
    assert (new["annotator"], new["kind"], new["item_id"], new["mode"], new["run"], new["payload"]) == (
        f"labelstudio:{ls.call('GET', '/api/current-user/whoami')['id']}", "verdict", meta["item_id"],
        meta["mode"], meta["run"], {"verdict": "borderline"})
