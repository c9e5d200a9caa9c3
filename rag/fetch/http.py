"""The one polite HTTP client every service module uses: a contact in the User-Agent, a pause between
requests per service, backoff on 429 / 503 (Retry-After honoured), and failures said in one line.

Plain httpx (already installed with gradio): each service is one or two GET endpoints, so a client
library would add a dependency and hide the paging, pacing and retries a resumable fetch has to own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import httpx

from rag.errors import UserError, public_url, redact, register_secret
from rag.settings import FetchSettings

# Pause between two requests to one service (seconds, scaled by PAPERCHAT_FETCH__PACE): arXiv asks for 3 s;
# NCBI allows 3 requests/s without a key; Semantic Scholar's shared pool is 1 request/s.
PAUSE = {"openalex": 0.11, "arxiv": 3.0, "s2": 1.0, "pubmed": 0.34, "crossref": 0.1}
RETRY = {429, 500, 502, 503, 504}
MAX_WAIT = 60.0


class Offline(UserError):
    """The service could not be reached at all (no network, or it is down)."""


class ServiceFailed(UserError):
    """The service answered, but not with what was asked for, even after retries."""


def offline_message(service: str) -> str:
    return (f"fetch needs the network: {service} could not be reached; files ingest offline "
            f"(`paperchat ingest FILE`)")


class Polite:
    """GETs to one service, paced and retried. `sleep` is injectable so tests replay without waiting."""

    def __init__(self, service: str, settings: FetchSettings, headers: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] = time.sleep, transport: httpx.BaseTransport | None = None):
        self.service, self.settings, self.sleep = service, settings, sleep
        agent = "paperchat (+https://pypi.org/project/paperchat)" + (f" mailto:{settings.email}" if settings.email else "")
        for key in (settings.openalex_api_key, settings.s2_api_key, settings.ncbi_api_key):
            register_secret(key.get_secret_value() if key else None)
        self.client = httpx.Client(timeout=settings.timeout, headers={"User-Agent": agent, **(headers or {})},
                                   transport=transport, follow_redirects=True)
        self.pause = PAUSE.get(service, 0.5) * settings.pace
        self.last = 0.0
        self.retried: list[int] = []  # status codes retried (429, 503, …), for the summary line

    def close(self) -> None:
        self.client.close()

    def get(self, url: str, params: Mapping[str, str | int] | None = None, ok_missing: bool = False) -> httpx.Response | None:
        """The response (None for a 404 when `ok_missing`). Raises Offline when the service cannot be reached
        after the retries, ServiceFailed on any other failure, each as one line."""
        wait = self.settings.backoff
        for attempt in range(self.settings.retries + 1):
            gap = self.last + self.pause - time.monotonic()
            if gap > 0:
                self.sleep(gap)
            self.last = time.monotonic()
            try:
                r = self.client.get(url, params=params)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt >= min(1, self.settings.retries):  # unreachable twice: say so rather than linger
                    raise Offline(offline_message(self.service_name())) from exc
                self.sleep(min(wait, MAX_WAIT))
                wait *= 2
                continue
            except httpx.HTTPError as exc:  # read timeout, dropped connection mid-answer
                if attempt == self.settings.retries:
                    raise ServiceFailed(f"{self.service_name()} did not answer ({type(exc).__name__}) at "
                                        f"{public_url(url)}") from exc
                self.sleep(min(wait, MAX_WAIT))
                wait *= 2
                continue
            if r.status_code == 404 and ok_missing:
                return None
            if r.status_code in RETRY and attempt < self.settings.retries:
                self.retried.append(r.status_code)
                self.sleep(min(_retry_after(r, wait), MAX_WAIT))
                wait *= 2
                continue
            if r.status_code >= 400:
                raise ServiceFailed(f"{self.service_name()} answered HTTP {r.status_code} at {public_url(url)}: "
                                    f"{redact(_first_line(r.text))}")
            return r
        raise ServiceFailed(f"{self.service_name()} kept failing at {public_url(url)}")  # pragma: no cover

    def service_name(self) -> str:
        from rag.fetch.records import NAMES

        return NAMES.get(self.service, self.service)


def _retry_after(r: httpx.Response, default: float) -> float:
    try:
        return max(0.0, float(r.headers.get("Retry-After", "")))
    except ValueError:
        return default


def _first_line(text: str) -> str:
    import re

    text = re.sub(r"<[^>]+>", " ", text or "")
    return re.sub(r"\s+", " ", text).strip()[:160]
