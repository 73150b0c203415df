"""Placeholder: being written (issue 3)."""


def CombineParallelConv2D(*args, **kwargs):
    raise NotImplementedError("CombineParallelConv2D is being written")


def CombineParallelDense(*args, **kwargs):
    raise NotImplementedError("CombineParallelDense is being written")


def CombineParallelBatchMatmul(*args, **kwargs):
    raise NotImplementedError("CombineParallelBatchMatmul is being written")

