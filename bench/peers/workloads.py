"""The workloads of the peer benchmark: ONNX files, seeded inputs and floors.

Every contender gets the same ONNX file and the same input bytes. The
elementwise models are generated here with onnx.helper; the conv net and the
stacked LSTM are the trained models of the two sample apps. Runs under
/usr/bin/python3 (Debian's numpy and onnx).
"""
import os
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONV_MODEL = os.path.join(ROOT, "samples/flowmeter/models/flowmeter_conv.onnx")
LSTM_MODEL = os.path.join(ROOT, "samples/vehicle/models/vehicle_lstm.onnx")


@dataclass
class Fixed:
    """A model timed on one fixed set of inputs."""
    name: str
    title: str
    model: str
    inputs: dict                      # input name -> np.ndarray
    floor: str = "none"               # "bandwidth" | "flops" | "none"
    bytes_moved: int = 0              # for the bandwidth floor
    flops: float = 0.0                # for the compute floor
    targets: dict = field(default_factory=dict)  # e.g. {"speedup_vs_ort": 10}


@dataclass
class Stream:
    """A fresh model serving seeded calls whose shapes change."""
    name: str
    title: str
    model: str
    calls: list                       # list of {input name: np.ndarray}
    # Canary's total time at most this share of ONNX Runtime's. The samples'
    # streams keep their own stricter goal; the zoo's are those of the
    # "fast on the models people bring" targets.
    max_vs_ort: float = 0.8


# --- generated models -------------------------------------------------------

def write_chain(path, cols):
    """The 10-op arithmetic chain of bench/jit/elementwise.cpp over x f32[N, cols]:
    Mul(.5) Add(bias) Min(2) Sub(.25) Mul(1.5) Max(-.25) Abs Add(x) Mul(.75) Relu."""
    rng = np.random.default_rng(7)
    consts = {"half": 0.5, "ceiling": 2.0, "quarter": 0.25, "scale": 1.5, "floor": -0.25, "quarter3": 0.75}
    inits = [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in consts.items()]
    inits.append(numpy_helper.from_array(rng.uniform(-1, 1, cols).astype(np.float32), "bias"))
    steps = [("Mul", ["x", "half"]), ("Add", ["t1", "bias"]), ("Min", ["t2", "ceiling"]),
             ("Sub", ["t3", "quarter"]), ("Mul", ["t4", "scale"]), ("Max", ["t5", "floor"]),
             ("Abs", ["t6"]), ("Add", ["t7", "x"]), ("Mul", ["t8", "quarter3"]), ("Relu", ["t9"])]
    nodes = [helper.make_node(op, ins, ["y" if i == len(steps) else f"t{i}"])
             for i, (op, ins) in enumerate(steps, start=1)]
    graph = helper.make_graph(nodes, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", cols])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", cols])], inits)
    save(graph, path)


def write_relu(path):
    """A single Relu over x f32[N, C]: the per-call floor of a runtime."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "C"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "C"])])
    save(graph, path)


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="canary-bench")
    model.ir_version = 8  # readable by every contender here
    onnx.checker.check_model(model)
    onnx.save(model, path)


# --- inputs in the units the trained models expect ---------------------------

def gauges(rng, n, w):
    """Flow-meter windows f32[n, 7, w] in physical units (choke fraction, bar, K,
    Sm3/h): the conv net folds its normalisation in, so unit-normal inputs would
    drive its softplus head to zeros and the cross-check would compare nothing."""
    mid = np.array([0.5, 200, 80, 45, 370, 320, 1000], np.float32).reshape(1, 7, 1)
    return (mid * (1 + 0.05 * rng.standard_normal((n, 7, w)))).astype(np.float32)


def vehicle_windows(rng, n, w):
    """Vehicle windows f32[n, w, 5]: position relative to the last message,
    speed, acceleration, gap and speed difference, as a car-following stream."""
    dt = 0.1
    v = 25 + 3 * rng.standard_normal((n, 1)) + np.cumsum(0.05 * rng.standard_normal((n, w)), axis=1)
    a = np.gradient(v, dt, axis=1)
    x = np.cumsum(v * dt, axis=1)
    x -= x[:, -1:]
    gap = 30 + 5 * rng.standard_normal((n, 1)) + np.cumsum(0.1 * rng.standard_normal((n, w)), axis=1)
    dv = rng.standard_normal((n, w))
    return np.stack([x, v, a, gap, dv], axis=2).astype(np.float32)


# --- floors -----------------------------------------------------------------

def conv_flops(n, w):
    """Multiply-adds x2 of the flow-meter conv net (Conv 7->32 k5, Conv 32->32 k5 d2, two Gemms)."""
    l1 = w - 4
    l2 = l1 - 8
    return 2.0 * n * (32 * l1 * 7 * 5 + 32 * l2 * 32 * 5 + 32 * 32 + 32 * 3)


def lstm_flops(n, w):
    """Multiply-adds x2 of the vehicle LSTM (5->64, 64->32 over w-1 steps, head)."""
    steps = w - 1
    return 2.0 * n * steps * (4 * 64 * (5 + 64) + 4 * 32 * (64 + 32)) + 2.0 * n * 32 * 3


# --- the sets ---------------------------------------------------------------

def fixed_workloads(workdir):
    models = os.path.join(workdir, "models")
    os.makedirs(models, exist_ok=True)
    chain_1m, chain_64, relu = (os.path.join(models, f) for f in ("chain_1024.onnx", "chain_64.onnx", "relu.onnx"))
    write_chain(chain_1m, 1024)
    write_chain(chain_64, 64)
    write_relu(relu)
    rng = np.random.default_rng(2026)
    x_1m = rng.uniform(-2, 2, (1024, 1024)).astype(np.float32)
    x_64 = rng.uniform(-2, 2, (1, 64)).astype(np.float32)
    return [
        Fixed("chain_2^20", "10-op elementwise chain, x f32[1024, 1024]", chain_1m, {"x": x_1m},
              floor="bandwidth", bytes_moved=2 * x_1m.nbytes, targets={"canary_over_floor": 1.3}),
        Fixed("chain_64", "10-op elementwise chain, x f32[1, 64]", chain_64, {"x": x_64},
              targets={"speedup_vs_ort": 10.0}),
        Fixed("relu_64", "single Relu, x f32[1, 64]", relu, {"x": x_64}, targets={"speedup_vs_ort": 10.0}),
        Fixed("conv_b32_w128", "flow-meter conv net, x f32[32, 7, 128]", CONV_MODEL, {"x": gauges(rng, 32, 128)},
              floor="flops", flops=conv_flops(32, 128), targets={"speedup_vs_ort": 2.0}),
        Fixed("lstm_b32_w64", "vehicle stacked LSTM, x f32[32, 64, 5]", LSTM_MODEL,
              {"x": vehicle_windows(rng, 32, 64)}, floor="flops", flops=lstm_flops(32, 64),
              targets={"speedup_vs_ort": 2.0}),
    ]


def zoo_workloads(workdir):
    """The model classes people bring (model_zoo.py), each at its example shape."""
    import model_zoo  # imports torch: only when these workloads run
    models = os.path.join(workdir, "models")
    os.makedirs(models, exist_ok=True)
    rng = np.random.default_rng(2027)
    titles = {"resnet18": "torchvision ResNet-18", "mobilenet_v2": "torchvision MobileNet-V2",
              "squeezenet1_1": "torchvision SqueezeNet 1.1", "conv_bn_block": "Conv2d+BN+pool block",
              "tcn_bn": "dilated TCN with BatchNorm", "gru": "2-layer GRU classifier",
              "transformer": "TransformerEncoder classifier (log_softmax head)"}
    out = []
    for name, title in titles.items():
        path, shape = model_zoo.export(name, models)
        out.append(Fixed(f"zoo_{name}", f"{title}, x f32{list(shape)}", path, model_zoo.example_input(name, rng),
                         targets={"speedup_vs_ort": 1.5 if name == "conv_bn_block" else 1.0}))
    return out


def zoo_stream_workloads(workdir, calls=300, seed=13):
    """Streams whose batch (and length) change every call, on zoo models."""
    import model_zoo
    models = os.path.join(workdir, "models")
    os.makedirs(models, exist_ok=True)
    rng = np.random.default_rng(seed)
    spec = {"conv_bn_block": lambda: (int(rng.integers(1, 17)), 3, 64, 64),
            "tcn_bn": lambda: (int(rng.integers(1, 65)), 6, int(rng.integers(32, 257))),
            "gru": lambda: (int(rng.integers(1, 65)), int(rng.integers(8, 97)), 8)}
    out = []
    for name, shape_of in spec.items():
        path, _ = model_zoo.export(name, models)
        seq = [model_zoo.example_input(name, rng, shape_of()) for _ in range(calls)]
        out.append(Stream(f"zoo_{name}_stream", f"{name}, {calls} calls, batch (and length) changing", path, seq))
    return out


def stream_workloads(calls=300, seed=11):
    """300 seeded calls: batch 1..64 and window 16..256 (conv) or 8..128 (vehicle)."""
    rng = np.random.default_rng(seed)
    conv = [{"x": gauges(rng, int(rng.integers(1, 65)), int(rng.integers(16, 257)))} for _ in range(calls)]
    lstm = [{"x": vehicle_windows(rng, int(rng.integers(1, 65)), int(rng.integers(8, 129)))} for _ in range(calls)]
    return [Stream("conv_stream", f"flow-meter conv net, {calls} calls, batch 1..64, window 16..256", CONV_MODEL, conv,
                   max_vs_ort=0.5),
            Stream("lstm_stream", f"vehicle LSTM, {calls} calls, batch 1..64, window 8..128", LSTM_MODEL, lstm,
                   max_vs_ort=0.5)]


def unseen_shapes(name):
    """(warm shape, unseen shapes) for the first-call-at-a-new-shape measurement."""
    if name == "conv":
        return (32, 128), [(17, 128), (32, 96), (5, 200), (48, 64), (9, 33)]
    return (32, 64), [(17, 64), (32, 48), (5, 100), (48, 32), (9, 21)]


def make_unseen_input(name, rng, n, w):
    return {"x": gauges(rng, n, w) if name == "conv" else vehicle_windows(rng, n, w)}
