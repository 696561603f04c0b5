"""A small OpenAI-compatible chat-completions server for the judge's tests and benchmark.

Standard library only: ThreadingHTTPServer on 127.0.0.1, an ephemeral port, HTTP/1.1 keep-alive.
What it does with a request is scripted by markers in the prompt text (the prediction carries them):

    [[script:429@1,500,ok]]   the 1st request for this prompt answers 429 with Retry-After: 1, the
                              2nd 500, the 3rd and later "ok" (the last step repeats)
    [[score:0.75]]            the score an answering step gives (default: a hash of model + prompt)

Steps: ok (a bare JSON object), prose (JSON inside prose), fenced (```json … ```), malformed (no
score at all), badscore (0.3: off every level), garbage (a 200 whose JSON body is broken),
429[@seconds], 500, hang (sleep past any short
client timeout, then answer), drip (answer ok, one byte every `drip_seconds`, so that no single
read ever times out), drop (close the connection without a word), 401, length (finish_reason "length" with an empty
content, as a reasoning model that spent its tokens thinking), cut (finish_reason "length" with the
JSON cut after the score's first digit).
A reasoning-model server: `reject_temperature` answers any request carrying a temperature other
than 1 with OpenAI's 400 unsupported_value body (REASONING_TEMPERATURE_ERROR); `reject_max_tokens`
answers max_tokens with the 400 unsupported_parameter body. `models`, when set, is what GET
/v1/models lists (otherwise that route is a 404, as on servers without it); GETs are in `gets`.
`server.queue` steps, when present, are used before any marker. Every request is logged; GET
/v1/_stats answers {"requests": n} (for a server in another process: `python tests/judge_server.py
[latency]` prints its URL and serves until killed).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
_SCRIPT = re.compile(r"\[\[script:([^\]]*)\]\]")
_SCORE = re.compile(r"\[\[score:([^\]]*)\]\]")

# OpenAI's answer to temperature 0 from a reasoning model (gpt-5, o1, o3 …), as reported in e.g.
# github.com/gabrii/Cursor-Azure-GPT-5/issues/33 and johny-b/llmcomp/issues/69
def reasoning_temperature_error(value) -> dict:
    return {"error": {
        "message": f"Unsupported value: 'temperature' does not support {value} with this model. "
                   "Only the default (1) value is supported.",
        "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}


MAX_TOKENS_ERROR = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}


@dataclass(frozen=True)
class Logged:
    at: float
    model: str
    prompt: str
    authorization: str
    temperature: object
    step: str
    sent: tuple = ()  # the body's keys
    max_tokens: object = None  # max_tokens or max_completion_tokens, whichever came


def default_score(model: str, prompt: str) -> float:
    h = hashlib.sha256(f"{model}\n{prompt}".encode()).digest()
    return LEVELS[h[0] % len(LEVELS)]


class JudgeServer:
    def __init__(self, latency: float = 0.0, hang_seconds: float = 3.0,
                 score_fn: Callable[[str, str], float] = default_score, drip_seconds: float = 0.5) -> None:
        self.latency, self.hang_seconds, self.score_fn = latency, hang_seconds, score_fn
        self.drip_seconds = drip_seconds
        self.log: list[Logged] = []
        self.queue: list[str] = []
        self.reject_temperature = False
        self.reject_max_tokens = False
        self.models: list[str] | None = None
        self.gets: list[tuple[str, str]] = []  # (path, Authorization)
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def __enter__(self) -> "JudgeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "JudgeServer":
        server = self

        class Handler(_Handler):
            owner = server

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default 5 drops SYNs from a burst of connections (1 s stalls)

            def handle_error(self, request, client_address) -> None:
                # a client that cancels or times out resets the connection mid-request: expected
                # here, and the default handler would print a traceback into the tests' stderr
                pass

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- what happened
    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.log)

    def requests_for(self, needle: str) -> list[Logged]:
        with self._lock:
            return [r for r in self.log if needle in r.prompt]

    def reset(self) -> None:
        with self._lock:
            self.log.clear()
            self._seen.clear()

    # -- scripting
    def next_step(self, prompt: str) -> str:
        with self._lock:
            if self.queue:
                return self.queue.pop(0)
            n = self._seen.get(prompt, 0)
            self._seen[prompt] = n + 1
        m = _SCRIPT.search(prompt)
        steps = [s.strip() for s in m.group(1).split(",")] if m else ["ok"]
        return steps[min(n, len(steps) - 1)]

    def score_for(self, model: str, prompt: str) -> float:
        m = _SCORE.search(prompt)
        return float(m.group(1)) if m else self.score_fn(model, prompt)


class _Handler(BaseHTTPRequestHandler):
    owner: JudgeServer
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: with Nagle on, the client's delayed ACK adds ~40 ms
    # to every answer (real servers such as uvicorn set TCP_NODELAY too)
    disable_nagle_algorithm = True

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        """GET …/_stats: the request count, for a server running in another process (bench)."""
        if self.path.rstrip("/").endswith("/_stats"):
            return self._send(200, {"requests": self.owner.requests})
        with self.owner._lock:
            self.owner.gets.append((self.path, self.headers.get("Authorization", "")))
        if self.path.rstrip("/").endswith("/v1/models") and self.owner.models is not None:
            return self._send(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in self.owner.models]})
        self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        srv = self.owner
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        model = str(body.get("model", ""))
        refused = None
        if srv.reject_temperature and "temperature" in body and body["temperature"] != 1:
            refused = reasoning_temperature_error(body["temperature"])
        elif srv.reject_max_tokens and "max_tokens" in body:
            refused = MAX_TOKENS_ERROR
        step = "refused" if refused else srv.next_step(prompt)
        with srv._lock:
            srv.log.append(Logged(time.time(), model, prompt, self.headers.get("Authorization", ""),
                                  body.get("temperature"), step, tuple(body),
                                  body.get("max_tokens", body.get("max_completion_tokens"))))
        if srv.latency:
            time.sleep(srv.latency)
        if refused:
            return self._send(400, refused)
        kind, _, arg = step.partition("@")
        if kind == "429":
            return self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                              {"Retry-After": arg or "0"})
        if kind in ("500", "401"):
            return self._send(int(kind), {"error": {"message": f"scripted {kind}"}})
        if kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if kind == "garbage":  # a 200 that claims JSON and is not
            return self._send_raw(200, b'{"choices": [ not json')
        if kind == "hang":
            time.sleep(srv.hang_seconds)
            kind = "ok"
        drip = kind == "drip"
        if drip:
            kind = "ok"
        score = srv.score_for(model, prompt)
        obj = json.dumps({"score": score, "reasoning": f"scripted {kind} answer"})
        text = {
            "ok": obj,
            "prose": f"Let me compare the two answers.\n{obj}\nThat is my verdict.",
            "fenced": f"```json\n{obj}\n```",
            "malformed": "The answer looks about right to me, I would say mostly correct.",
            "badscore": json.dumps({"score": 0.3, "reasoning": "between levels"}),
            "length": "", "cut": "",
        }.get(kind)
        if text is None:
            return self._send(400, {"error": {"message": f"unknown scripted step {step!r}"}})
        finish = "stop"
        if kind in ("length", "cut"):
            # cut: the reply stops after the score's first digit ({"score": 0 of 0.75)
            text, finish = ("" if kind == "length" else obj[: obj.index(":") + 3]), "length"
        (self._send_drip if drip else self._send)(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 20, "total_tokens": len(prompt) // 4 + 20},
        })

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_drip(self, status: int, payload: dict) -> None:
        """Headers at once, then the body one byte every `drip_seconds`."""
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(self.owner.drip_seconds)
        except OSError:
            self.close_connection = True

    def _send_raw(self, status: int, data: bytes, headers: dict | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout) and closed the socket
            self.close_connection = True


def main() -> None:
    """`python tests/judge_server.py [latency]`: serve until Ctrl-C, for trying the CLI by hand."""
    import sys

    with JudgeServer(latency=float(sys.argv[1]) if len(sys.argv) > 1 else 0.0) as s:
        print(s.url, flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
