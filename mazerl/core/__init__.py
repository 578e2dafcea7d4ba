"""Plumbing shared by every layer: errors, registries, files, random streams, devices, configs,
command-line entry points. Imports nothing else from mazerl."""
