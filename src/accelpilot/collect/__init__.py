"""Bring pilot results home: read and check result files, match them to scenario options, write them back.

``read.py`` finds result files, checks them (schema, newer versions, ``.sha256`` sidecars) and drops exact
duplicates by content hash; ``match.py`` matches each result to the options whose platform it measured (by the
fingerprint) and refuses contradictions; ``scenario_doc.py`` writes ``result = "..."`` into the scenario with
tomlkit, keeping comments and layout, and refuses to overwrite a file that changed since it was read.
"""

from accelpilot.collect.match import Assignment, match_results
from accelpilot.collect.read import Collected, Gathered, gather_results
from accelpilot.collect.scenario_doc import ScenarioDoc

__all__ = ["Assignment", "Collected", "Gathered", "ScenarioDoc", "gather_results", "match_results"]
