"""Placeholder: being written (issue 3)."""


def FlattenAtrousConv(*args, **kwargs):
    raise NotImplementedError("FlattenAtrousConv is being written")


def SplitArgs(*args, **kwargs):
    raise NotImplementedError("SplitArgs is being written")


def PlanDevices(*args, **kwargs):
    raise NotImplementedError("PlanDevices is being written")


def AnnotateMemoryScope(*args, **kwargs):
    raise NotImplementedError("AnnotateMemoryScope is being written")


def QnnLegalize(*args, **kwargs):
    raise NotImplementedError("QnnLegalize is being written")


def QnnCanonicalize(*args, **kwargs):
    raise NotImplementedError("QnnCanonicalize is being written")

