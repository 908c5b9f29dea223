"""Experiment tracking: pilot results as runs in a team's tracker (MLflow), beside its training runs."""
