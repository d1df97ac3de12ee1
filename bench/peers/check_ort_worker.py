#!/usr/bin/python3
"""Self-test of the ONNX Runtime peer worker (ort_worker.mjs).

Drives the worker over its JSON-lines protocol (PROTOCOL.md) with load, run,
stream and quit requests, and checks its outputs: a generated elementwise
model against numpy, and the flowmeter conv and vehicle LSTM sample models
against the Canary CLI (interpreter only). Needs numpy and onnx, so run it
with the system Python from the repository root:

    /usr/bin/python3 bench/peers/check_ort_worker.py [--canary build/cli/canary]

Prints one PASS/FAIL line per check and exits non-zero if any check fails.
"""
import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONV = os.path.join(ROOT, "samples/flowmeter/models/flowmeter_conv.onnx")
LSTM = os.path.join(ROOT, "samples/vehicle/models/vehicle_lstm.onnx")
REPLY_TIMEOUT_S = 120

failures = []


def check(name, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        failures.append(name)


def close(a, b):
    """The tolerance of the whole harness: |a-b| <= 1e-4 + 1e-3*|b|."""
    if a.shape != b.shape:
        return False, f"shape {list(a.shape)} != {list(b.shape)}"
    err = np.abs(a.astype(np.float64) - b.astype(np.float64))
    bound = 1e-4 + 1e-3 * np.abs(b.astype(np.float64))
    worst = float(np.max(err - bound)) if err.size else 0.0
    return worst <= 0.0, f"max |a-b| {float(err.max()) if err.size else 0.0:.3g}"


# --- the elementwise model and its numpy reference -------------------------

# Constants of shape [8] broadcast over the last dim; scalars over everything.
A = np.linspace(-1.5, 1.5, 8, dtype=np.float32)
B = np.linspace(0.3, -0.3, 8, dtype=np.float32)
C = np.float32(-0.5)
D = np.linspace(0.5, 2.0, 8, dtype=np.float32)
E = np.float32(-0.6)


def make_elementwise(path):
    """x[B, T, 8] -> h = tanh(x*A + B), y = relu(sigmoid(max(h, C))*D + E)."""
    inits = [numpy_helper.from_array(np.asarray(v), n)
             for n, v in (("A", A), ("B", B), ("C", C), ("D", D), ("E", E))]
    nodes = [
        helper.make_node("Mul", ["x", "A"], ["xa"]),
        helper.make_node("Add", ["xa", "B"], ["xab"]),
        helper.make_node("Tanh", ["xab"], ["h"]),
        helper.make_node("Max", ["h", "C"], ["m"]),
        helper.make_node("Sigmoid", ["m"], ["s"]),
        helper.make_node("Mul", ["s", "D"], ["sd"]),
        helper.make_node("Add", ["sd", "E"], ["sde"]),
        helper.make_node("Relu", ["sde"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "elementwise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", 8])],
        # Two outputs, so that the out<k> order is checked too.
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "T", 8]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, ["B", "T", 8])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def elementwise_ref(x):
    h = np.tanh(x * A + B)
    s = 1.0 / (1.0 + np.exp(-np.maximum(h, C)))
    return {"y": np.maximum(s * D + E, 0.0).astype(np.float32), "h": h.astype(np.float32)}


def make_int_model(path):
    """i64[N] -> i64 (a + a), i32[N] -> i32 (b * b): covers the integer dtypes."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "a"], ["a2"]), helper.make_node("Mul", ["b", "b"], ["b2"])],
        "ints",
        [helper.make_tensor_value_info("a", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("b", TensorProto.INT32, ["N"])],
        [helper.make_tensor_value_info("a2", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("b2", TensorProto.INT32, ["N"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


# --- Canary CLI reference ---------------------------------------------------

class CanaryRef:
    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.n = exe, tmp, 0

    def __call__(self, model, x):
        self.n += 1
        d = os.path.join(self.tmp, f"canary{self.n}")
        os.makedirs(d)
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        subprocess.run([self.exe, "run", model, "-i", f"x={xin}", "--no-jit", "--output-dir", d],
                       check=True, stdout=subprocess.DEVNULL)
        names = [o.name for o in onnx.load(model).graph.output]
        return {n: np.load(os.path.join(d, f"{n}.npy")) for n in names}


# --- the worker -------------------------------------------------------------

class Worker:
    def __init__(self, threads):
        self.proc = subprocess.Popen(
            ["node", os.path.join(HERE, "ort_worker.mjs"), "--threads", str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        # A reader thread, so that a hung worker fails the test instead of blocking it.
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read(self):
        try:
            line = self.lines.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            raise RuntimeError("worker did not reply in time")
        if line is None:
            raise RuntimeError(f"worker exited (rc {self.proc.poll()})")
        return json.loads(line)

    def ask(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self.read()


class Packer:
    """Writes input tensors into one file at unaligned offsets (exercises `offset`)."""

    def __init__(self, path):
        self.path = path
        with open(path, "wb") as f:
            f.write(b"\xAB" * 12)

    def add(self, name, x):
        offset = os.path.getsize(self.path)
        with open(self.path, "ab") as f:
            f.write(np.ascontiguousarray(x).tobytes())
        return {"name": name, "dtype": str(x.dtype), "shape": list(x.shape),
                "file": self.path, "offset": offset}


def read_outputs(descs):
    return {d["name"]: np.fromfile(d["file"], dtype=d["dtype"],
                                   count=int(np.prod(d["shape"], dtype=np.int64)),
                                   offset=d.get("offset", 0)).reshape(d["shape"])
            for d in descs}


def compare(label, descs, ref):
    got = read_outputs(descs)
    check(f"{label} output names", list(got) == list(ref), f"{list(got)} vs {list(ref)}")
    for name in ref:
        if name in got:
            ok, detail = close(got[name], ref[name])
            if not np.any(ref[name]):
                ok, detail = False, "reference is all zeros: the inputs test nothing"
            check(f"{label} {name}", ok, detail)


def gauges(rng, n, w):
    """Flowmeter inputs in physical units (choke fraction, bar, K, Sm3/h): the
    model folds its input normalisation in, so standard-normal inputs would
    drive its softplus head to exact zeros and compare nothing."""
    mid = np.array([0.5, 200, 80, 45, 370, 320, 1000], np.float32).reshape(1, 7, 1)
    return (mid * (1 + 0.05 * rng.standard_normal((n, 7, w)))).astype(np.float32)


def median(xs):
    return float(np.median(xs)) if xs else float("nan")


# --- the checks -------------------------------------------------------------

def check_handshake(w):
    hello = w.read()
    check("handshake", hello.get("ok") is True and hello.get("contender") == "onnxruntime"
          and "onnxruntime" in hello.get("versions", {}), json.dumps(hello))


def check_run(w, tmp, pack, label, model, x, ref):
    r = w.ask({"op": "load", "id": label, "model": model, "example": [pack.add("x", x)]})
    check(f"{label} load", r.get("ok") is True and r.get("load_us", 0) > 0, r.get("error", ""))
    r = w.ask({"op": "run", "id": label, "inputs": [pack.add("x", x)], "warmup": 3,
               "iters": 20, "output_dir": os.path.join(tmp, f"run_{label}")})
    if not r.get("ok"):
        check(f"{label} run", False, r.get("error", ""))
        return
    check(f"{label} run", len(r["times_us"]) == 20,
          f"median {median(r['times_us']):.1f} us/call")
    compare(f"{label} run", r["outputs"], ref(x))


def check_stream(w, tmp, pack, label, model, xs, ref):
    out_dir = os.path.join(tmp, f"stream_{label}")
    r = w.ask({"op": "stream", "model": model, "calls": [[pack.add("x", x)] for x in xs],
               "output_dir": out_dir})
    if not r.get("ok"):
        check(f"{label} stream", False, r.get("error", ""))
        return
    sane = (len(r["call_us"]) == len(xs) and len(r["outputs"]) == len(xs)
            and r["total_us"] >= r["create_us"] + sum(r["call_us"]))
    check(f"{label} stream", sane,
          f"create {r['create_us']:.0f} us, calls {[round(t) for t in r['call_us']]} us, "
          f"total {r['total_us']:.0f} us")
    for i, x in enumerate(xs):
        names = [os.path.basename(d["file"]) for d in r["outputs"][i]]
        check(f"{label} stream call{i} files",
              names == [f"call{i}_out{k}.bin" for k in range(len(names))], str(names))
        compare(f"{label} stream call{i}", r["outputs"][i], ref(x))


def check_int_dtypes(w, tmp, pack):
    model = os.path.join(tmp, "ints.onnx")
    make_int_model(model)
    a = np.array([1, -2, 3 << 40], dtype=np.int64)
    b = np.array([7, -8, 9], dtype=np.int32)
    w.ask({"op": "load", "id": "ints", "model": model, "example": []})
    r = w.ask({"op": "run", "id": "ints", "inputs": [pack.add("a", a), pack.add("b", b)],
               "warmup": 0, "iters": 2, "output_dir": os.path.join(tmp, "run_ints")})
    if not r.get("ok"):
        check("int64/int32 run", False, r.get("error", ""))
        return
    got = read_outputs(r["outputs"])
    ok = ([d["dtype"] for d in r["outputs"]] == ["int64", "int32"]
          and np.array_equal(got["a2"], a + a) and np.array_equal(got["b2"], b * b))
    check("int64/int32 run", ok, str({k: v.tolist() for k, v in got.items()}))


def check_errors(w, tmp, pack, elem_model):
    garbage = os.path.join(tmp, "garbage.onnx")
    with open(garbage, "wb") as f:
        f.write(b"this is not an onnx model")
    for label, model in (("missing model", os.path.join(tmp, "missing.onnx")),
                         ("malformed model", garbage)):
        r = w.ask({"op": "load", "id": "elem", "model": model, "example": []})
        check(f"{label} -> ok:false", r.get("ok") is False and bool(r.get("error")),
              r.get("error", "")[:100])
    r = w.ask({"op": "run", "id": "nope", "inputs": [], "warmup": 0, "iters": 1,
               "output_dir": tmp})
    check("unknown id -> ok:false", r.get("ok") is False, r.get("error", "")[:100])
    # A failed load keeps the previous model of that id; a good one replaces it.
    x = np.linspace(-2, 2, 64, dtype=np.float32).reshape(2, 4, 8)
    for label in ("serves after errors", "serves after reload"):
        r = w.ask({"op": "run", "id": "elem", "inputs": [pack.add("x", x)], "warmup": 0,
                   "iters": 1, "output_dir": os.path.join(tmp, "after")})
        ok = r.get("ok") is True
        check(label, ok, r.get("error", ""))
        if ok:
            compare(label, r["outputs"], elementwise_ref(x))
        r = w.ask({"op": "load", "id": "elem", "model": elem_model, "example": []})


def check_quit(w):
    r = w.ask({"op": "quit"})
    try:
        rc = w.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        w.proc.kill()
        rc = None
    check("quit", r == {"ok": True} and rc == 0, f"reply {r}, rc {rc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--canary", default=os.path.join(ROOT, "build/cli/canary"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="check_ort_worker.") as tmp:
        elem = os.path.join(tmp, "elementwise.onnx")
        make_elementwise(elem)
        canary = CanaryRef(args.canary, tmp)
        pack = Packer(os.path.join(tmp, "inputs.bin"))
        w = Worker(args.threads)
        try:
            check_handshake(w)
            normal = lambda *s: rng.standard_normal(s).astype(np.float32)
            check_run(w, tmp, pack, "elem", elem, normal(2, 4, 8), elementwise_ref)
            check_run(w, tmp, pack, "conv", CONV, gauges(rng, 4, 64), lambda x: canary(CONV, x))
            check_run(w, tmp, pack, "lstm", LSTM, normal(3, 20, 5), lambda x: canary(LSTM, x))
            check_stream(w, tmp, pack, "elem", elem,
                         [normal(1, 3, 8), normal(2, 5, 8), normal(2, 4, 8)], elementwise_ref)
            check_stream(w, tmp, pack, "conv", CONV, [gauges(rng, 4, 64), gauges(rng, 2, 32)],
                         lambda x: canary(CONV, x))
            check_stream(w, tmp, pack, "lstm", LSTM, [normal(3, 20, 5), normal(1, 7, 5)],
                         lambda x: canary(LSTM, x))
            check_int_dtypes(w, tmp, pack)
            check_errors(w, tmp, pack, elem)
            check_quit(w)
        except Exception as e:  # a crash is one more failure, reported like the others
            check("worker session", False, f"{type(e).__name__}: {e}")
        finally:
            if w.proc.poll() is None:
                w.proc.kill()
    print(f"{'FAIL' if failures else 'PASS'} check_ort_worker: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
