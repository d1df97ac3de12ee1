"""An ONNX graph as a torch.nn.Module, run op by op with torch operators.

Used by torch_worker.py; not a program of its own. The module is what a
PyTorch user's nn.Module does with the same weights: initializers become
torch tensors once, nodes whose inputs are all constant are evaluated once at
load, and forward() calls one torch function per remaining node (see
onnx_torch_ops.py for the operators). build_module() returns it as is
("eager") or traced with torch.jit.trace and frozen ("script").
"""

import sys
import warnings

import onnx
import torch
from onnx import numpy_helper

from onnx_torch_ops import Unsupported, build_node


class NodeFailed(Exception):
    """A node raised while running; the message names the node."""


class Step:
    """One node at run time: its function and value slots."""

    __slots__ = ("name", "op", "fn", "inputs", "outputs", "free")

    def __init__(self, name, op, fn, inputs, outputs):
        self.name, self.op, self.fn = name, op, fn
        self.inputs, self.outputs, self.free = inputs, outputs, ()


class OnnxModule(torch.nn.Module):
    """forward(*inputs) -> tuple of outputs, in the graph's order."""

    def __init__(self, model):
        super().__init__()
        graph = model.graph
        self.slots = {"": 0}  # slot 0 stays None: an omitted optional input
        self.template = [None]
        const_np = {}
        for init in graph.initializer:
            self._set_const(init.name, numpy_helper.to_array(init), const_np)
        self.input_names = [i.name for i in graph.input if i.name not in const_np]
        for name in self.input_names:
            self._slot(name)
        self.steps = []
        for node in graph.node:
            self._add_node(node, const_np)
        self.output_slots = [self._known_slot(o.name) for o in graph.output]
        self.input_slots = [self.slots[n] for n in self.input_names]
        self._plan_frees()

    def _slot(self, name):
        if name not in self.slots:
            self.slots[name] = len(self.template)
            self.template.append(None)
        return self.slots[name]

    def _known_slot(self, name):
        if name not in self.slots:
            raise Unsupported(f"value '{name}' is used but never produced")
        return self.slots[name]

    def _set_const(self, name, array, const_np):
        const_np[name] = array
        self.template[self._slot(name)] = torch.from_numpy(array.copy())

    def _add_node(self, node, const_np):
        name, fn = build_node(node, const_np)
        inputs = [self._known_slot(n) for n in node.input]
        if all(n == "" or n in const_np for n in node.input):
            # Constant subgraph: evaluate once now, as a runtime would at load.
            results = as_tuple(fn(*[self.template[i] for i in inputs]))
            for out, value in zip(node.output, results):
                if out:
                    self._set_const(out, value.numpy(), const_np)
            return
        outputs = [self._slot(n) if n else 0 for n in node.output]
        self.steps.append(Step(name, node.op_type, fn, inputs, outputs))

    def _plan_frees(self):
        # Drop each intermediate after its last use, as Python's reference
        # counting does in a hand-written forward(): memory gets reused.
        keep = set(self.output_slots) | {0}
        keep |= {i for i, v in enumerate(self.template) if v is not None}
        last = {}
        for k, step in enumerate(self.steps):
            for i in list(step.inputs) + list(step.outputs):
                last[i] = k
        for slot, k in last.items():
            if slot not in keep:
                self.steps[k].free += (slot,)

    def forward(self, *inputs):
        values = list(self.template)
        for slot, x in zip(self.input_slots, inputs):
            values[slot] = x
        for step in self.steps:
            run_step(step, values)
        return tuple(values[i] for i in self.output_slots)


def run_step(step, values):
    try:
        results = as_tuple(step.fn(*[values[i] for i in step.inputs]))
    except Exception as e:
        raise NodeFailed(f"node '{step.name}' ({step.op}): "
                         f"{type(e).__name__}: {e}") from e
    for slot, value in zip(step.outputs, results):
        values[slot] = value
    values[0] = None
    for slot in step.free:
        values[slot] = None


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def build_module(path, mode, example):
    """The model at path as a callable: eager module, or traced and frozen."""
    module = OnnxModule(onnx.load(path)).eval()
    if mode == "eager":
        return module
    with torch.no_grad(), warnings.catch_warnings():
        # Tracer warnings about Python values are expected here; the
        # orchestrator cross-checks outputs of every contender anyway.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(module, tuple(example), check_trace=False)
    try:
        return torch.jit.freeze(traced)
    except Exception as e:  # noqa: BLE001 - any failure leaves the traced module
        print(f"torch_worker: torch.jit.freeze failed ({type(e).__name__}: {e}); "
              "running the traced module unfrozen", file=sys.stderr, flush=True)
        return traced
