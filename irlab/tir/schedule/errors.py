"""Errors raised by schedule primitives."""

from irlab.errors import IrlabError


class ScheduleError(IrlabError):
    """A schedule primitive was applied where it is not valid; the schedule is unchanged."""
