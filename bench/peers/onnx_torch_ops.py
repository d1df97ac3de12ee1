"""Torch implementations of the ONNX operators the PyTorch peer worker runs.

Used by onnx_torch.py; not a program of its own. Each ONNX operator has a
*builder* that reads the node's attributes and constant inputs once, at load,
and returns a function of the node's runtime inputs (None for an omitted
optional input) that returns one tensor or a tuple of tensors. Anything a
builder cannot honour raises Unsupported at load, so a model either runs
faithfully or is refused with a message that names the node.

Supported (default domain, opsets 13-17): Add Sub Mul Div Neg Abs Relu Tanh
Sigmoid Exp Log Sqrt Min Max Pow Softplus Clip Identity Cast Constant
ConstantOfShape Shape Gather Slice Concat Unsqueeze Squeeze Reshape Transpose
ReduceMean ReduceSum Gemm MatMul Conv (1-D to 3-D) LSTM (forward, layout 0).

Shape values (outputs of Shape, Gather on them, Concat ...) stay int64 torch
tensors and are turned into size lists only where an op needs one, through
int_list(): under torch.jit.trace that keeps them symbolic, so a traced
module still follows input shapes that change between calls.
"""

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper


class Unsupported(Exception):
    """An operator, attribute or input the worker cannot run faithfully."""


# ONNX TensorProto element types the executor handles.
ONNX_DTYPES = {
    1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16,
    6: torch.int32, 7: torch.int64, 9: torch.bool, 10: torch.float16,
    11: torch.float64,
}


class NodeCtx:
    """One node at load time: its decoded attributes and constant inputs.

    attr() records which attributes a builder read, so that the caller can
    refuse a node carrying an attribute nobody looked at (check_attrs).
    """

    def __init__(self, node, const_values):
        self.node = node
        self.name = node.name or (node.output[0] if node.output else "?")
        self.attrs = {a.name: decode_attr(a) for a in node.attribute}
        self.used = set()
        self._consts = const_values

    def attr(self, name, default=None):
        self.used.add(name)
        return self.attrs.get(name, default)

    def has_input(self, i):
        return i < len(self.node.input) and self.node.input[i] != ""

    def const(self, i):
        """numpy value of input i when it is known at load, else None."""
        if not self.has_input(i):
            return None
        return self._consts.get(self.node.input[i])

    def const_ints(self, i):
        value = self.const(i)
        return None if value is None else [int(v) for v in value.reshape(-1)]

    def refuse(self, what):
        raise Unsupported(f"node '{self.name}' ({self.node.op_type}): {what}")

    def check_attrs(self):
        unknown = sorted(set(self.attrs) - self.used)
        if unknown:
            self.refuse(f"unsupported attribute(s) {', '.join(unknown)}")


def decode_attr(attr):
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if attr.type == attr.TENSOR:
        return numpy_helper.to_array(value)
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def int_list(t):
    """A 1-D int64 tensor as a size list; symbolic while tracing."""
    if torch.jit.is_tracing():
        return list(t.unbind(0))
    return t.tolist()


def norm_axis(axis, rank):
    return axis + rank if axis < 0 else axis


# ---- elementwise -----------------------------------------------------------

UNARY = {
    "Neg": torch.neg, "Abs": torch.abs, "Relu": torch.relu, "Tanh": torch.tanh,
    "Sigmoid": torch.sigmoid, "Exp": torch.exp, "Log": torch.log,
    "Sqrt": torch.sqrt, "Softplus": F.softplus,
}

BINARY = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Pow": torch.pow}


def build_unary(ctx):
    return UNARY[ctx.node.op_type]


def build_binary(ctx):
    return BINARY[ctx.node.op_type]


def build_div(ctx):
    def div(a, b):
        # ONNX integer division truncates; torch.div would return floats.
        if a.is_floating_point() or b.is_floating_point():
            return torch.div(a, b)
        return torch.div(a, b, rounding_mode="trunc")
    return div


def build_variadic(ctx):
    pair = torch.maximum if ctx.node.op_type == "Max" else torch.minimum

    def reduce(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = pair(out, x)
        return out
    return reduce


def build_identity(ctx):
    return lambda x: x


def build_clip(ctx):
    # Opset 6 carried the bounds as attributes; 11+ as optional inputs.
    lo, hi = ctx.attr("min"), ctx.attr("max")
    lo_c, hi_c = ctx.const(1), ctx.const(2)
    lo = float(lo_c) if lo_c is not None else lo
    hi = float(hi_c) if hi_c is not None else hi
    dynamic = (ctx.has_input(1) and lo_c is None) or (ctx.has_input(2) and hi_c is None)
    if not dynamic:
        return lambda x, *_: torch.clamp(x, lo, hi)
    # torch.clamp takes two numbers or two tensors, not one of each.
    lo_t = None if lo is None else torch.tensor(lo)
    hi_t = None if hi is None else torch.tensor(hi)

    def clip_dynamic(x, lo_in=None, hi_in=None):
        return torch.clamp(x, lo_t if lo_in is None else lo_in,
                           hi_t if hi_in is None else hi_in)
    return clip_dynamic


def build_cast(ctx):
    to = ctx.attr("to")
    if to not in ONNX_DTYPES:
        ctx.refuse(f"cast to element type {to}")
    dtype = ONNX_DTYPES[to]
    return lambda x: x.to(dtype)


# ---- constants and shapes ----------------------------------------------------

def build_constant(ctx):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in ctx.attrs:
            value = np.array(ctx.attr(key))
            if key.startswith("value_float"):
                value = value.astype(np.float32)
            elif key.startswith("value_int"):
                value = value.astype(np.int64)
            # np.array copied it; np.ascontiguousarray would make 0-d 1-D.
            tensor = torch.from_numpy(value)
            return lambda: tensor
    ctx.refuse("only value/value_float(s)/value_int(s) are supported")


def build_constant_of_shape(ctx):
    value = ctx.attr("value")
    # A 0-d fill value expands to any shape, the empty one included.
    fill = torch.zeros(()) if value is None else torch.from_numpy(value.reshape(()).copy())

    def constant_of_shape(shape):
        return fill.expand(int_list(shape)).contiguous()
    return constant_of_shape


def build_shape(ctx):
    start, end = ctx.attr("start", 0), ctx.attr("end")

    def shape(x):
        s = torch._shape_as_tensor(x)
        return s if start == 0 and end is None else s[start:end]
    return shape


def build_gather(ctx):
    axis = ctx.attr("axis", 0)
    index = ctx.const(1)
    if index is not None and index.ndim == 0:
        i = int(index)

        def gather_scalar(x, _):
            a = norm_axis(axis, x.dim())
            return x.select(a, i)
        return gather_scalar

    def gather(x, idx):
        a = norm_axis(axis, x.dim())
        idx = torch.where(idx < 0, idx + x.shape[a], idx)
        flat = torch.index_select(x, a, idx.reshape(-1))
        return flat.reshape(x.shape[:a] + idx.shape + x.shape[a + 1:])
    return gather


def build_concat(ctx):
    axis = ctx.attr("axis")
    return lambda *xs: torch.cat(xs, axis)


def build_slice(ctx):
    consts = [ctx.const_ints(i) for i in range(1, 5)]
    dynamic = any(ctx.has_input(i) and consts[i - 1] is None for i in range(1, 5))
    if dynamic:
        return slice_dynamic
    starts, ends, axes, steps = consts
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)
    if any(s == 0 for s in steps):
        ctx.refuse("step 0")
    spec = list(zip(axes, starts, ends, steps))
    return lambda x, *_: apply_slices(x, spec)


def slice_dynamic(x, starts, ends, axes=None, steps=None):
    starts, ends = int_list(starts), int_list(ends)
    axes = list(range(len(starts))) if axes is None else axes.tolist()
    steps = [1] * len(starts) if steps is None else steps.tolist()
    return apply_slices(x, list(zip(axes, starts, ends, steps)))


def apply_slices(x, spec):
    index = [slice(None)] * x.dim()
    for axis, start, end, step in spec:
        axis = norm_axis(axis, x.dim())
        if isinstance(step, int) and step < 0:
            x, index = negative_step(x, index, axis, start, end, step)
        else:
            index[axis] = slice(start, end, step)
    return x[tuple(index)]


def negative_step(x, index, axis, start, end, step):
    # torch indexing has no negative steps: flip the axis and slice forward.
    n = x.shape[axis]
    start = min(max(start + n if start < 0 else start, 0), n - 1)
    end = min(max(end + n if end < 0 else end, -1), n - 1)
    x = torch.flip(x, [axis])
    index[axis] = slice(n - 1 - start, n - 1 - end, -step)
    return x, index


def axes_of(ctx, input_index):
    """Axes from the attribute (older opsets) or a constant input (13+)."""
    axes = ctx.attr("axes")
    if ctx.has_input(input_index):
        axes = ctx.const_ints(input_index)
        if axes is None:
            ctx.refuse("axes must be a constant")
    return axes


def build_unsqueeze(ctx):
    axes = axes_of(ctx, 1)

    def unsqueeze(x, *_):
        rank = x.dim() + len(axes)
        for a in sorted(norm_axis(a, rank) for a in axes):
            x = x.unsqueeze(a)
        return x
    return unsqueeze


def build_squeeze(ctx):
    axes = axes_of(ctx, 1)

    def squeeze(x, *_):
        if axes is None:
            return x.squeeze()
        for a in sorted((norm_axis(a, x.dim()) for a in axes), reverse=True):
            x = x.squeeze(a)
        return x
    return squeeze


def build_reshape(ctx):
    allowzero = ctx.attr("allowzero", 0)
    shape = ctx.const_ints(1)
    if shape is not None:
        return lambda x, _: x.reshape(resolve_shape(x, shape, allowzero))

    def reshape(x, s):
        return x.reshape(resolve_shape(x, int_list(s), allowzero))
    return reshape


def resolve_shape(x, shape, allowzero):
    if allowzero:
        return shape
    # ONNX 0 means "copy this dimension of the input"; torch would make it empty.
    # While tracing, an entry may be a 0-d tensor; only ints are compared.
    return [x.shape[i] if isinstance(d, int) and d == 0 else d
            for i, d in enumerate(shape)]


def build_transpose(ctx):
    perm = ctx.attr("perm")
    if perm is None:
        return lambda x: x.permute(list(range(x.dim() - 1, -1, -1)))
    return lambda x: x.permute(perm)


# ---- reductions -------------------------------------------------------------

def build_reduce(ctx):
    keepdims = bool(ctx.attr("keepdims", 1))
    noop_empty = ctx.attr("noop_with_empty_axes", 0)
    axes = axes_of(ctx, 1)
    reduce = torch.mean if ctx.node.op_type == "ReduceMean" else torch.sum

    def reduce_op(x, *_):
        if not axes:
            if noop_empty:
                return x
            dims = list(range(x.dim()))
        else:
            dims = [norm_axis(a, x.dim()) for a in axes]
        return reduce(x, dims, keepdim=keepdims)
    return reduce_op


# ---- linear algebra -----------------------------------------------------------

def build_matmul(ctx):
    return torch.matmul


def build_gemm(ctx):
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    trans_a, trans_b = ctx.attr("transA", 0), ctx.attr("transB", 0)
    c = ctx.const(2)
    plain_bias = not ctx.has_input(2) or (c is not None and c.ndim == 1)
    if alpha == 1.0 and beta == 1.0 and not trans_a and trans_b and plain_bias:
        # The nn.Linear case: what a PyTorch model calls.
        return lambda a, b, c=None: F.linear(a, b, c)

    def gemm(a, b, c=None):
        a = a.t() if trans_a else a
        b = b.t() if trans_b else b
        if c is None:
            return torch.mm(a, b) * alpha if alpha != 1.0 else torch.mm(a, b)
        return torch.addmm(c, a, b, beta=beta, alpha=alpha)
    return gemm


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def build_conv(ctx):
    weight = ctx.const(1)
    kernel = ctx.attr("kernel_shape")
    spatial = len(kernel) if kernel else (weight.ndim - 2 if weight is not None else None)
    if spatial not in CONV:
        ctx.refuse("needs a constant weight or kernel_shape of 1 to 3 dimensions")
    strides = ctx.attr("strides") or [1] * spatial
    dilations = ctx.attr("dilations") or [1] * spatial
    group = ctx.attr("group", 1)
    pads = ctx.attr("pads") or [0] * (2 * spatial)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    conv = CONV[spatial]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        def conv_same(x, w, b=None):
            pad = same_pads(x, w, strides, dilations, auto_pad == "SAME_UPPER")
            return conv(F.pad(x, pad), w, b, strides, 0, dilations, group)
        return conv_same
    if auto_pad == "VALID":
        pads = [0] * (2 * spatial)
    elif auto_pad != "NOTSET":
        ctx.refuse(f"auto_pad {auto_pad}")
    begin, end = pads[:spatial], pads[spatial:]
    if begin == end:
        return lambda x, w, b=None: conv(x, w, b, strides, begin, dilations, group)
    # torch pads symmetrically; pad the input explicitly when ONNX does not.
    pad = [p for i in reversed(range(spatial)) for p in (begin[i], end[i])]
    return lambda x, w, b=None: conv(F.pad(x, pad), w, b, strides, 0, dilations, group)


def same_pads(x, w, strides, dilations, upper):
    pad = []
    for i in reversed(range(len(strides))):
        size, k = x.shape[2 + i], w.shape[2 + i]
        out = -(-size // strides[i])
        total = max(0, (out - 1) * strides[i] + (k - 1) * dilations[i] + 1 - size)
        small = total // 2
        pad += [small, total - small] if upper else [total - small, small]
    return pad


# ---- recurrent ----------------------------------------------------------------

# ONNX stacks the LSTM gates as i, o, f, c; torch as i, f, g(=c), o.
ONNX_TO_TORCH_GATES = [0, 2, 3, 1]


def build_lstm(ctx):
    check_lstm_attrs(ctx)
    hidden = ctx.attr("hidden_size")
    params = lstm_params(ctx, hidden)

    def lstm(x, w, r, b=None, lens=None, h0=None, c0=None, p=None):
        if h0 is None:
            h0 = x.new_zeros([1, x.shape[1], hidden])
        if c0 is None:
            c0 = x.new_zeros([1, x.shape[1], hidden])
        y, h, c = torch._VF.lstm(x, (h0, c0), params, True, 1, 0.0, False, False, False)
        return y.unsqueeze(1), h, c
    return lstm


def check_lstm_attrs(ctx):
    if ctx.attr("direction", "forward") != "forward":
        ctx.refuse(f"direction {ctx.attrs['direction']} (only forward)")
    if ctx.attr("layout", 0) != 0:
        ctx.refuse("layout 1 (only 0)")
    if ctx.attr("input_forget", 0):
        ctx.refuse("input_forget")
    if ctx.attr("clip") is not None:
        ctx.refuse("clip")
    activations = ctx.attr("activations")
    if activations not in (None, ["Sigmoid", "Tanh", "Tanh"]):
        ctx.refuse(f"activations {activations}")
    ctx.attr("activation_alpha")
    ctx.attr("activation_beta")
    if ctx.has_input(4):
        ctx.refuse("sequence_lens input")
    if ctx.has_input(7):
        ctx.refuse("peephole input P")


def lstm_params(ctx, hidden):
    """W_ih, W_hh, b_ih, b_hh in torch's gate order, converted once."""
    w, r, b = ctx.const(1), ctx.const(2), ctx.const(3)
    if w is None or r is None or (ctx.has_input(3) and b is None):
        ctx.refuse("W, R and B must be constants")
    if b is None:
        b = np.zeros((1, 8 * hidden), np.float32)

    def reorder(m):
        return torch.from_numpy(np.concatenate(
            [np.split(m, 4)[g] for g in ONNX_TO_TORCH_GATES]).copy())
    return [reorder(w[0]), reorder(r[0]),
            reorder(b[0, :4 * hidden]), reorder(b[0, 4 * hidden:])]


BUILDERS = {
    **{op: build_unary for op in UNARY},
    **{op: build_binary for op in BINARY},
    "Div": build_div, "Min": build_variadic, "Max": build_variadic,
    "Identity": build_identity, "Clip": build_clip, "Cast": build_cast,
    "Constant": build_constant, "ConstantOfShape": build_constant_of_shape,
    "Shape": build_shape, "Gather": build_gather, "Concat": build_concat,
    "Slice": build_slice, "Unsqueeze": build_unsqueeze, "Squeeze": build_squeeze,
    "Reshape": build_reshape, "Transpose": build_transpose,
    "ReduceMean": build_reduce, "ReduceSum": build_reduce,
    "MatMul": build_matmul, "Gemm": build_gemm, "Conv": build_conv,
    "LSTM": build_lstm,
}


def build_node(node, const_values):
    """The runtime function of one ONNX node; raises Unsupported at load."""
    ctx = NodeCtx(node, const_values)
    if node.domain not in ("", "ai.onnx"):
        ctx.refuse(f"domain '{node.domain}'")
    builder = BUILDERS.get(node.op_type)
    if builder is None:
        ctx.refuse("operator not supported")
    fn = builder(ctx)
    ctx.check_attrs()
    return ctx.name, fn
