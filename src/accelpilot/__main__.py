"""`python -m accelpilot`: the same CLI as the `accelpilot` script."""

from accelpilot.cli import entry

if __name__ == "__main__":
    entry()
