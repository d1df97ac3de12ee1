#!/usr/bin/python3
# Trains the vehicle anomaly detector's next-step predictor and exports it to ONNX.
#
# Offline only (never in CI). Debian packages, under /usr/bin/python3:
#   apt-get install -y python3-torch python3-onnx python3-numpy
#   build/samples/vehicle/canary-vehicle generate --out /tmp/vehicle-data
#   /usr/bin/python3 samples/vehicle/train.py /tmp/vehicle-data [--minutes 5]
# Writes samples/vehicle/models/vehicle_lstm.onnx and models/metrics.json.
#
# Data: clean scenes from the C++ generator (IDM platoons with speed changes
# and benign hard braking, 10 Hz and 25 Hz feeds). A window is W messages
# (x, v, a, gap, dv) of one vehicle, x taken relative to the window's last
# message; the target is the next message's (dx, v, a). The split is by scene.
# Model: normalise -> LSTM(5->64) -> LSTM(64->32) -> last step -> Linear(32->3)
# -> de-normalise. Score = mean over (dx, v, a) of (residual / residual std)^2;
# threshold = 95th percentile of the validation scores.
import argparse
import json
import os
import sys
import time

import numpy as np
import onnx
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
MIN_W, MAX_W = 8, 50
NOMINAL_W = {10: 20, 25: 50}


class VehicleLstm(torch.nn.Module):
    """Stacked LSTM predicting the next (dx, v, a) from a window [N, W, 5] as a correction to the last
    message (its dx, v, a): the LSTM learns the dynamics, not the offsets. Inside the model the position
    column becomes per-step displacement (W-1 steps of dx, v, a, gap, dv), so neither the window's length nor
    the feed rate shifts the inputs' scale."""

    def __init__(self, in_mean, in_std, out_mean, out_std):
        super().__init__()
        for name, value in (("in_mean", in_mean), ("in_std", in_std), ("out_mean", out_mean), ("out_std", out_std)):
            self.register_buffer(name, torch.tensor(value, dtype=torch.float32))
        self.lstm1 = torch.nn.LSTM(5, 64, batch_first=True)
        self.lstm2 = torch.nn.LSTM(64, 32, batch_first=True)
        self.head = torch.nn.Linear(32, 3)

    @staticmethod
    def steps(x):
        """[N, W, 5] -> [N, W-1, 5]: x_k - x_{k-1}, then v, a, gap, dv of step k."""
        return torch.cat([x[:, 1:, 0:1] - x[:, :-1, 0:1], x[:, 1:, 1:]], dim=2)

    def normalised(self, x):
        h, _ = self.lstm1((self.steps(x) - self.in_mean) / self.in_std)
        h, _ = self.lstm2(h)
        return self.head(h[:, -1])

    @staticmethod
    def persistence(x):
        """The last message's (dx, v, a): x[-1] is 0 in the window's frame, so dx = -x[-2]."""
        return torch.cat([-x[:, -2, 0:1], x[:, -1, 1:3]], dim=1)

    def forward(self, x):
        return self.persistence(x) + self.normalised(x) * self.out_std + self.out_mean


def windows(series, rows, ends, w):
    """Windows [len(rows), w, 5] ending before `ends` (x relative to the last one) and next-step targets [., 3]."""
    idx = ends[:, None] + np.arange(-w, 0)[None, :]
    x = series[rows[:, None], idx].copy()
    last_x = x[:, -1, 0].copy()
    x[:, :, 0] -= last_x[:, None]
    nxt = series[rows, ends]
    y = np.stack([nxt[:, 0] - last_x, nxt[:, 1], nxt[:, 2]], axis=1)
    return x.astype(np.float32), y.astype(np.float32)


def draw_batch(rng, feeds, rows, size):
    """A batch of one feed rate and one window length, weighted towards the nominal window."""
    rate = 10 if rng.random() < 0.8 else 25
    w = NOMINAL_W[rate] if rng.random() < 0.5 else int(rng.integers(MIN_W, MAX_W + 1))
    series = feeds[rate]
    r = rng.choice(rows, size)
    ends = rng.integers(w, series.shape[1], size)
    return windows(series, r, ends, w)


def check_windows(data_dir, feeds_check):
    """Asserts that this script cuts the same windows as the C++ app (bit for bit)."""
    k = 0
    while os.path.exists(os.path.join(data_dir, "check_%d_x.npy" % k)):
        meta = np.load(os.path.join(data_dir, "check_%d_meta.npy" % k))
        tick, step, w, vehicles = int(meta[0]), int(meta[1]), int(meta[2]), meta[3:]
        series = feeds_check[50 // step]
        x, y = windows(series, vehicles, np.full(len(vehicles), tick // step), w)
        np.testing.assert_array_equal(x, np.load(os.path.join(data_dir, "check_%d_x.npy" % k)))
        np.testing.assert_array_equal(y, np.load(os.path.join(data_dir, "check_%d_y.npy" % k)))
        k += 1
    if k == 0:
        sys.exit("no window checks in %s" % data_dir)
    print("window check: %d calls match the C++ stream" % k)


def validation_set(rng, feeds, rows, count):
    """Validation windows in the app's mix: mostly nominal 10 Hz, some 25 Hz, some short/long windows."""
    parts = []
    for rate, w, share in ((10, 20, 0.7), (25, 50, 0.15), (10, 8, 0.05), (10, 14, 0.05), (10, 35, 0.05)):
        n = int(count * share)
        series = feeds[rate]
        parts.append((rate, w) + windows(series, rng.choice(rows, n), rng.integers(w, series.shape[1], n), w))
    return parts


def predict(model, x):
    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(x[i:i + 4096])).numpy() for i in range(0, len(x), 4096)])


def train(model, feeds, rows, args, rng):
    """Adam on the normalised MSE, cosine learning-rate decay, until the time budget is spent."""
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    start, step, losses = time.time(), 0, []
    budget = args.minutes * 60.0
    while time.time() - start < budget:
        frac = (time.time() - start) / budget
        for g in opt.param_groups:
            g["lr"] = 3e-3 * 0.5 * (1 + np.cos(np.pi * frac)) + 5e-5
        x, y = draw_batch(rng, feeds, rows, args.batch)
        xt = torch.from_numpy(x)
        target = (torch.from_numpy(y) - model.persistence(xt) - model.out_mean) / model.out_std
        loss = torch.mean((model.normalised(xt) - target) ** 2)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % 200 == 0:
            print("step %5d  %5.0f s  loss %.4f" % (step, time.time() - start, np.mean(losses[-200:])), flush=True)
    return step, time.time() - start, float(np.mean(losses[-200:]))


def evaluate(model, parts):
    """Residual std, RMSE per feed/window, the persistence baseline, score quantiles and the threshold."""
    res = {}
    for rate, w, x, y in parts:
        res[(rate, w)] = (predict(model, x) - y, y, x)
    all_r = np.concatenate([r for r, _, _ in res.values()])
    std = all_r.std(axis=0)
    scores = np.concatenate([np.mean((r / std) ** 2, axis=1) for r, _, _ in res.values()])
    by_window = {}
    for (rate, w), (r, y, x) in res.items():
        base = np.stack([x[:, -1, 0] - x[:, -2, 0], x[:, -1, 1], x[:, -1, 2]], axis=1) - y
        by_window["%d Hz, W %d" % (rate, w)] = {
            "rmse": np.sqrt(np.mean(r ** 2, axis=0)).round(4).tolist(),
            "persistence_rmse": np.sqrt(np.mean(base ** 2, axis=0)).round(4).tolist()}
    return std, scores, by_window


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    load = lambda name: np.load(os.path.join(args.data_dir, name))
    feeds = {10: load("series10.npy"), 25: load("series25.npy")}
    check_windows(args.data_dir, {10: load("check_series10.npy"), 25: load("check_series25.npy")})
    scene = load("row_scene.npy")
    val_scenes = scene.max() + 1 - max(1, (scene.max() + 1) // 5)
    train_rows, val_rows = np.where(scene < val_scenes)[0], np.where(scene >= val_scenes)[0]

    draws = [draw_batch(rng, feeds, train_rows, 2000) for _ in range(16)]
    s0 = np.concatenate([VehicleLstm.steps(torch.from_numpy(x)).numpy().reshape(-1, 5) for x, _ in draws])
    d0 = np.concatenate([y - VehicleLstm.persistence(torch.from_numpy(x)).numpy() for x, y in draws])
    model = VehicleLstm(s0.mean(0), s0.std(0), d0.mean(0), d0.std(0))
    steps, seconds, loss = train(model, feeds, train_rows, args, rng)
    model.eval()
    std, scores, by_window = evaluate(model, validation_set(np.random.default_rng(args.seed + 1), feeds, val_rows, 40000))
    threshold = float(np.quantile(scores, 0.95))
    export(model, args, {
        "input": "x", "output": "y", "layout": "x: f32[vehicles, window, 5] -> y: f32[vehicles, 3]",
        "features": ["x - x_last (m)", "v (m/s)", "a (m/s^2)", "gap (m)", "dv (m/s)"],
        "targets": ["dx (m)", "v (m/s)", "a (m/s^2)"],
        "residual_std": std.round(6).tolist(), "threshold": threshold, "threshold_quantile": 0.95,
        "validation": {"windows": int(len(scores)), "scenes": int(scene.max() + 1 - val_scenes),
                       "score_p50": float(np.quantile(scores, 0.5)), "score_p99": float(np.quantile(scores, 0.99)),
                       "by_window": by_window},
        "training": {"steps": steps, "seconds": round(seconds), "batch": args.batch, "final_loss": round(loss, 5),
                     "scenes": int(val_scenes), "seed": args.seed, "threads": 1, "torch": torch.__version__},
    })


def export(model, args, metrics):
    """ONNX opset 14 with dynamic vehicles and window axes, plus metrics.json."""
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "vehicle_lstm.onnx")
    torch.onnx.export(model, (torch.zeros(2, 20, 5),), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "vehicles", 1: "window"}, "y": {0: "vehicles"}}, opset_version=14)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    metrics["onnx"] = {"opset": 14, "ops": sorted({n.op_type for n in m.graph.node}), "bytes": os.path.getsize(path)}
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
        f.write("\n")
    print(json.dumps({k: metrics[k] for k in ("residual_std", "threshold", "validation")}, indent=2))


if __name__ == "__main__":
    main()
