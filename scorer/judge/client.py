"""The judge endpoint: where it is, the key, one chat request, and the retry loop around it.

The key comes only from the environment (OPENAI_API_KEY, or the variable `--api-key-env` names).
It lives in `Endpoint.api_key` (hidden from repr) and goes nowhere but the Authorization header:
every text memscope keeps from a failed request is scrubbed of it first, in case a server echoes it.

The openai client runs with max_retries=0: the retry loop is ours so that every attempt is counted
and the waits are known. Retried: 408, 409, 425, 429 and 5xx answers (waiting what Retry-After /
retry-after-ms ask, up to `max_wait`, else exponential backoff with jitter), timeouts, dropped
connections and unusable replies. A 401/403/404 stops the whole run (a wrong key, URL or model would
fail every row the same way); any other 4xx fails that row at once.

Settings a server may refuse: a 400 naming `temperature` as an unsupported value or parameter (what
OpenAI's reasoning models answer to `temperature: 0`) makes the client drop it for the rest of the
run and ask that row again at once; a 400 naming `max_tokens` as unsupported switches to
`max_completion_tokens`. Each change is noted once (`JudgeClient.notes`), never a row failed for it.
A reply cut by `finish_reason: length` is a failed row that says so, with the --max-tokens hint.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from scorer.errors import UserError
from scorer.judge.parse import ReplyError, Verdict, parse_reply
from scorer.load.jsonio import loads

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
LOCAL_DUMMY_KEY = "memscope-local"  # local servers want some bearer token, and ignore it
RETRY_STATUS = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
FATAL_STATUS = {401: "the key was refused", 403: "the key may not use this model or endpoint",
                404: "no such model or endpoint (check --model and --base-url)"}
MAX_REASON = 300
UNSUPPORTED_CODES = frozenset({"unsupported_value", "unsupported_parameter"})
DEFAULT_TEMPERATURE = 0.0


@dataclass(frozen=True)
class Sampling:
    """What each request asks of the model besides the prompt."""

    temperature: float | None = DEFAULT_TEMPERATURE  # None: the server's default
    max_tokens: int | None = None  # None: the server's default


class EndpointRefused(UserError):
    """An answer that every request would get (bad key, URL or model): the run stops."""


class RowFailed(Exception):
    """This prompt could not be judged; `reason` is recorded in its rows and reported."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # as given: used for requests only
    api_key: str = field(repr=False)
    key_env: str = DEFAULT_KEY_ENV

    @property
    def public_url(self) -> str:
        return public_url(self.base_url)

    def scrub(self, text: str) -> str:
        return scrub(text, self.api_key)


def scrub(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[key]")
    return text


def public_url(url: str) -> str:
    """The URL without user:password, query or fragment: what config.json and the cache record."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme.lower(), netloc.lower(), parts.path.rstrip("/"), "", ""))


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_endpoint(base_url: str | None, key_env: str | None, need_key: bool = True) -> Endpoint:
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--base-url must be an http(s) URL such as {DEFAULT_BASE_URL}, got {public_url(url)!r}")
    env = key_env or DEFAULT_KEY_ENV
    key = os.environ.get(env, "")
    if not key:
        if is_loopback(url) or not need_key:
            key = LOCAL_DUMMY_KEY
        else:
            raise UserError(f"no API key: set ${env} (or name another variable with --api-key-env) "
                            f"to judge with {public_url(url)}")
    return Endpoint(url, key, env)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff: float = 1.0  # first wait, doubled each retry
    max_wait: float = 60.0
    timeout: float = 60.0  # per request


@dataclass
class Stats:
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    outcomes: Counter = field(default_factory=Counter)  # "ok", "429", "500", "timeout", …
    waited: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "retries": self.retries, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "outcomes": dict(sorted(self.outcomes.items())),
                "seconds_waiting": round(self.waited, 3)}


@dataclass(frozen=True)
class Answer:
    verdict: Verdict
    attempts: int
    prompt_tokens: int
    completion_tokens: int


class _Adapt(Exception):
    """The server refused a setting the client has now changed: ask again at once."""


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, Retry-After seconds or HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            if float(ms) == float(ms):  # NaN would slip past every cap (and into the summary)
                return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
        return max(seconds, 0.0) if seconds == seconds else None
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class JudgeClient:
    """Asks one judge model, with retries. Use as `async with JudgeClient(...) as c:`."""

    def __init__(self, endpoint: Endpoint, model: str, policy: RetryPolicy, stats: Stats | None = None,
                 sampling: Sampling = Sampling()) -> None:
        self.endpoint, self.model, self.policy = endpoint, model, policy
        self.stats = stats or Stats()
        self.sampling = sampling
        self.send_temperature = sampling.temperature is not None
        self.tokens_field = "max_tokens"  # or max_completion_tokens, once a server refuses max_tokens
        self.notes: list[str] = []  # settings changed because the server refused them, each once
        self._client = None
        self._answered = False  # the server has answered at least once (any status)
        self._unreachable = 0  # requests that could not even connect, while it never has

    def body(self, prompt: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": prompt}]}
        if self.send_temperature:
            body["temperature"] = self.sampling.temperature
        if self.sampling.max_tokens is not None:
            body[self.tokens_field] = self.sampling.max_tokens
        return body

    def _refused_setting(self, err: Exception, sent: dict[str, Any]) -> bool:
        """A 400 refusing a setting we can do without: adapt (once for the run) and say so."""
        info = getattr(err, "body", None)
        info = info if isinstance(info, dict) else {}
        code, param = getattr(err, "code", None) or info.get("code"), getattr(err, "param", None) or info.get("param")
        message = str(info.get("message") or "")
        if code not in UNSUPPORTED_CODES:
            return False
        if "temperature" in sent and (param == "temperature" or (param is None and "'temperature'" in message)):
            if self.send_temperature:
                self.send_temperature = False
                self.notes.append(
                    f"{self.endpoint.public_url} refused temperature {self.sampling.temperature:g} for model "
                    f"{self.model!r} ({code}); asking without it (the server's default temperature)")
            return True
        if "max_tokens" in sent and param == "max_tokens":
            if self.tokens_field == "max_tokens":
                self.tokens_field = "max_completion_tokens"
                self.notes.append(f"{self.endpoint.public_url} refused max_tokens for model {self.model!r} "
                                  f"({code}); sending max_completion_tokens instead")
            return True
        return False

    async def __aenter__(self) -> "JudgeClient":
        from openai import AsyncOpenAI  # ~1 s to import: only when a request is due

        self._client = AsyncOpenAI(api_key=self.endpoint.api_key, base_url=self.endpoint.base_url,
                                   max_retries=0, timeout=self.policy.timeout)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._client is not None:
            await self._client.close()

    async def judge(self, prompt: str, levels: tuple[float, ...]) -> Answer:
        attempt = 0
        adapted = 0  # asked again at once because the server refused a setting (each at most once)
        while True:
            attempt += 1
            try:
                return await self._attempt(prompt, levels, attempt)
            except _Adapt:
                adapted += 1
                self.stats.retries += 1
                if adapted > 2:  # temperature and max_tokens: a third refusal is not ours to fix
                    raise RowFailed("the server keeps refusing the request's settings", attempt) from None
                continue
            except _Retry as r:
                if attempt > self.policy.max_retries:
                    raise RowFailed(f"{r.reason} (gave up after {attempt} attempts)", attempt) from None
                wait = r.wait if r.wait is not None else self._backoff(attempt)
                wait = min(wait, self.policy.max_wait)
                self.stats.retries += 1
                self.stats.waited += wait
                await asyncio.sleep(wait)

    def _never_reached(self, err: Exception) -> None:
        """Stop the run (EndpointRefused) once as many requests as one row may make have failed to
        connect at all and the server has never answered: nothing is listening there, and every row
        would spend its retries and backoff finding that out (minutes, for a few hundred rows)."""
        # the transport's own error (httpx's, or the client's vendored copy): by name, not by import
        if self._answered or type(err.__cause__).__name__ not in ("ConnectError", "ConnectTimeout"):
            return
        self._unreachable += 1
        if self._unreachable >= self.policy.max_retries + 1:
            raise EndpointRefused(self.endpoint.scrub(
                f"cannot reach {self.endpoint.public_url}: {self._unreachable} request(s) could not connect and the "
                f"server never answered ({type(err.__cause__).__name__}); nothing was judged by it — is the server "
                "up, and is --base-url right?"))

    def _backoff(self, attempt: int) -> float:
        # "equal jitter": between half and all of base·2^(n−1), so parallel retries spread out
        full = self.policy.backoff * 2 ** (attempt - 1)
        return full * random.uniform(0.5, 1.0)

    async def _attempt(self, prompt: str, levels: tuple[float, ...], attempt: int) -> Answer:
        import openai

        self.stats.requests += 1
        sent = self.body(prompt)
        try:
            # The client's own POST to /chat/completions with a plain body, read as bytes: the
            # same request as chat.completions.create, without its per-call type transforms and
            # model building, which cost more CPU than the rest of a request (~2.5 of ~4.5 ms).
            # httpx's timeout bounds each read, not the request: a server dripping a byte every
            # half second would never time out. wait_for bounds the whole request.
            body = await asyncio.wait_for(self._client.post(
                "/chat/completions", cast_to=bytes, options={"timeout": self.policy.timeout},
                body=sent),
                self.policy.timeout)
        except (openai.APITimeoutError, asyncio.TimeoutError):
            self.stats.outcomes["timeout"] += 1
            raise _Retry(f"no answer within {self.policy.timeout:g} s") from None
        except openai.APIConnectionError as err:
            self.stats.outcomes["connection"] += 1
            self._never_reached(err)
            raise _Retry(self._why("connection failed", err)) from None
        except openai.APIStatusError as err:
            self._answered = True
            status = err.status_code
            self.stats.outcomes[str(status)] += 1
            if status in FATAL_STATUS:
                raise EndpointRefused(f"{self.endpoint.public_url} answered {status} for model "
                                      f"{self.model!r}: {FATAL_STATUS[status]}"
                                      + (f" (key from ${self.endpoint.key_env})" if status in (401, 403) else "")) from None
            if status == 400 and self._refused_setting(err, sent):
                raise _Adapt() from None
            if status in RETRY_STATUS:
                raise _Retry(self._why(f"HTTP {status}", err), retry_after(getattr(err.response, "headers", None))) from None
            raise RowFailed(self._why(f"HTTP {status}", err), attempt) from None
        except (openai.OpenAIError, ValueError, TypeError, KeyError) as err:
            # a 200 whose body is not a chat completion (broken JSON, another API's shape)
            self.stats.outcomes["bad response"] += 1
            raise _Retry(self._why("unreadable response", err)) from None
        self._answered = True
        try:
            resp = loads(body)
            choice = resp["choices"][0]
            text = choice["message"]["content"]
            finish = choice.get("finish_reason")
            usage = resp.get("usage") or {}
            pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (ValueError, LookupError, TypeError, AttributeError):
            self.stats.outcomes["bad response"] += 1
            raise _Retry("the answer is not a chat completion") from None
        self.stats.prompt_tokens += pt
        self.stats.completion_tokens += ct
        try:
            verdict = parse_reply(text if isinstance(text, str) else None, levels, json_only=finish == "length")
        except ReplyError as err:
            if finish == "length":  # asking again would be cut at the same place: fail the row, say why
                self.stats.outcomes["truncated"] += 1
                limit = self.sampling.max_tokens
                raise RowFailed(
                    f"reply truncated (finish_reason: length) after {ct or 'an unknown number of'} completion "
                    f"tokens, before a usable verdict: "
                    + (f"raise --max-tokens (now {limit:,})" if limit is not None
                       else "the server's default token limit; set --max-tokens higher"), attempt) from None
            self.stats.outcomes["unusable reply"] += 1
            raise _Retry(self.endpoint.scrub(f"unusable reply: {err}")) from None
        self.stats.outcomes["ok"] += 1
        return Answer(Verdict(verdict.score, self.endpoint.scrub(verdict.reasoning)), attempt, pt, ct)

    def _why(self, what: str, err: Exception) -> str:
        detail = " ".join(str(getattr(err, "message", None) or err).split())
        text = f"{what}: {detail}" if detail and detail != what else what
        text = self.endpoint.scrub(text)
        return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


@dataclass(frozen=True)
class ModelList:
    """What GET {base}/models said: the ids, or None and why they could not be had."""

    ids: tuple[str, ...] | None
    why: str = ""
    status: int | None = None


def list_models(endpoint: Endpoint, timeout: float) -> ModelList:
    """The models the server lists (OpenAI's GET /models), for --dry-run. Never raises for the
    server's sake: a server without the endpoint, or unreachable, is an answer too."""
    import openai

    # the openai client the run itself uses (same proxies, TLS and headers), with no retries
    client = openai.OpenAI(api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0, timeout=timeout)
    try:
        body = client.get("/models", cast_to=bytes)
    except openai.APIStatusError as err:
        return ModelList(None, f"{endpoint.public_url}/models answered {err.status_code}", err.status_code)
    except (openai.APIConnectionError, openai.APITimeoutError) as err:
        return ModelList(None, endpoint.scrub(f"cannot reach {endpoint.public_url}/models: "
                                              f"{type(err).__name__}")[:MAX_REASON])
    finally:
        client.close()
    try:
        ids = tuple(str(m["id"]) for m in loads(body)["data"])
    except (ValueError, LookupError, TypeError):
        return ModelList(None, f"{endpoint.public_url}/models did not answer with a model list", 200)
    return ModelList(ids, status=200)
