"""False-positive classes found by the hand-judged transformers sample (issue 12), each beside the near-miss that
must stay a finding: exact findings and items, and pruned scans equal to full parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelpilot.porting.scan import scan_path, scan_python

UPLOADS = """\
import json
import urllib.request

import requests


def report_status(url, status):
    req = urllib.request.Request(url, data=json.dumps(status).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.status


def upload(url, blob):
    urllib.request.urlopen(url, blob)
    urllib.request.urlopen(urllib.request.Request(url, blob))
    requests.post(url, data=blob)
    requests.put(url, data=blob)
    requests.request("PATCH", url, data=blob)


def fetch(url, given):
    req = urllib.request.Request(url, headers={"User-Agent": "x"})
    body = urllib.request.urlopen(req).read()
    urllib.request.urlopen(url)
    urllib.request.urlopen(urllib.request.Request(url, b"q", method="GET"))
    urllib.request.urlopen(given)
    requests.get(url)
    requests.request("GET", url)
    urllib.request.urlretrieve(url, "weights.bin")
    either = urllib.request.Request(url, data=b"x")
    either = urllib.request.Request(url)
    urllib.request.urlopen(either)
    return body
"""


def _findings(root: Path, name: str) -> list[tuple[str, int, str | None]]:
    log = scan_path(root, jobs=1)
    return sorted((f.rule, f.line or 0, f.context) for f in log.findings if f.file == name)


def test_an_http_request_that_sends_a_body_is_not_a_download(tmp_path: Path) -> None:
    """A POST/PUT/PATCH (``requests.post``, ``urlopen`` of a ``Request`` with ``data=``/``method="POST"``, or
    ``urlopen(url, data)``) sends telemetry or an upload: nothing the workload reads comes in. GETs, ``urlretrieve``,
    a ``Request`` with an explicit ``method="GET"``, a request of unknown origin (a parameter) and a name also bound
    to a GET ``Request`` stay downloads."""
    (tmp_path / "net.py").write_text(UPLOADS)
    assert _findings(tmp_path, "net.py") == [("http-download", line, None) for line in (23, 24, 25, 26, 27, 28, 29, 32)]
    [item] = scan_path(tmp_path, jobs=1).items
    assert (item.key, len(item.lines)) == ("file|http-download|net.py", 8)


@pytest.mark.parametrize("source", [UPLOADS], ids=["uploads"])
def test_pruned_scan_equals_full_parse_on_fp_classes(source: str) -> None:
    pruned = sorted((r, ln, m, str(ctx)) for r, ln, m, _, _, ctx in scan_python(source))
    full = sorted((r, ln, m, str(ctx)) for r, ln, m, _, _, ctx in scan_python(source, prune=False))
    assert pruned == full
