"""Several workloads, one estate: a portfolio of scenarios priced together over a lifetime (issue 31)."""
