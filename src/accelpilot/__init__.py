"""accelpilot: answer "should this workload move?" with measurements, not slides."""

__version__ = "0.1.0"
