"""Take the pilot to every candidate: SkyPilot task YAML per scenario option, shell scripts for the rest.

``plan.py`` turns a scenario's options into launch targets (which accelerator, how many nodes, SkyPilot or a
plain script), ``stacks.py`` reads the platform stacks (images and package pins as data), ``command.py``
builds the pilot command a target runs, ``skypilot.py`` writes and checks SkyPilot tasks offline, and
``write.py`` writes the task folder. Nothing here launches anything or needs credentials.
"""

from accelpilot.launch.plan import LaunchTarget, plan_launch
from accelpilot.launch.write import render_tasks, write_tasks

__all__ = ["LaunchTarget", "plan_launch", "render_tasks", "write_tasks"]
