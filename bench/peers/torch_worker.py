#!/usr/bin/python3
"""PyTorch worker of the peer benchmark (contenders torch-eager, torch-script).

    /usr/bin/python3 torch_worker.py --mode eager|script --threads N

Speaks the JSON-lines protocol of bench/peers/PROTOCOL.md on stdin/stdout:
one request per line, one reply per line; diagnostics go to stderr. Models
are ONNX files executed op by op with torch (onnx_torch.py); in script mode
the module is torch.jit.trace'd on the request's example inputs and frozen.
Runs only under /usr/bin/python3, where the Debian torch/onnx/numpy live.
"""

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_torch import build_module  # noqa: E402

DTYPES = {"float32": "<f4", "int32": "<i4", "int64": "<i8"}
CONTENDERS = {"eager": "torch-eager", "script": "torch-script"}


def read_tensor(desc):
    """A protocol tensor description -> torch tensor (read before timing)."""
    count = int(np.prod(desc["shape"], dtype=np.int64))
    array = np.fromfile(desc["file"], dtype=DTYPES[desc["dtype"]], count=count,
                        offset=int(desc.get("offset", 0)))
    if array.size != count:
        raise ValueError(f"{desc['file']}: {array.size} elements, expected {count}")
    return torch.from_numpy(array.reshape(desc["shape"]))


def read_inputs(descs, names):
    """Tensors in the model's input order, matched by name."""
    by_name = {d["name"]: read_tensor(d) for d in descs}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise ValueError(f"missing input(s) {', '.join(missing)}")
    return [by_name[n] for n in names]


def write_outputs(outputs, names, output_dir, prefix):
    os.makedirs(output_dir, exist_ok=True)
    descs = []
    for k, (name, tensor) in enumerate(zip(names, outputs)):
        array = np.ascontiguousarray(tensor.detach().numpy())
        path = os.path.join(output_dir, f"{prefix}out{k}.bin")
        array.tofile(path)
        descs.append({"name": name, "dtype": array.dtype.name,
                      "shape": list(array.shape), "file": path, "offset": 0})
    return descs


def model_io(path):
    """Input names (initializers excluded) and output names of an ONNX file."""
    graph = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    return ([i.name for i in graph.input if i.name not in inits],
            [o.name for o in graph.output])


def timed_call(model, inputs):
    start = time.perf_counter_ns()
    outputs = model(*inputs)
    return outputs, (time.perf_counter_ns() - start) / 1000.0


class Worker:
    def __init__(self, mode):
        self.mode = mode
        self.models = {}  # id -> (callable, input names, output names)

    def grad_mode(self):
        # TorchScript modules run under no_grad; eager under inference_mode.
        return torch.no_grad() if self.mode == "script" else torch.inference_mode()

    def load(self, req):
        inputs, outputs = model_io(req["model"])
        example = read_inputs(req.get("example") or [], inputs) if self.mode == "script" else []
        start = time.perf_counter_ns()
        model = build_module(req["model"], self.mode, example)
        load_us = (time.perf_counter_ns() - start) / 1000.0
        self.models[req["id"]] = (model, inputs, outputs)
        return {"load_us": load_us}

    def run(self, req):
        if req["id"] not in self.models:
            raise KeyError(f"no model loaded under id '{req['id']}'")
        model, in_names, out_names = self.models[req["id"]]
        inputs = read_inputs(req["inputs"], in_names)
        for _ in range(int(req.get("warmup", 0))):
            model(*inputs)
        times, outputs = [], None
        for _ in range(int(req.get("iters", 1))):
            outputs, us = timed_call(model, inputs)
            times.append(us)
        if outputs is None:
            outputs = model(*inputs)
        return {"times_us": times,
                "outputs": write_outputs(outputs, out_names, req["output_dir"], "")}

    def stream(self, req):
        in_names, out_names = model_io(req["model"])
        calls = [read_inputs(c, in_names) for c in req["calls"]]
        example = calls[0] if calls else []
        start = time.perf_counter_ns()
        model = build_module(req["model"], self.mode, example)
        create_us = (time.perf_counter_ns() - start) / 1000.0
        results, call_us = [], []
        for inputs in calls:
            outputs, us = timed_call(model, inputs)
            results.append(outputs)
            call_us.append(us)
        total_us = (time.perf_counter_ns() - start) / 1000.0
        descs = [write_outputs(o, out_names, req["output_dir"], f"call{i}_")
                 for i, o in enumerate(results)]
        return {"create_us": create_us, "call_us": call_us, "total_us": total_us,
                "outputs": descs}

    def handle(self, line):
        req = json.loads(line)
        op = req.get("op")
        if op not in ("load", "run", "stream"):
            raise ValueError(f"unknown op '{op}'")
        with self.grad_mode():
            return getattr(self, op)(req)


def protocol_stream():
    """The real stdout, for replies only; fd 1 then points at stderr.

    Anything a library prints (Python or C++) lands on stderr instead of
    corrupting the reply lines.
    """
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def reply(out, obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def serve(worker, out):
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            if json.loads(line).get("op") == "quit":
                reply(out, {"ok": True})
                return
            result = worker.handle(line)
            reply(out, {"ok": True, **result})
        except Exception as e:  # noqa: BLE001 - every failure becomes a reply
            print(f"torch_worker: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            reply(out, {"ok": False, "error": f"{type(e).__name__}: {e}"})


def main():
    out = protocol_stream()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(CONTENDERS), required=True)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    reply(out, {"ok": True, "contender": CONTENDERS[args.mode],
           "versions": {"torch": torch.__version__, "numpy": np.__version__,
                        "onnx": onnx.__version__, "python": platform.python_version()}})
    serve(Worker(args.mode), out)


if __name__ == "__main__":
    main()
