"""The static scanner: walks a repository, never imports or executes it, and writes a PortabilityLog.

Python is read with ``ast``; Dockerfiles, shell scripts, YAML/JSON job specs, requirements and pyproject/setup.cfg
line by line. Modules: ``walk`` (which files), ``suppress`` (ignore comments), ``text`` (line rules),
``patterns`` (the tables both pruning and the visitor read), ``prune`` (which blocks to parse), ``visitor``
(the AST pass), ``python`` (one Python source), ``one_file`` (one file of any kind, and what the cross-file passes
read from it), ``run`` (chunks and the whole tree).
"""

from accelpilot.porting.scan.one_file import DEFAULT_MAX_BYTES, scan_file
from accelpilot.porting.scan.python import scan_python
from accelpilot.porting.scan.run import scan_path
from accelpilot.porting.scan.text import scan_text
from accelpilot.porting.scan.walk import classify, walk

__all__ = ["DEFAULT_MAX_BYTES", "classify", "scan_file", "scan_path", "scan_python", "scan_text", "walk"]
