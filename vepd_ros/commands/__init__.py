"""Subcommands of ``vepd``; each module defines ``register(subparsers)``. See ``vepd_ros.cli``."""
