"""accelpilot.redact: credentials in URLs, headers and command lines become a visible ***."""

from __future__ import annotations

import pytest

from accelpilot.redact import is_secret_name, redact_command, redact_headers, redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("http://user:pw@h:8000/v1?api_key=K&model=m", "http://***@h:8000/v1?api_key=***&model=m"),
        ("https://tok@h/v1/completions", "https://***@h/v1/completions"),
        (
            "http://h/v1?key=K&token=T&X-Amz-Signature=S&sig=Z&n=1",
            "http://h/v1?key=***&token=***&X-Amz-Signature=***&sig=***&n=1",
        ),
        ("http://127.0.0.1:8000/v1/completions?max_tokens=5", "http://127.0.0.1:8000/v1/completions?max_tokens=5"),
    ],
)
def test_redact_url(url: str, want: str) -> None:
    assert redact_url(url) == want
    assert redact_url(want) == want  # idempotent


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("X-Api-Key", True),
        ("Authorization", True),
        ("HF_TOKEN", True),
        ("--api-key", True),
        ("accessToken", True),
        ("password", True),
        ("--max-tokens", False),
        ("--min-tokens", False),
        ("--tokenizer", False),
        ("model", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_redact_headers() -> None:
    assert redact_headers({"Authorization": "Bearer x", "X-Api-Key": "k", "Accept": "text/event-stream"}) == {
        "Authorization": "***",
        "X-Api-Key": "***",
        "Accept": "text/event-stream",
    }


def test_redact_command_every_form() -> None:
    cmd = (
        "accelpilot run serve --endpoint 'http://u:PW1@h/v1?api_key=K2' --api-key K3 --token=K4 "
        "-H 'Authorization: Bearer K5' HF_TOKEN=K6 --max-tokens 32 --tokenizer tok.json"
    )
    out = redact_command(cmd)
    for secret in ("PW1", "K2", "K3", "K4", "K5", "K6"):
        assert secret not in out
    assert "--max-tokens 32" in out and "--tokenizer tok.json" in out
    assert out.count("***") == 6
    assert redact_command(out) == out


def test_plain_commands_keep_their_spelling() -> None:
    cmd = "accelpilot run train --device cpu --steps 4  --out 'my results'"
    assert redact_command(cmd) == cmd


def test_redact_text_masks_auth_values_and_urls() -> None:
    text = "401 for Bearer abc.def and Basic YWxpY2U6cHc= at http://u:p@h/x?token=t"
    assert redact_text(text) == "401 for Bearer *** and Basic *** at http://***@h/x?token=***"


def test_every_recorded_command_is_redacted_training_too() -> None:
    from accelpilot.pilot.result import PilotResult, Platform, WorkloadInfo

    r = PilotResult(
        kind="training",
        command="accelpilot run train --device cpu HF_TOKEN=hf_secret --mlflow-uri http://u:pw@mlflow/",
        platform=Platform(device="cpu"),
        workload=WorkloadInfo(name="tiny"),
    )
    assert "hf_secret" not in r.command and "pw@" not in r.command
    assert "HF_TOKEN=***" in r.command
    # and a result file written by an older version is redacted when read
    assert "hf_secret" not in PilotResult.model_validate_json(r.model_dump_json().replace("***", "hf_secret")).command
