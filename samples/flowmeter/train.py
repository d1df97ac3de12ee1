#!/usr/bin/python3
"""Trains the flow-meter models on generator output and exports them as ONNX.

Offline only (never in CI). Needs Debian's python3-torch, python3-onnx and
python3-numpy under /usr/bin/python3, and a built canary-flowmeter:

    bash scripts/build.sh --target canary_flowmeter
    /usr/bin/python3 samples/flowmeter/train.py

Data comes from `canary-flowmeter generate` (the C++ generator, with the
app's own gap repair); each exported model is loaded back through the Canary
runtime (`canary-flowmeter predict`) and compared with PyTorch. Writes
models/flowmeter_conv.onnx, models/flowmeter_lstm.onnx and models/metrics.json.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from flowmeter_onnx import export_conv, export_lstm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PHASES = ["oil", "gas", "water"]
FLOORS = np.array([5.0, 1000.0, 5.0])  # Sm3/h, the app's MAPE floors (flow_accuracy.h)
TBPTT_STEPS = 60


class ConvNet(torch.nn.Module):
    """[N, 7, W] -> Conv(7->32, k5) -> Relu -> Conv(32->32, k5, d2) -> Relu -> mean_t -> 32 -> Relu -> 3 -> softplus."""

    def __init__(self, mean, std, scale):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1))
        self.register_buffer("scale", torch.tensor(scale, dtype=torch.float32))
        self.c1 = torch.nn.Conv1d(7, 32, 5)
        self.c2 = torch.nn.Conv1d(32, 32, 5, dilation=2)
        self.fc1 = torch.nn.Linear(32, 32)
        self.fc2 = torch.nn.Linear(32, 3)

    def forward(self, x, lens=None):
        h = torch.relu(self.c1((x - self.mean) / self.std))
        h = torch.relu(self.c2(h)).mean(dim=2)
        return torch.nn.functional.softplus(self.fc2(torch.relu(self.fc1(h)))) * self.scale


class LstmNet(torch.nn.Module):
    """[N, 7, W] -> LSTM 64 -> LSTM 64 -> last valid step -> Gemm 3 -> softplus."""

    def __init__(self, mean, std, scale):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, 1, -1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, 1, -1))
        self.register_buffer("scale", torch.tensor(scale, dtype=torch.float32))
        self.lstm = torch.nn.LSTM(7, 64, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(64, 3)

    def forward(self, x, lens=None):
        z = (x.transpose(1, 2) - self.mean) / self.std
        state = None
        if self.training and z.shape[1] > TBPTT_STEPS:
            # Truncated backpropagation: this torch build's LSTM backward grows
            # quadratically with sequence length, so long windows run their
            # head without gradients and carry the state into the last chunk.
            with torch.no_grad():
                _, state = self.lstm(z[:, :-TBPTT_STEPS])
            z = z[:, -TBPTT_STEPS:]
        y, _ = self.lstm(z, state)
        return torch.nn.functional.softplus(self.fc(y[:, -1])) * self.scale


def load_split(data_dir, split):
    """{W: (x f32 [n, 7, W], y f64 [n, 3])} for one split."""
    buckets = {}
    for path in sorted(glob.glob(os.path.join(data_dir, split + "_x_w*.npy"))):
        w = int(re.search(r"_w(\d+)\.npy$", path).group(1))
        buckets[w] = (np.load(path), np.load(path.replace("_x_", "_y_")))
    if not buckets:
        sys.exit("no %s data in %s" % (split, data_dir))
    return buckets


def subsample(buckets, fraction):
    """A fixed random `fraction` of each bucket."""
    out = {}
    for w, (x, y) in buckets.items():
        keep = np.sort(np.random.default_rng(w).permutation(len(x))[:max(1, int(len(x) * fraction))])
        out[w] = (x[keep], y[keep])
    return out


def relative_loss(pred, y, floors):
    """Half the floored absolute percentage error (what the app reports), half
    |log(pred + floor) - log(y + floor)| (symmetric, keeps the median honest)."""
    ape = ((pred - y).abs() / torch.maximum(y, floors)).mean()
    return 0.5 * ape + 0.5 * (torch.log(pred + floors) - torch.log(y + floors)).abs().mean()


def predict(net, x, batch=512):
    with torch.no_grad():
        return np.concatenate([net(torch.from_numpy(x[i:i + batch])).numpy() for i in range(0, len(x), batch)])


def ape(pred, y):
    """Per-sample, per-phase absolute percentage error with the app's floors."""
    return 100.0 * np.abs(pred - y) / np.maximum(y, FLOORS)


def evaluate(net, buckets, stat=np.mean):
    """Mean (MAPE) or median APE per phase over every window length."""
    preds, ys = [], []
    for w, (x, y) in sorted(buckets.items()):
        preds.append(predict(net, x))
        ys.append(y)
    m = stat(ape(np.concatenate(preds), np.concatenate(ys)), axis=0)
    return {p: round(float(v), 2) for p, v in zip(PHASES, m)}


def baseline(train_buckets, val_buckets, stat):
    """The same statistic for a constant predictor at the training median."""
    y_train = np.concatenate([y for _, y in train_buckets.values()])
    y_val = np.concatenate([y for _, y in val_buckets.values()])
    m = stat(ape(np.tile(np.median(y_train, axis=0), (len(y_val), 1)), y_val), axis=0)
    return {p: round(float(v), 2) for p, v in zip(PHASES, m)}


def train(net, train_buckets, val_buckets, epochs, lr, batch, log_name):
    """Adam with cosine decay over shuffled same-length mini-batches."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    floors = torch.tensor(FLOORS, dtype=torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps_per_epoch = sum((len(x) + batch - 1) // batch for x, _ in train_buckets.values())
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * steps_per_epoch)
    start = time.time()
    for epoch in range(epochs):
        plan = [(w, i) for w, (x, _) in train_buckets.items() for i in range(0, len(x), batch)]
        order = {w: rng.permutation(len(x)) for w, (x, _) in train_buckets.items()}
        total = 0.0
        for k in rng.permutation(len(plan)):
            w, i = plan[k]
            idx = order[w][i:i + batch]
            x = torch.from_numpy(train_buckets[w][0][idx])
            y = torch.from_numpy(train_buckets[w][1][idx]).float()
            net.train()
            loss = relative_loss(net(x), y, floors)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            total += float(loss) * len(idx)
        net.eval()
        n = sum(len(x) for x, _ in train_buckets.values())
        print("%s epoch %2d loss %.4f val MAPE %s (%.0f s)" % (log_name, epoch + 1, total / n,
              evaluate(net, val_buckets), time.time() - start), flush=True)
    return time.time() - start


def canary_check(binary, onnx_path, net, buckets, with_lens):
    """Runs the exported model through Canary on validation windows of every length; worst relative gap to torch."""
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for w, (x, _) in sorted(buckets.items()):
            x = x[:64]
            np.save(os.path.join(tmp, "x.npy"), x)
            cmd = [binary, "predict", "--model-path", onnx_path, "--x", os.path.join(tmp, "x.npy"),
                   "--out", os.path.join(tmp, "y.npy")]
            if with_lens:
                np.save(os.path.join(tmp, "lens.npy"), np.full(len(x), w, dtype=np.int32))
                cmd += ["--lens", os.path.join(tmp, "lens.npy")]
            subprocess.run(cmd, check=True)
            ours, ref = np.load(os.path.join(tmp, "y.npy")), predict(net, x)
            worst = max(worst, float((np.abs(ours - ref) / np.maximum(np.abs(ref), 1.0)).max()))
    return worst


def normalisation(buckets):
    x, y = buckets[60]
    mean, std = x.mean(axis=(0, 2)), x.std(axis=(0, 2)) + 1e-3
    scale = np.array([np.median(y[:, p][y[:, p] > 0]) for p in range(3)])
    return mean, std, scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "samples", "flowmeter", "canary-flowmeter"))
    ap.add_argument("--data", default=os.path.join(ROOT, "build", "flowmeter-data"))
    ap.add_argument("--fields", type=int, default=160)
    ap.add_argument("--out", default=os.path.join(HERE, "models"))
    ap.add_argument("--conv-epochs", type=int, default=40)
    ap.add_argument("--lstm-epochs", type=int, default=12)
    ap.add_argument("--lstm-fraction", type=float, default=0.5, help="share of training windows the LSTM sees")
    ap.add_argument("--only", choices=["conv", "lstm"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    if not glob.glob(os.path.join(args.data, "train_x_w*.npy")):
        os.makedirs(args.data, exist_ok=True)
        subprocess.run([args.binary, "generate", "--out", args.data, "--fields", str(args.fields)], check=True)
    train_b, val_b = load_split(args.data, "train"), load_split(args.data, "val")
    mean, std, scale = normalisation(train_b)
    metrics_path = os.path.join(args.out, "metrics.json")
    metrics = json.load(open(metrics_path)) if os.path.exists(metrics_path) else {}
    metrics["data"] = {"train_windows": {str(w): len(x) for w, (x, _) in sorted(train_b.items())},
                       "val_windows": {str(w): len(x) for w, (x, _) in sorted(val_b.items())},
                       "mape_floors_sm3h": dict(zip(PHASES, FLOORS.tolist())),
                       "target": "window-mean oil, gas, water rates in Sm3/h",
                       "generated_by": "canary-flowmeter generate --fields %d (seeds 1000-%d; the last %d fields "
                                       "are validation)" % (args.fields, 999 + args.fields, max(1, int(args.fields * 0.15))),
                       "constant_median_baseline": {"val_mape_percent": baseline(train_b, val_b, np.mean),
                                                    "val_median_ape_percent": baseline(train_b, val_b, np.median)}}
    specs = [("conv", ConvNet, args.conv_epochs, 3e-3, 128, export_conv, False, 1.0),
             ("lstm", LstmNet, args.lstm_epochs, 3e-3, 128, export_lstm, True, args.lstm_fraction)]
    for name, cls, epochs, lr, batch, export, with_lens, fraction in specs:
        if args.only and args.only != name:
            continue
        torch.manual_seed(1)
        net = cls(mean, std, scale)
        seconds = train(net, subsample(train_b, fraction), val_b, epochs, lr, batch, name)
        net.eval()
        path = os.path.join(args.out, "flowmeter_%s.onnx" % name)
        export(net, path)
        metrics[name] = {"val_mape_percent": evaluate(net, val_b),
                         "val_median_ape_percent": evaluate(net, val_b, np.median),
                         "epochs": epochs, "train_fraction": fraction,
                         "parameters": sum(p.numel() for p in net.parameters()),
                         "train_seconds": round(seconds), "onnx_bytes": os.path.getsize(path),
                         "canary_vs_torch_max_rel_diff": canary_check(args.binary, path, net, val_b, with_lens)}
        print(name, json.dumps(metrics[name]), flush=True)
    with open(metrics_path, "w") as f:
        json.dump(metrics, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
