"""GraphPlanMemory: which storage each tensor of the graph lives in (TVM's
``graph_plan_memory.cc``, simplified).

Walk the operator nodes in execution order. Every output of a node takes a storage token:
a free token of the same dtype when one is large enough (the smallest such), else a new one.
When the last consumer of a tensor has run, its token goes back to the free list -- unless
the tensor is a graph output or an input/parameter (those keep their own storage). A
``__nop`` node (a reshape that only changes the shape) shares its input's token.

The result is one ``storage_id`` per node output (``node_row_ptr`` order) and the size of
each storage in bytes.
"""

from __future__ import annotations

import numpy as np

from irlab.runtime.dtype import to_numpy_dtype


def _nbytes(shape, dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * to_numpy_dtype(dtype).itemsize


def plan_memory(nodes, heads, shapes, dtypes, node_row_ptr):
    """Storage ids for every entry and each storage's size.

    ``nodes`` are graph JSON nodes ({"op", "inputs", "attrs"}), ``heads`` the output entries;
    ``shapes``/``dtypes`` are per entry (flattened with ``node_row_ptr``).
    """
    n_entries = node_row_ptr[-1]
    uses = [0] * n_entries
    for node in nodes:
        for nid, index, _ in node["inputs"]:
            uses[node_row_ptr[nid] + index] += 1
    pinned = {node_row_ptr[nid] + index for nid, index, _ in heads}
    storage_id = [-1] * n_entries
    sizes: list[int] = []
    token_dtype: list[str] = []
    free: list[int] = []
    token_refs: dict[int, int] = {}

    def new_token(nbytes, dtype):
        sizes.append(nbytes)
        token_dtype.append(dtype)
        return len(sizes) - 1

    for nid, node in enumerate(nodes):
        first = node_row_ptr[nid]
        count = node_row_ptr[nid + 1] - first
        if node["op"] == "null":
            for k in range(count):
                e = first + k
                storage_id[e] = new_token(_nbytes(shapes[e], dtypes[e]), dtypes[e])
                token_refs[storage_id[e]] = 1 << 30  # inputs/params are never reused
            continue
        is_nop = node.get("attrs", {}).get("func_name") == "__nop"
        for k in range(count):
            e = first + k
            need = _nbytes(shapes[e], dtypes[e])
            if is_nop:
                src = node["inputs"][0]
                token = storage_id[node_row_ptr[src[0]] + src[1]]
            else:
                fits = [t for t in free if token_dtype[t] == dtypes[e] and sizes[t] >= need]
                if fits:
                    token = min(fits, key=lambda t: sizes[t])
                    free.remove(token)
                else:
                    same = [t for t in free if token_dtype[t] == dtypes[e]]
                    if same:  # grow the biggest free one instead of adding a token
                        token = max(same, key=lambda t: sizes[t])
                        free.remove(token)
                        sizes[token] = need
                    else:
                        token = new_token(need, dtypes[e])
            storage_id[e] = token
            token_refs[token] = token_refs.get(token, 0) + max(uses[e], 0) + (
                1 << 30 if e in pinned else 0)
        # inputs consumed by this node: release tokens whose last reader this was
        for src_nid, index, _ in node["inputs"]:
            token = storage_id[node_row_ptr[src_nid] + index]
            token_refs[token] -= 1
            if token_refs[token] == 0:
                free.append(token)
        for k in range(count):  # outputs nobody reads are dead at once
            e = first + k
            token = storage_id[e]
            if uses[e] == 0 and e not in pinned and token_refs[token] == 0 \
                    and token not in free:
                free.append(token)
    return storage_id, sizes


__all__ = ["plan_memory"]
