"""Backends consuming the tile IR: ``interp`` (numpy reference), later ``cpu`` and ``sim``."""
