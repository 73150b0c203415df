"""BERT encoder layers (post-LN Transformer blocks, as in BERT-base) on ``(batch, seq, hidden)``.

    h = layer_norm(x + dense(attention(x)))      # multi-head self-attention, no mask
    y = layer_norm(h + dense(gelu(dense(h))))    # feed-forward, erf GELU

Dense layers work on the flattened ``(batch * seq, hidden)`` matrix (what importers emit for
``nn.dense``); heads are split with reshape/transpose and attended with ``nn.batch_matmul``.
"""

from __future__ import annotations

import math

from irlab import relay
from irlab.relay.testing import layers
from irlab.relay.testing.init import create_workload


def gelu(data, dtype="float32"):
    """Exact GELU: ``0.5 * x * (1 + erf(x / sqrt(2)))``."""
    scaled = relay.multiply(data, relay.const(1.0 / math.sqrt(2.0), dtype))
    cdf = relay.add(relay.const(1.0, dtype), relay.erf(scaled))
    return relay.multiply(relay.multiply(relay.const(0.5, dtype), data), cdf)


def encoder_layer(data, name, batch_size, seq_len, hidden_size, num_heads, intermediate_size,
                  epsilon=1e-12, dtype="float32"):
    """The encoder layer applied to ``data`` of shape ``(batch_size, seq_len, hidden_size)``.

    Weights: ``<name>_{query,key,value,attention_output,intermediate,output}_{weight,bias}``
    (dense layouts ``(units, in)``) and ``<name>_{attention,output}_layernorm_{gamma,beta}``.
    """
    if hidden_size % num_heads:
        raise ValueError(f"hidden_size {hidden_size} is not a multiple of num_heads {num_heads}")
    head = hidden_size // num_heads
    tokens = batch_size * seq_len

    def dense(x, units, suffix):
        return layers.dense_add_bias(data=x, units=units, name=f"{name}_{suffix}")

    def split_heads(x):
        # (B*S, H) -> (B, S, nh, hd) -> (B, nh, S, hd) -> (B*nh, S, hd)
        x = relay.reshape(x, (batch_size, seq_len, num_heads, head))
        x = relay.transpose(x, (0, 2, 1, 3))
        return relay.reshape(x, (batch_size * num_heads, seq_len, head))

    x = relay.reshape(data, (tokens, hidden_size))
    q = split_heads(dense(x, hidden_size, "query"))
    k = split_heads(dense(x, hidden_size, "key"))
    v = split_heads(dense(x, hidden_size, "value"))
    scores = relay.nn.batch_matmul(q, k, transpose_b=True)  # (B*nh, S, S)
    scores = relay.multiply(scores, relay.const(1.0 / math.sqrt(head), dtype))
    probs = relay.nn.softmax(scores, axis=-1)
    ctx = relay.nn.batch_matmul(probs, v, transpose_b=False)  # (B*nh, S, hd)
    ctx = relay.reshape(ctx, (batch_size, num_heads, seq_len, head))
    ctx = relay.reshape(relay.transpose(ctx, (0, 2, 1, 3)), (tokens, hidden_size))

    attn = relay.add(dense(ctx, hidden_size, "attention_output"), x)
    attn = layers.layer_norm(attn, axis=-1, epsilon=epsilon, name=f"{name}_attention_layernorm")
    ffn = gelu(dense(attn, intermediate_size, "intermediate"), dtype)
    out = relay.add(dense(ffn, hidden_size, "output"), attn)
    out = layers.layer_norm(out, axis=-1, epsilon=epsilon, name=f"{name}_output_layernorm")
    return relay.reshape(out, (batch_size, seq_len, hidden_size))


def get_net(batch_size=1, seq_len=128, hidden_size=768, num_heads=12, intermediate_size=3072,
            epsilon=1e-12, dtype="float32", num_layers=1):
    """``num_layers`` stacked encoder layers as a ``relay.Function`` of ``data`` and their
    weights (16 per layer, named ``layer<i>_...``: the explorer groups them by layer)."""
    if num_layers < 1:
        raise ValueError(f"num_layers must be at least 1, got {num_layers}")
    data = relay.var("data", shape=(batch_size, seq_len, hidden_size), dtype=dtype)
    out = data
    for index in range(num_layers):
        out = encoder_layer(out, f"layer{index}", batch_size, seq_len, hidden_size, num_heads,
                            intermediate_size, epsilon, dtype)
    return relay.Function(relay.analysis.free_vars(out), out)


def get_workload(batch_size=1, seq_len=128, hidden_size=768, num_heads=12,
                 intermediate_size=3072, epsilon=1e-12, dtype="float32", seed=0, num_layers=1):
    """``(mod, params)`` of ``num_layers`` BERT-base-sized encoder layers (BERT-base has 12;
    the sizes are configurable down for tests)."""
    net = get_net(batch_size, seq_len, hidden_size, num_heads, intermediate_size, epsilon, dtype,
                  num_layers)
    return create_workload(net, seed=seed)
