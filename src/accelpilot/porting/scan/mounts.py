"""Container-side mount paths: a local path that a container run mounts something onto is a path inside the
container (``docker run -v `pwd`:/scratch --workdir=/scratch``), the same on any host, not local NVMe or scratch
storage the host must provide. The host side of a mount (``-v /scratch/data:/data``) stays a finding."""

from __future__ import annotations

import re

from accelpilot.porting.scan.patterns import RawFinding

# ``-v SRC:DST``, ``--volume=SRC:DST`` (options ``:ro`` after DST), ``--mount ...,target=DST`` / ``dst=``, and a
# compose file's ``- SRC:DST`` volume entry.
_MOUNT = re.compile(
    r"(?:(?:^|\s)(?:-v|--volume)[ =]\S*?:|[,\s](?:target|destination|dst)=|^\s*-\s+['\"]?[^\s:'\"]+:)(/[\w./-]*)",
    re.M,
)


def mount_targets(text: str) -> set[str]:
    """The container-side paths of every mount in ``text`` (a shell script, a Dockerfile, a compose file)."""
    return {m.group(1).rstrip("/") or "/" for m in _MOUNT.finditer(text) if m.group(1)}


def drop_container_paths(text: str, found: list[RawFinding]) -> list[RawFinding]:
    """``found`` without local-path findings whose path is (or holds) a mount's container side in the same file."""
    if not any(r == "local-nvme-path" for r, *_ in found):
        return found
    targets = mount_targets(text)
    if not targets:
        return found

    def inside(path: str | None) -> bool:
        return path is not None and any(t == path or t.startswith(path + "/") for t in targets)

    return [f for f in found if not (f[0] == "local-nvme-path" and inside(f[4]))]
