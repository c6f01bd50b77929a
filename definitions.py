"""Dagster entry point (`dagster dev`): the overnight opportunity scanner's asset graph."""

from opportunity_assets.definitions import build_definitions

defs = build_definitions()
