"""One error hierarchy. UserError subclasses print one line and exit 2; anything else is a bug."""

from __future__ import annotations


class AccelpilotError(Exception):
    """Base of every error this package raises on purpose."""


class UserError(AccelpilotError):
    """Bad input from the user: the CLI prints the message on one line and exits 2.

    The message should name the file, the field and the fix.
    """

    exit_code = 2

    def __init__(
        self, message: str, *, file: str | None = None, field: str | None = None, fix: str | None = None
    ) -> None:
        self.file = file
        self.field = field
        self.fix = fix
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.file:
            parts.append(str(self.file))
        if self.field:
            parts.append(self.field)
        head = ": ".join(parts)
        msg = f"{head}: {self.detail}" if head else self.detail
        if self.fix:
            msg += f" (fix: {self.fix})"
        return msg.replace("\n", " ")


class Interrupted(AccelpilotError):
    """Ctrl-C stopped a long command: the CLI prints this one line (what stopped, what was kept) and exits 130."""

    exit_code = 130


class InputFileError(UserError):
    """A file is missing, unreadable or malformed."""


class ConfigError(UserError):
    """A value in a scenario, catalog or command line is invalid."""


class UnknownNameError(UserError):
    """A name (instance, device, rule, workload) is not known; suggests close matches."""


class UnitMismatchError(UserError):
    """Two figures with different units or currencies were combined."""


class VendorClaimError(UserError):
    """A vendor claim was used in arithmetic: claims are shown, never multiplied."""


class DeviceError(UserError):
    """The requested device is unknown or not present."""


def did_you_mean(name: str, choices: list[str] | tuple[str, ...] | set[str], n: int = 3) -> str:
    """A "did you mean" suffix, or a list of valid names when nothing is close."""
    import difflib

    close = difflib.get_close_matches(name, sorted(choices), n=n, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    shown = sorted(choices)[:12]
    more = "" if len(choices) <= 12 else f", ... ({len(choices)} in all)"
    return "known: " + ", ".join(shown) + more
