"""decide: the seeds' decision gates, the exit test and the verdict over scenario answers, log and bill."""

from accelpilot.decide.verdict import Decision, decide

__all__ = ["Decision", "decide"]
