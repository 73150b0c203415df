"""Placeholder: being written (issue 3)."""


def MergeComposite(*args, **kwargs):
    raise NotImplementedError("MergeComposite is being written")


def AnnotateTarget(*args, **kwargs):
    raise NotImplementedError("AnnotateTarget is being written")


def MergeCompilerRegions(*args, **kwargs):
    raise NotImplementedError("MergeCompilerRegions is being written")


def PartitionGraph(*args, **kwargs):
    raise NotImplementedError("PartitionGraph is being written")

