"""Custom rules for the ``cpu`` target key (TVM's ``meta_schedule.cpu.*``)."""

from irlab.meta_schedule.schedule.cpu import winograd  # noqa: F401  (registers its rules)
