"""Intrinsics that are not math: ``if_then_else`` (evaluates one branch), ``likely`` (a hint),
``reinterpret`` (the same bits as another dtype), calls out of the program (``call_extern``,
``call_packed``) and TVM's lowered-code builtins, which irlab parses and prints but does not
execute (each code generator lowers the ones it supports)."""

from __future__ import annotations

from irlab.tir.intrinsics.record import register_intrinsic


def _identity(x):
    return x


register_intrinsic("tir.if_then_else", 3, conditional=True, elementwise=True,
                   doc="cond ? t : f, evaluating only the taken branch (guards an access)")
register_intrinsic("tir.likely", 1, numpy=_identity, doc="a branch hint: the value itself")
register_intrinsic("tir.reinterpret", 1, doc="the same bits read as the call's dtype")

# TVM's lowered-code and accelerator builtins (name -> default result dtype): TVMScript reads
# and prints them as opaque calls; irlab's interpreter and codegens do not execute them.
OPAQUE_BUILTINS = {
    "tvm_access_ptr": "handle", "tvm_struct_get": "int32", "tvm_struct_set": "int32",
    "tvm_fill_fragment": "handle", "tvm_load_matrix_sync": "handle",
    "tvm_store_matrix_sync": "handle", "tvm_mma_sync": "handle", "tvm_bmma_sync": "handle",
    "tvm_tuple": "handle", "tvm_storage_sync": "int32", "tvm_warp_shuffle": "float32",
    "tvm_warp_shuffle_up": "float32", "tvm_warp_shuffle_down": "float32",
    "tvm_warp_activemask": "uint32", "tvm_thread_allreduce": "handle",
    "tvm_stack_alloca": "handle", "tvm_stack_make_shape": "handle",
    "tvm_stack_make_array": "handle", "tvm_throw_last_error": "int32",
    "tvm_call_packed_lowered": "int32", "tvm_call_cpacked": "int32", "isnullptr": "bool",
    "address_of": "handle", "type_annotation": "handle", "call_llvm_pure_intrin": "float32",
    "llvm_lookup_intrinsic_id": "uint32",
}
for _name in OPAQUE_BUILTINS:
    register_intrinsic("tir." + _name, None, pure=False)
for _name in ("call_extern", "call_pure_extern", "call_packed", "call_intrin", "tvm_call_packed",
              "assume", "undef", "ret"):
    register_intrinsic("tir." + _name, None, pure=False)
