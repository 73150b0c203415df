"""CPU schedules: functions ``schedule_*(sch, outs, target)`` transforming a ``tir.Schedule``
whose blocks are named after the TE stages (``tensor.op.name``)."""

from irlab.topi.x86.injective import schedule_injective
from irlab.topi.x86.register_tile import vector_lanes

__all__ = ["schedule_injective", "vector_lanes"]
from irlab.topi.x86.dense import (schedule_dense, schedule_batch_matmul,  # noqa: E402,F401
                                  schedule_dense_prepacked, schedule_matmul)
from irlab.topi.x86.softmax import schedule_softmax  # noqa: E402,F401
from irlab.topi.x86.norm import schedule_layer_norm, schedule_instance_norm  # noqa: E402,F401
from irlab.topi.x86.conv2d import (schedule_conv2d_depthwise, schedule_conv2d_nchw,  # noqa: E402
                                   schedule_conv2d_NCHWc,
                                   schedule_conv2d_nchw_direct,
                                   schedule_conv2d_nchw_im2col,
                                   schedule_conv2d_nchw_packed,
                                   schedule_conv2d_nchw_prepacked,
                                   schedule_conv2d_nhwc, schedule_conv2d_other,
                                   schedule_conv2d_transpose)
from irlab.topi.x86.conv2d_winograd import schedule_conv2d_NCHWc_winograd  # noqa: E402,F401
from irlab.topi.x86.pooling import schedule_lrn, schedule_pool  # noqa: E402

__all__ += ["schedule_conv2d_nchw", "schedule_conv2d_nchw_direct", "schedule_conv2d_nchw_packed",
            "schedule_conv2d_nchw_prepacked", "schedule_conv2d_NCHWc",
            "schedule_conv2d_NCHWc_winograd",
            "schedule_conv2d_nchw_im2col",
            "schedule_conv2d_nhwc", "schedule_conv2d_depthwise",
            "schedule_conv2d_other", "schedule_conv2d_transpose", "schedule_pool",
            "schedule_lrn"]
__all__ += ["schedule_dense", "schedule_dense_prepacked", "schedule_batch_matmul",
            "schedule_matmul", "schedule_softmax", "schedule_layer_norm",
            "schedule_instance_norm"]
from irlab.topi.x86.reduction import schedule_reduce, schedule_reduce_block  # noqa: E402,F401
