"""The debug graph executor (TVM's ``tvm.contrib.debugger``)."""
