"""Where a pilot ran, from local sources only: EC2's DMI files and SkyPilot's environment."""

from __future__ import annotations

import json
from pathlib import Path

from accelpilot.pilot.location import cloud_identity, launch_labels, location_fields


def _dmi(tmp_path: Path, vendor: str, product: str) -> Path:
    d = tmp_path / "dmi"
    d.mkdir()
    (d / "sys_vendor").write_text(vendor + "\n")
    (d / "product_name").write_text(product + "\n")
    return d


def test_ec2_nitro_instance_type_from_dmi(tmp_path: Path) -> None:
    got = cloud_identity({}, _dmi(tmp_path, "Amazon EC2", "trn1.32xlarge"))
    assert got == {"cloud": "aws", "instance_type": "trn1.32xlarge", "sources": ["dmi"]}


def test_not_ec2_says_nothing(tmp_path: Path) -> None:
    assert cloud_identity({}, _dmi(tmp_path, "Dell Inc.", "PowerEdge R760xa")) == {}
    assert cloud_identity({}, tmp_path / "absent") == {}
    assert location_fields({}, tmp_path / "absent") == {}


def test_skypilot_environment(tmp_path: Path) -> None:
    env = {
        "SKYPILOT_CLUSTER_INFO": json.dumps(
            {"cluster_name": "c", "cloud": "AWS", "region": "us-east-1", "zone": "us-east-1b"}
        ),
        "SKYPILOT_NUM_NODES": "2",
        "SKYPILOT_NODE_RANK": "1",
        "SKYPILOT_NODE_IPS": "10.0.0.1\n10.0.0.2\n",
        "ACCELPILOT_OPTIONS": json.dumps(["trn1 on-demand", "trn1 3y"]),
        "ACCELPILOT_TASK": "trn1-on-demand",
    }
    got = location_fields(env, _dmi(tmp_path, "Amazon EC2", "trn1.32xlarge"))
    assert got["cloud"] == {
        "cloud": "aws",
        "instance_type": "trn1.32xlarge",
        "region": "us-east-1",
        "zone": "us-east-1b",
        "num_nodes": 2,
        "node_rank": 1,
        "node_ips_count": 2,
        "sources": ["dmi", "skypilot"],
    }
    assert "10.0.0.1" not in json.dumps(got)  # addresses are not kept
    assert got["launch"] == {"options": ["trn1 on-demand", "trn1 3y"], "task": "trn1-on-demand"}


def test_garbage_environment_is_ignored() -> None:
    assert cloud_identity({"SKYPILOT_CLUSTER_INFO": "{not json", "SKYPILOT_NODE_RANK": "x"}, Path("/nonexistent")) == {}
    assert launch_labels({"ACCELPILOT_OPTIONS": "plain name"}) == {"options": ["plain name"]}
