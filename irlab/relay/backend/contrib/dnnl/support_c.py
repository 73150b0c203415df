"""The C helpers every ``dnnl`` source starts with: oneDNN's engine and stream, and one
``irlab_dnnl_op`` per call site -- a primitive made on the first call, with reorders between
the caller's plain (NCHW / OIHW / row-major) arrays and the layouts oneDNN chose for it."""

SUPPORT_C = r"""
/* ---- irlab's oneDNN helpers (irlab.relay.backend.contrib.dnnl.support_c) ---- */
static dnnl_engine_t irlab_dnnl_engine;
static dnnl_stream_t irlab_dnnl_stream;
/* calls of this library run one at a time: call sites keep state (memory objects) */
static pthread_mutex_t irlab_dnnl_lock = PTHREAD_MUTEX_INITIALIZER;

#define IRLAB_DNNL_SLOTS 4
#define IRLAB_OK(call) ((call) == dnnl_success)

/* One primitive at one call site. Argument i is given as a plain array (user[i]); mem[i]
   is the memory in the layout the primitive chose (user[i] itself when they agree) and
   reorder[i] converts between them. A constant input is reordered on the first call only. */
typedef struct {
  dnnl_primitive_t prim;
  int n, warm;
  int arg[IRLAB_DNNL_SLOTS], output[IRLAB_DNNL_SLOTS], constant[IRLAB_DNNL_SLOTS];
  dnnl_memory_t user[IRLAB_DNNL_SLOTS], mem[IRLAB_DNNL_SLOTS];
  dnnl_primitive_t reorder[IRLAB_DNNL_SLOTS];
} irlab_dnnl_op;

static int irlab_dnnl_ready(void) {
  if (irlab_dnnl_stream) return 1;
  if (!IRLAB_OK(dnnl_engine_create(&irlab_dnnl_engine, dnnl_cpu, 0))) return 0;
  return IRLAB_OK(dnnl_stream_create(&irlab_dnnl_stream, irlab_dnnl_engine,
                                     dnnl_stream_default_flags));
}

/* A memory descriptor of plain row-major dims (tag any: the primitive chooses). */
static dnnl_memory_desc_t irlab_dnnl_md(int ndims, const int64_t* dims, int any) {
  static const dnnl_format_tag_t plain[] = {dnnl_a, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd,
                                            dnnl_abcde};
  dnnl_memory_desc_t md = NULL;
  dnnl_dims_t d;
  for (int i = 0; i < ndims; ++i) d[i] = dims[i];
  dnnl_format_tag_t tag = any ? dnnl_format_tag_any : plain[ndims];
  if (!IRLAB_OK(dnnl_memory_desc_create_with_tag(&md, ndims, d, dnnl_f32, tag))) return NULL;
  return md;
}

/* A reorder between the plain memory and the primitive's (direction by `output`). */
static int irlab_dnnl_reorder(dnnl_primitive_t* out, const_dnnl_memory_desc_t plain,
                              const_dnnl_memory_desc_t chosen, int output) {
  dnnl_primitive_desc_t pd = NULL;
  dnnl_engine_t e = irlab_dnnl_engine;
  int ok = output ? IRLAB_OK(dnnl_reorder_primitive_desc_create(&pd, chosen, e, plain, e, NULL))
                  : IRLAB_OK(dnnl_reorder_primitive_desc_create(&pd, plain, e, chosen, e, NULL));
  if (ok) ok = IRLAB_OK(dnnl_primitive_create(out, pd));
  if (pd) dnnl_primitive_desc_destroy(pd);
  return ok;
}

/* Finish a call site: its memories and reorders for the `n` arguments of primitive
   descriptor `pd`; takes ownership of `pd` and of the plain descriptors `plain`. */
static int irlab_dnnl_setup(irlab_dnnl_op* op, dnnl_primitive_desc_t pd, int n,
                            const int* arg, dnnl_memory_desc_t* plain, const int* output,
                            const int* constant) {
  int ok = pd != NULL;
  op->n = n;
  for (int i = 0; i < n && ok; ++i) {
    op->arg[i] = arg[i], op->output[i] = output[i], op->constant[i] = constant[i];
    const_dnnl_memory_desc_t chosen = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md,
                                                                   arg[i]);
    ok = plain[i] && chosen && IRLAB_OK(dnnl_memory_create(&op->user[i], plain[i],
                                                           irlab_dnnl_engine,
                                                           DNNL_MEMORY_NONE));
    if (!ok || dnnl_memory_desc_equal(chosen, plain[i])) {
      op->mem[i] = op->user[i];
      continue;
    }
    ok = IRLAB_OK(dnnl_memory_create(&op->mem[i], chosen, irlab_dnnl_engine,
                                     DNNL_MEMORY_ALLOCATE))
         && irlab_dnnl_reorder(&op->reorder[i], plain[i], chosen, output[i]);
  }
  if (ok) ok = IRLAB_OK(dnnl_primitive_create(&op->prim, pd));
  if (pd) dnnl_primitive_desc_destroy(pd);
  for (int i = 0; i < n; ++i)
    if (plain[i]) dnnl_memory_desc_destroy(plain[i]);
  return ok;
}

static int irlab_dnnl_exec(dnnl_primitive_t prim, dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return IRLAB_OK(dnnl_primitive_execute(prim, irlab_dnnl_stream, 2, args));
}

/* Run a call site on the arrays `data` (one per argument, in setup order). */
static int irlab_dnnl_run(irlab_dnnl_op* op, void** data) {
  dnnl_exec_arg_t args[IRLAB_DNNL_SLOTS];
  for (int i = 0; i < op->n; ++i) {
    if (!IRLAB_OK(dnnl_memory_set_data_handle(op->user[i], data[i]))) return 0;
    args[i].arg = op->arg[i], args[i].memory = op->mem[i];
    int stale = !(op->constant[i] && op->warm);
    if (!op->output[i] && op->reorder[i] && stale
        && !irlab_dnnl_exec(op->reorder[i], op->user[i], op->mem[i])) return 0;
  }
  if (!IRLAB_OK(dnnl_primitive_execute(op->prim, irlab_dnnl_stream, op->n, args))) return 0;
  for (int i = 0; i < op->n; ++i)
    if (op->output[i] && op->reorder[i]
        && !irlab_dnnl_exec(op->reorder[i], op->mem[i], op->user[i])) return 0;
  op->warm = 1;
  return IRLAB_OK(dnnl_stream_wait(irlab_dnnl_stream));
}

/* Post-ops attributes: a fused ReLU, or none. */
static dnnl_primitive_attr_t irlab_dnnl_attr(int relu) {
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  if (!relu || !IRLAB_OK(dnnl_primitive_attr_create(&attr))) return attr;
  if (IRLAB_OK(dnnl_post_ops_create(&ops))
      && IRLAB_OK(dnnl_post_ops_append_eltwise(ops, dnnl_eltwise_relu, 0.0f, 0.0f)))
    dnnl_primitive_attr_set_post_ops(attr, ops);
  if (ops) dnnl_post_ops_destroy(ops);
  return attr;
}

/* Convolution (NCHW data, OIHW or GOIHW weights; bias may be NULL), ReLU fused if asked.
   Arguments at run: src, weights, [bias,] dst. */
static int irlab_dnnl_conv(irlab_dnnl_op* op, const int64_t* src, int wei_ndims,
                           const int64_t* wei, const int64_t* bias, const int64_t* dst,
                           const int64_t* strides, const int64_t* dilates,
                           const int64_t* pad_l, const int64_t* pad_r, int relu,
                           int const_weights) {
  dnnl_memory_desc_t any[3] = {irlab_dnnl_md(4, src, 1), irlab_dnnl_md(wei_ndims, wei, 1),
                               irlab_dnnl_md(4, dst, 1)};
  dnnl_memory_desc_t bias_md = bias ? irlab_dnnl_md(1, bias, 0) : NULL;
  dnnl_primitive_attr_t attr = irlab_dnnl_attr(relu);
  dnnl_primitive_desc_t pd = NULL;
  dnnl_dims_t s = {strides[0], strides[1]}, d = {dilates[0], dilates[1]};
  dnnl_dims_t pl = {pad_l[0], pad_l[1]}, pr = {pad_r[0], pad_r[1]};
  if (!IRLAB_OK(dnnl_convolution_forward_primitive_desc_create(
          &pd, irlab_dnnl_engine, dnnl_forward_inference, dnnl_convolution_direct, any[0],
          any[1], bias_md, any[2], s, d, pl, pr, attr))) pd = NULL;
  for (int i = 0; i < 3; ++i) if (any[i]) dnnl_memory_desc_destroy(any[i]);
  if (attr) dnnl_primitive_attr_destroy(attr);
  int arg[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST};
  dnnl_memory_desc_t plain[4] = {irlab_dnnl_md(4, src, 0), irlab_dnnl_md(wei_ndims, wei, 0),
                                 bias_md, irlab_dnnl_md(4, dst, 0)};
  int output[4] = {0, 0, 0, 1}, constant[4] = {0, const_weights, const_weights, 0};
  if (!bias) {
    arg[2] = arg[3], plain[2] = plain[3], output[2] = 1, constant[2] = 0;
  }
  return irlab_dnnl_setup(op, pd, bias ? 4 : 3, arg, plain, output, constant);
}

/* Inner product (Relay's dense: dst = src * weights^T [+ bias]), ReLU fused if asked.
   Arguments at run: src, weights, [bias,] dst. */
static int irlab_dnnl_dense(irlab_dnnl_op* op, const int64_t* src, const int64_t* wei,
                            const int64_t* bias, const int64_t* dst, int relu,
                            int const_weights) {
  dnnl_memory_desc_t any[3] = {irlab_dnnl_md(2, src, 1), irlab_dnnl_md(2, wei, 1),
                               irlab_dnnl_md(2, dst, 1)};
  dnnl_memory_desc_t bias_md = bias ? irlab_dnnl_md(1, bias, 0) : NULL;
  dnnl_primitive_attr_t attr = irlab_dnnl_attr(relu);
  dnnl_primitive_desc_t pd = NULL;
  if (!IRLAB_OK(dnnl_inner_product_forward_primitive_desc_create(
          &pd, irlab_dnnl_engine, dnnl_forward_inference, any[0], any[1], bias_md, any[2],
          attr))) pd = NULL;
  for (int i = 0; i < 3; ++i) if (any[i]) dnnl_memory_desc_destroy(any[i]);
  if (attr) dnnl_primitive_attr_destroy(attr);
  int arg[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST};
  dnnl_memory_desc_t plain[4] = {irlab_dnnl_md(2, src, 0), irlab_dnnl_md(2, wei, 0), bias_md,
                                 irlab_dnnl_md(2, dst, 0)};
  int output[4] = {0, 0, 0, 1}, constant[4] = {0, const_weights, const_weights, 0};
  if (!bias) {
    arg[2] = arg[3], plain[2] = plain[3], output[2] = 1, constant[2] = 0;
  }
  return irlab_dnnl_setup(op, pd, bias ? 4 : 3, arg, plain, output, constant);
}

/* ReLU of a plain array. Arguments at run: src, dst. */
static int irlab_dnnl_relu(irlab_dnnl_op* op, int ndims, const int64_t* dims) {
  dnnl_memory_desc_t md = irlab_dnnl_md(ndims, dims, 0);
  dnnl_primitive_desc_t pd = NULL;
  if (!md || !IRLAB_OK(dnnl_eltwise_forward_primitive_desc_create(
          &pd, irlab_dnnl_engine, dnnl_forward_inference, dnnl_eltwise_relu, md, md, 0.0f,
          0.0f, NULL))) pd = NULL;
  int arg[2] = {DNNL_ARG_SRC, DNNL_ARG_DST}, output[2] = {0, 1}, constant[2] = {0, 0};
  dnnl_memory_desc_t plain[2] = {md, irlab_dnnl_md(ndims, dims, 0)};
  return irlab_dnnl_setup(op, pd, 2, arg, plain, output, constant);
}

/* Elementwise add; src1 broadcasts (numpy rules, dims padded to ndims).
   Arguments at run: src0, src1, dst. */
static int irlab_dnnl_add(irlab_dnnl_op* op, int ndims, const int64_t* dims0,
                          const int64_t* dims1) {
  dnnl_memory_desc_t a = irlab_dnnl_md(ndims, dims0, 0), b = irlab_dnnl_md(ndims, dims1, 0);
  dnnl_memory_desc_t c = irlab_dnnl_md(ndims, dims0, 0);
  dnnl_primitive_desc_t pd = NULL;
  if (!a || !b || !c || !IRLAB_OK(dnnl_binary_primitive_desc_create(
          &pd, irlab_dnnl_engine, dnnl_binary_add, a, b, c, NULL))) pd = NULL;
  int arg[3] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST};
  int output[3] = {0, 0, 1}, constant[3] = {0, 0, 0};
  dnnl_memory_desc_t plain[3] = {a, b, c};
  return irlab_dnnl_setup(op, pd, 3, arg, plain, output, constant);
}

/* 2-D max or average pooling over NCHW. Arguments at run: src, dst. */
static int irlab_dnnl_pool(irlab_dnnl_op* op, dnnl_alg_kind_t alg, const int64_t* src,
                           const int64_t* dst, const int64_t* kernel, const int64_t* strides,
                           const int64_t* dilates, const int64_t* pad_l,
                           const int64_t* pad_r) {
  dnnl_memory_desc_t a = irlab_dnnl_md(4, src, 0), b = irlab_dnnl_md(4, dst, 0);
  dnnl_primitive_desc_t pd = NULL;
  dnnl_dims_t k = {kernel[0], kernel[1]}, s = {strides[0], strides[1]};
  dnnl_dims_t d = {dilates[0], dilates[1]}, pl = {pad_l[0], pad_l[1]};
  dnnl_dims_t pr = {pad_r[0], pad_r[1]};
  if (!a || !b || !IRLAB_OK(dnnl_pooling_forward_primitive_desc_create(
          &pd, irlab_dnnl_engine, dnnl_forward_inference, alg, a, b, s, k, d, pl, pr,
          NULL))) pd = NULL;
  int arg[2] = {DNNL_ARG_SRC, DNNL_ARG_DST}, output[2] = {0, 1}, constant[2] = {0, 0};
  dnnl_memory_desc_t plain[2] = {a, b};
  return irlab_dnnl_setup(op, pd, 2, arg, plain, output, constant);
}
/* ---- end of the helpers ---- */
"""

__all__ = ["SUPPORT_C"]
