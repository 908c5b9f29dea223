"""Redact credentials from URLs, headers and command lines before they are recorded (no torch, no IO).

Every place that records a URL or a command line (result files, reports, logs) goes through these functions,
so a run started with ``--endpoint http://user:pw@host/v1?api_key=K`` or ``--api-key K`` never writes the password
or the key. The redaction stays visible (``***``) so a reader knows something was there.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

MASK = "***"

# A name is secret when one of its words (split on - and _) ends with one of these: api_key, X-Api-Key, HF_TOKEN,
# accessToken, Authorization, x-amz-signature. Word endings, not substrings, so --max-tokens and --tokenizer are
# not secrets. Over-redacting a harmless "monkey=1" costs nothing; leaking a token costs a rotation.
_SECRET_ENDINGS = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "signature",
    "cookie",
)
_SECRET_WORDS = {"sig", "pass", "session"}
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
_AUTH_VALUE_RE = re.compile(r"(?i)\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]+")
_HEADER_RE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*:\s*(.+)$", re.DOTALL)


def is_secret_name(name: str) -> bool:
    """True for names like ``api_key``, ``X-Api-Key``, ``token``, ``Authorization``, ``--password``, ``HF_TOKEN``."""
    words = [w for w in re.split(r"[-_.\s]+", name.strip().lstrip("-").lower()) if w]
    return any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in words)


def redact_url(url: str) -> str:
    """Userinfo and secret-looking query values become ``***``; everything else is kept as written."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        items = []
        for item in query.split("&"):
            name, eq, _value = item.partition("=")
            # ``api%5Fkey=`` is ``api_key=`` to the server: judge the decoded name
            items.append(f"{name}={MASK}" if eq and is_secret_name(unquote_plus(name)) else item)
        query = "&".join(items)
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """A copy with the values of secret headers (Authorization, X-Api-Key, Cookie, ...) replaced by ``***``."""
    return {k: (MASK if is_secret_name(k) else v) for k, v in headers.items()}


def redact_text(text: str) -> str:
    """Every URL and every ``Bearer``/``Basic`` credential inside free text (an error message, a log line) redacted."""
    text = _AUTH_VALUE_RE.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _URL_RE.sub(lambda m: redact_url(m.group(0)), text)


def _redact_token(tok: str) -> str:
    """One shell word: a URL, ``--opt=value``, ``NAME=value`` or a ``Header: value``."""
    if tok.startswith("-") and "=" in tok:
        opt, _, value = tok.partition("=")
        return f"{opt}={MASK}" if is_secret_name(opt) else f"{opt}={_redact_token(value)}"
    m = _HEADER_RE.match(tok)
    if m and "://" not in tok and is_secret_name(m.group(1)):
        return f"{m.group(1)}: {MASK}"
    if "=" in tok and "://" not in tok.split("=", 1)[0]:
        name, _, value = tok.partition("=")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and is_secret_name(name):
            return f"{name}={MASK}"
    return redact_text(tok)


def redact_command(command: str) -> str:
    """A recorded command line with secrets masked: URL userinfo and query secrets, values of secret options
    (``--api-key K``, ``--token=K``), secret headers (``-H 'Authorization: Bearer K'``) and ``HF_TOKEN=K``.

    Returns the input unchanged when it holds nothing to redact, so ordinary commands keep their spelling.
    """
    if not command:
        return command
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: fall back to whitespace words
        words = command.split()
    out: list[str] = []
    mask_next = False
    for w in words:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if w.startswith("-") and "=" not in w and is_secret_name(w):
            out.append(w)
            mask_next = True  # the option's value is the next word
            continue
        out.append(_redact_token(w))
    if out == words:
        return command
    return " ".join(MASK if w == MASK else shlex.quote(w) for w in out)


# Known secrets (issue 28): a server can echo a key back, a URL can carry a percent-encoded password that a client
# decodes; masking by name misses both. These take the secret values themselves and mask every form of them.
MIN_SECRET_CHARS = 4  # shorter "secrets" would mask ordinary words everywhere


def secrets_of_url(url: str) -> list[str]:
    """The password, username-as-token and secret query values of ``url``, each as written and decoded."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        user, _, password = userinfo.partition(":")
        found += [password, unquote(password)] if password else [user, unquote(user)]  # user alone is a token
    for item in parts.query.split("&") if parts.query else []:
        name, eq, value = item.partition("=")
        if eq and value and is_secret_name(unquote_plus(name)):
            found += [value, unquote_plus(value)]
    return [f for f in dict.fromkeys(found) if len(f) >= MIN_SECRET_CHARS]


def secret_forms(secret: str) -> list[str]:
    """Every way ``secret`` is likely to be stored: typed, percent-encoded (``%40``, ``+`` for space), JSON-escaped,
    and base64 (a Basic header's ``user:secret`` holds it encoded). Longest first, so masking is whole."""
    if len(secret) < MIN_SECRET_CHARS:
        return []
    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    forms |= {f.lower() for f in forms if "%" in f} | {f.upper() for f in forms if "%" in f}
    for s in (secret, f":{secret}"):  # base64 of the secret alone and of "user:secret" minus the user's part
        b = base64.b64encode(s.encode()).decode().rstrip("=")
        if len(b) >= 8:
            forms.add(b[: len(b) - len(b) % 4] if s.startswith(":") else b)
    return sorted(forms, key=len, reverse=True)


def redact_known(text: str, secrets: Iterable[str]) -> str:
    """``redact_text`` plus every form of each known secret value masked (an echoed key, a decoded password)."""
    forms = sorted({f for s in secrets for f in secret_forms(s)}, key=len, reverse=True)
    for f in forms:
        text = text.replace(f, MASK)
    return redact_text(text)


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of JSON-like data (dicts, lists, strings) with ``redact_known`` on every string and every value under
    a secret-looking key masked: for what a result or log stores from a server (headers, bodies, errors)."""
    known = list(secrets)

    def walk(v: Any, key: str = "") -> Any:
        if isinstance(v, str):
            return MASK if key and is_secret_name(key) and v else redact_known(v, known)
        if isinstance(v, dict):
            return {k: walk(x, str(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(value)


_USERINFO_RE = re.compile(r"(//)[^/@\s?#]*@")


def redact_url_text(url: str) -> str:
    """``redact_url`` for a URL that may not even parse (a malformed one on an error line): userinfo masked by
    pattern when ``urlsplit`` refuses it, so a bad port or bracket never prints the password."""
    try:
        urlsplit(url).port  # noqa: B018  (raises ValueError on a bad port, like the readers of the URL do)
    except ValueError:
        return _USERINFO_RE.sub(lambda m: m.group(1) + MASK + "@", redact_text(url))
    return redact_url(url)


def secret_values(url: str, api_key: str | None = None) -> list[str]:
    """The secrets of an endpoint run: ``secrets_of_url`` (typed and decoded) plus the API key; every form of each
    (percent-encoded, JSON-escaped, base64 as in a Basic header) is masked by ``redact_known``."""
    return [*secrets_of_url(url), *([api_key] if api_key else [])]


def scrub(text: str, secrets: list[str]) -> str:
    """What a server said, minus every form of this run's secrets: ``redact_known``, the one scrubber (issue 28)."""
    return redact_known(text, secrets)


def scrub_tree(obj: object, secrets: list[str]) -> object:
    """``redact_value`` over plain data, keys included (a server may echo a secret as a key)."""

    def keys(v: object) -> object:
        if isinstance(v, dict):
            return {redact_known(k, secrets) if isinstance(k, str) else k: keys(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [keys(x) for x in v]
        return v

    return redact_value(keys(obj), secrets)
