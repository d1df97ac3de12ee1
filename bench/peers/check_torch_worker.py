#!/usr/bin/python3
"""Self-test of torch_worker.py in both modes (eager and script).

    /usr/bin/python3 bench/peers/check_torch_worker.py [--canary PATH]

Starts the worker as a subprocess per mode and drives it through the
protocol of PROTOCOL.md (load, run, stream, quit) on three models:
  conv  samples/flowmeter/models/flowmeter_conv.onnx, x float32 [4,7,64]
  lstm  samples/vehicle/models/vehicle_lstm.onnx,     x float32 [3,20,5]
  elem  an elementwise model generated here (broadcasting constants,
        dynamic dims, two outputs)
Outputs are compared with a reference (numpy for elem; the Canary CLI's
interpreter, `canary run --no-jit`, for conv and lstm) within
|a-b| <= 1e-4 + 1e-3*|b|. stream calls change the input shape between calls,
which checks that shape-computing ops follow it. An LSTM with sequence_lens
(flowmeter_lstm.onnx) must be refused with ok:false while the worker keeps
serving. Prints PASS/FAIL lines and a summary; exits 1 on any failure.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(HERE, "torch_worker.py")
SAMPLES = os.path.join(ROOT, "samples")
CONV = os.path.join(SAMPLES, "flowmeter/models/flowmeter_conv.onnx")
LSTM = os.path.join(SAMPLES, "vehicle/models/vehicle_lstm.onnx")
UNSUPPORTED = os.path.join(SAMPLES, "flowmeter/models/flowmeter_lstm.onnx")

# name -> (model path or None for the generated one, run shape, stream shapes)
CASES = {
    "conv": (CONV, [4, 7, 64], [[4, 7, 64], [2, 7, 40]]),
    "lstm": (LSTM, [3, 20, 5], [[3, 20, 5], [2, 12, 5]]),
    "elem": (None, [2, 3, 5], [[2, 3, 5], [4, 1, 5]]),
}


class Check:
    """Collects PASS/FAIL lines."""

    def __init__(self):
        self.failures = 0

    def __call__(self, ok, what):
        print(f"{'PASS' if ok else 'FAIL'}  {what}", flush=True)
        self.failures += 0 if ok else 1
        return ok


# ---- the generated elementwise model -------------------------------------------

ELEM_A = np.array([0.5, -1.0, 2.0, 1.5, -0.25], np.float32)
ELEM_B = np.array([[0.1, 0.2, -0.3, 0.4, -0.5]], np.float32)
ELEM_C = np.array(-0.2, np.float32)


def make_elem_model(path):
    const = helper.make_tensor
    nodes = [
        helper.make_node("Mul", ["x", "a"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["s"]),
        helper.make_node("Tanh", ["s"], ["t"]),
        helper.make_node("Max", ["t", "c"], ["mx"]),
        helper.make_node("Sigmoid", ["x"], ["sg"]),
        helper.make_node("Mul", ["mx", "sg"], ["p"]),
        helper.make_node("Relu", ["p"], ["y"]),
    ]
    inits = [const("a", TensorProto.FLOAT, [5], ELEM_A),
             const("b", TensorProto.FLOAT, [1, 5], ELEM_B.reshape(-1)),
             const("c", TensorProto.FLOAT, [], [float(ELEM_C)])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "M", 5])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", "M", 5])
            for n in ("y", "t")]
    graph = helper.make_graph(nodes, "elem", [x], outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def elem_reference(x):
    t = np.tanh(x * ELEM_A + ELEM_B)
    sg = 1.0 / (1.0 + np.exp(-x))
    return {"y": np.maximum(np.maximum(t, ELEM_C) * sg, 0.0), "t": t}


# ---- references, inputs, outputs -------------------------------------------------

def canary_reference(canary, model, x, workdir, tag):
    """Outputs of `canary run --no-jit` as {name: array}."""
    src = os.path.join(workdir, f"{tag}_x.npy")
    out_dir = os.path.join(workdir, f"{tag}_ref")
    np.save(src, x)
    subprocess.run([canary, "run", model, "-i", f"x={src}", "--no-jit",
                    "--output-dir", out_dir], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return {f[:-4]: np.load(os.path.join(out_dir, f))
            for f in os.listdir(out_dir) if f.endswith(".npy")}


class TensorFile:
    """Packs input tensors into one file, exercising the `offset` field."""

    def __init__(self, path):
        self.path = path
        open(path, "wb").close()

    def add(self, name, array):
        offset = os.path.getsize(self.path)
        with open(self.path, "ab") as f:
            f.write(array.astype(array.dtype.newbyteorder("<")).tobytes())
        return {"name": name, "dtype": array.dtype.name, "shape": list(array.shape),
                "file": self.path, "offset": offset}


def read_output(desc):
    count = int(np.prod(desc["shape"], dtype=np.int64))
    return np.fromfile(desc["file"], desc["dtype"], count,
                       offset=desc.get("offset", 0)).reshape(desc["shape"])


def compare(outputs, reference):
    """'' when every output matches the reference, else what differs."""
    for desc in outputs:
        got, want = read_output(desc), reference.get(desc["name"])
        if want is None or got.shape != want.shape:
            return f"{desc['name']}: shape {got.shape} vs {None if want is None else want.shape}"
        err = np.abs(got - want) - (1e-4 + 1e-3 * np.abs(want))
        if not np.all(err <= 0):
            return f"{desc['name']}: max excess error {float(err.max()):.3g}"
    if len(outputs) != len(reference):
        return f"{len(outputs)} outputs, reference has {len(reference)}"
    return ""


# ---- the worker ---------------------------------------------------------------

class WorkerProc:
    def __init__(self, mode, threads, log_path):
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, WORKER, "--mode", mode, "--threads", str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.hello = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("worker closed its stdout")
        return json.loads(line)

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        reply = self.ask({"op": "quit"})
        code = self.proc.wait(timeout=30)
        self.log.close()
        return reply.get("ok") is True and code == 0


# ---- the checks ------------------------------------------------------------------

class Suite:
    def __init__(self, canary, workdir, threads):
        self.canary, self.workdir, self.threads = canary, workdir, threads
        self.check = Check()
        self.timings = []
        self.elem_path = os.path.join(workdir, "elem.onnx")
        make_elem_model(self.elem_path)
        self.tensors = TensorFile(os.path.join(workdir, "inputs.bin"))
        self.data = {}  # (case, shape) -> (input desc, reference)
        rng = np.random.default_rng(7)
        for case, (_, run_shape, stream_shapes) in CASES.items():
            for shape in [run_shape] + stream_shapes:
                self._prepare(case, tuple(shape), rng)

    def _prepare(self, case, shape, rng):
        if (case, shape) in self.data:
            return
        x = rng.standard_normal(shape).astype(np.float32)
        model = CASES[case][0]
        tag = f"{case}_{'x'.join(map(str, shape))}"
        ref = elem_reference(x) if model is None else \
            canary_reference(self.canary, model, x, self.workdir, tag)
        self.data[(case, shape)] = (self.tensors.add("x", x), ref)

    def model_path(self, case):
        return CASES[case][0] or self.elem_path

    def run_mode(self, mode):
        worker = WorkerProc(mode, self.threads, os.path.join(self.workdir, f"{mode}.log"))
        hello = worker.hello
        self.check(hello.get("ok") is True and hello.get("contender") == f"torch-{mode}"
                   and {"torch", "numpy", "onnx", "python"} <= set(hello.get("versions", {})),
                   f"{mode}: hello line {json.dumps(hello)}")
        self.check_unsupported(worker, mode)
        for case in CASES:
            self.check_case(worker, mode, case)
        self.check(worker.close(), f"{mode}: quit replies ok and exits 0")

    def check_unsupported(self, worker, mode):
        x = self.data[("conv", (4, 7, 64))][0]
        lens = self.tensors.add("lens", np.array([64, 50, 30, 64], np.int32))
        reply = worker.ask({"op": "load", "id": "bad", "model": UNSUPPORTED,
                            "example": [x, lens]})
        self.check(reply.get("ok") is False and "sequence_lens" in reply.get("error", ""),
                   f"{mode}: LSTM with sequence_lens refused: {reply.get('error')}")
        reply = worker.ask({"op": "run", "id": "bad", "inputs": [], "output_dir": self.workdir})
        self.check(reply.get("ok") is False, f"{mode}: run of an unloaded id refused")

    def check_case(self, worker, mode, case):
        _, run_shape, stream_shapes = CASES[case]
        desc, ref = self.data[(case, tuple(run_shape))]
        out_dir = os.path.join(self.workdir, f"{mode}_{case}")
        load = worker.ask({"op": "load", "id": case, "model": self.model_path(case),
                           "example": [desc]})
        if not self.check(load.get("ok") is True, f"{mode} {case}: load {load}"):
            return
        run = worker.ask({"op": "run", "id": case, "inputs": [desc], "warmup": 3,
                          "iters": 20, "output_dir": out_dir})
        ok = run.get("ok") is True and len(run["times_us"]) == 20
        diff = compare(run["outputs"], ref) if ok else run.get("error")
        self.check(ok and not diff, f"{mode} {case}: run outputs {diff or 'match'}")
        if ok:
            self.timings.append((mode, case, load["load_us"], statistics.median(run["times_us"])))
        self.check_stream(worker, mode, case, stream_shapes, out_dir)

    def check_stream(self, worker, mode, case, shapes, out_dir):
        calls = [[self.data[(case, tuple(s))][0]] for s in shapes]
        reply = worker.ask({"op": "stream", "model": self.model_path(case),
                            "calls": calls, "output_dir": out_dir})
        if not self.check(reply.get("ok") is True and len(reply["call_us"]) == len(shapes),
                          f"{mode} {case}: stream reply {reply.get('error', 'ok')}"):
            return
        for i, shape in enumerate(shapes):
            diff = compare(reply["outputs"][i], self.data[(case, tuple(shape))][1])
            self.check(not diff, f"{mode} {case}: stream call {i} {shape} {diff or 'match'}")

    def report(self):
        print("\nmedian per-call time (us), threads=%d:" % self.threads)
        for mode, case, load_us, median in self.timings:
            print(f"  {mode:6s} {case:5s} load {load_us:9.0f}  call {median:9.1f}")
        verdict = "FAIL" if self.check.failures else "PASS"
        print(f"\n{verdict}: {self.check.failures} failure(s)")
        return 1 if self.check.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--canary", default=os.path.join(ROOT, "build/cli/canary"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="check_torch_worker_") as workdir:
        suite = Suite(args.canary, workdir, args.threads)
        for mode in ("eager", "script"):
            try:
                suite.run_mode(mode)
            except Exception as e:  # noqa: BLE001 - a dead worker is a failure
                suite.check(False, f"{mode}: worker failed: {type(e).__name__}: {e}")
        return suite.report()


if __name__ == "__main__":
    sys.exit(main())
