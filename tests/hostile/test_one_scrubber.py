"""One credential scrubber (issue 28 item 4): typed, percent-encoded, JSON-escaped, base64 and echoed forms of a
secret, secret headers and query strings are masked wherever a result, report, log or error line stores them."""

from __future__ import annotations

import base64
import json

from accelpilot.redact import MASK, redact_known, redact_url, redact_value, secrets_of_url

PW = "p@ss w/rd:9"  # decoded; in a URL it is typed p%40ss%20w%2Frd%3A9
URL = "http://alice:p%40ss%20w%2Frd%3A9@host:8000/v1?api_ke%79=K3Y-123&model=m"


def test_url_secrets_found_decoded_and_as_typed() -> None:
    got = secrets_of_url(URL)
    assert PW in got and "p%40ss%20w%2Frd%3A9" in got and "K3Y-123" in got
    red = redact_url(URL)
    assert "p%40ss" not in red and "K3Y-123" not in red and "model=m" in red and "host:8000" in red


def test_every_stored_form_of_a_known_secret_is_masked() -> None:
    basic = base64.b64encode(f"alice:{PW}".encode()).decode()
    echoed = {
        "error": f"401 for key K3Y-123 and password {PW}",
        "body": json.dumps({"echo": PW}),
        "url_seen": "http://h/v1?token=K3Y-123",
        "headers": {"Authorization": f"Basic {basic}", "X-Api-Key": "K3Y-123", "Accept": "json"},
        "encoded": "q=p%40ss%20w%2Frd%3A9 and p%40ss+w%2Frd%3A9",
        "list": ["K3Y-123", 3],
    }
    out = redact_value(echoed, secrets_of_url(URL))
    flat = json.dumps(out)
    for leak in ("K3Y-123", PW, "p%40ss", json.dumps(PW)[1:-1], basic):
        assert leak not in flat, leak
    assert out["headers"]["Accept"] == "json" and out["list"][1] == 3
    assert MASK in out["error"]


def test_short_or_absent_secrets_mask_nothing_ordinary() -> None:
    assert redact_known("the model is gpt and bs=8", ["gpt", ""]) == "the model is gpt and bs=8"
