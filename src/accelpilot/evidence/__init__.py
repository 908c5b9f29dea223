"""Evidence from the user's AWS account: capacity, quotas, capacity blocks and spot scores, as AWS CLI JSON.

``read`` parses the CLI's exact shapes, ``capacity`` answers the capacity gate from them, ``collect`` writes
the same files live with boto3 (an optional extra), ``pricing`` fetches Price List rows as an offer file.
"""

from __future__ import annotations

from accelpilot.evidence.capacity import CapacityCheck, EvidenceLine, Need, check_capacity
from accelpilot.evidence.model import EvidenceSet
from accelpilot.evidence.read import read_evidence, read_file, read_files

__all__ = [
    "CapacityCheck",
    "EvidenceLine",
    "EvidenceSet",
    "Need",
    "check_capacity",
    "read_evidence",
    "read_file",
    "read_files",
]
