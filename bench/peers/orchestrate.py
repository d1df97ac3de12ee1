"""Runs the peer benchmark: Canary, ONNX Runtime and PyTorch side by side.

    /usr/bin/python3 bench/peers/orchestrate.py --build build-release [--threads 1,2] [--rounds 5] [--quick]

For each thread count it starts one worker per contender (PROTOCOL.md),
cross-checks every contender's outputs against Canary's fp64 reference
interpreter, then times the contenders alternately, round by round, in a
rotating order. Writes bench/RESULTS.md and bench/results.json (report.py).
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import report
import workloads
from workers import TensorFiles, WorkerError, read_outputs, start_workers

CONTENDERS = ["canary", "onnxruntime", "torch-eager", "torch-script"]
RTOL, ATOL = 1e-3, 1e-4


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def outputs_agree(got, want):
    """Position-wise comparison; returns (ok, detail)."""
    if len(got) != len(want):
        return False, f"{len(got)} outputs, reference has {len(want)}"
    for (name, a), b in zip(got.items(), want.values()):
        if tuple(a.shape) != tuple(b.shape):
            return False, f"output {name}: shape {list(a.shape)}, reference {list(b.shape)}"
        err = np.abs(a.astype(np.float64) - b)
        bound = ATOL * max(1.0, float(np.max(np.abs(b)))) + RTOL * np.abs(b)
        if not np.all(err <= bound):
            i = int(np.argmax(err - bound))
            return False, f"output {name}: |diff| {err.flat[i]:.3g} at {i}, reference {b.flat[i]:.6g}"
    return True, ""


def max_relative_error(got, want):
    worst = 0.0
    for a, b in zip(got.values(), want.values()):
        scale = np.maximum(np.abs(b), ATOL * max(1.0, float(np.max(np.abs(b)))))
        worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b) / scale)))
    return worst


class Bench:
    def __init__(self, args, workdir):
        self.args = args
        self.workdir = workdir
        self.files = TensorFiles(os.path.join(workdir, "tensors"))
        self.out_dir = os.path.join(workdir, "out")

    def reference(self, canary, model, calls):
        """fp64 reference outputs per call (list of dicts)."""
        r = canary.ask({"op": "reference", "model": model, "calls": calls,
                        "output_dir": os.path.join(self.out_dir, "reference")})
        if not r.get("ok"):
            raise WorkerError(f"reference failed on {model}: {r.get('error')}")
        return [read_outputs(c) for c in r["outputs"]]

    # --- fixed workloads ----------------------------------------------------

    def fixed(self, workers, w):
        inputs = self.files.describe(w.inputs)
        result = {"name": w.name, "title": w.title, "contenders": {}}
        try:
            want = self.reference(workers["canary"], w.model, [inputs])[0]
        except WorkerError as e:  # Canary cannot run the model: reported, nobody timed
            result["error"] = str(e)
            log(f"  {e}")
            return result
        live = []
        for name, worker in workers.items():
            entry = result["contenders"][name] = {}
            r = worker.ask({"op": "load", "id": w.name, "model": w.model, "example": inputs})
            if r.get("ok"):
                # Warm-up: past the JIT's hot threshold and compile, TorchScript's profiling runs
                # and ORT's first-run allocations, so the rounds below see steady state.
                r = worker.ask({"op": "run", "id": w.name, "inputs": inputs, "warmup": 20, "iters": 1,
                                "output_dir": os.path.join(self.out_dir, name)})
            if not r.get("ok"):
                entry["error"] = r.get("error", "failed")
                log(f"  {name}: error: {entry['error'][:200]}")
                continue
            got = read_outputs(r["outputs"])
            ok, detail = outputs_agree(got, want)
            entry["max_rel_error"] = max_relative_error(got, want) if ok else None
            if not ok:
                entry["disagrees"] = detail
                log(f"  {name}: disagrees with the reference: {detail}")
                continue
            live.append(name)
        self.time_fixed(workers, w, inputs, live, result)
        return result

    def iterations(self, w):
        """Calls per contender per round: ~0.1 s of the slowest plausible contender."""
        big = w.name.startswith(("chain_2", "lstm", "conv", "zoo_"))
        if self.args.quick:
            return 5 if big else 200
        return 20 if big else 2000

    def time_fixed(self, workers, w, inputs, live, result):
        iters = self.iterations(w)
        samples = {name: [] for name in live}
        for rnd in range(self.args.rounds):
            order = live[rnd % len(live):] + live[:rnd % len(live)] if live else []
            for name in order:
                r = workers[name].ask({"op": "run", "id": w.name, "inputs": inputs, "warmup": 2, "iters": iters,
                                       "output_dir": os.path.join(self.out_dir, name)})
                if not r.get("ok"):
                    result["contenders"][name]["error"] = r.get("error")
                    continue
                samples[name].append(r["times_us"])
        for name, rounds in samples.items():
            flat = [t for times in rounds for t in times]
            if flat:
                result["contenders"][name].update(summary(flat, [float(np.median(t)) for t in rounds]))

    def profile(self, canary, w):
        inputs = self.files.describe(w.inputs)
        iters = self.iterations(w)
        r = canary.ask({"op": "profile", "model": w.model, "inputs": inputs, "warmup": 10, "iters": iters})
        return r if r.get("ok") else {"error": r.get("error")}

    # --- dynamic streams ------------------------------------------------------

    def stream(self, workers, s):
        calls = [self.files.describe(c) for c in s.calls]
        result = {"name": s.name, "title": s.title, "contenders": {}}
        try:
            want = self.reference(workers["canary"], s.model, calls)
        except WorkerError as e:
            result["error"] = str(e)
            log(f"  {e}")
            return result
        names = list(workers)
        for rnd in range(self.args.stream_rounds):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            for name in order:
                entry = result["contenders"].setdefault(name, {"total_us": [], "create_us": []})
                if "error" in entry or "disagrees" in entry:
                    continue
                r = workers[name].ask({"op": "stream", "model": s.model, "calls": calls,
                                       "output_dir": os.path.join(self.out_dir, f"{name}-stream")})
                if not r.get("ok"):
                    entry["error"] = r.get("error", "failed")
                    log(f"  {name}: error: {entry['error'][:200]}")
                    continue
                if rnd < len(names):  # the first round each contender runs: check every call
                    bad = check_stream(r["outputs"], want)
                    if bad:
                        entry["disagrees"] = bad
                        log(f"  {name}: disagrees: {bad}")
                        continue
                entry["total_us"].append(r["total_us"])
                entry["create_us"].append(r["create_us"])
                entry.setdefault("call_us", r["call_us"])
                if "jit" in r:
                    entry["jit"] = r["jit"]
        for entry in result["contenders"].values():
            if entry.get("total_us"):
                entry["total_median_us"] = float(np.median(entry["total_us"]))
        return result

    def unseen(self, workers, kind):
        """First call at an unseen shape against repeat calls at that shape, after warm-up."""
        model = workloads.CONV_MODEL if kind == "conv" else workloads.LSTM_MODEL
        warm, shapes = workloads.unseen_shapes(kind)
        rng = np.random.default_rng(5)
        warm_inputs = self.files.describe(workloads.make_unseen_input(kind, rng, *warm))
        shape_inputs = [self.files.describe(workloads.make_unseen_input(kind, rng, *s)) for s in shapes]
        result = {"name": f"{kind}_unseen", "warm_shape": list(warm), "shapes": [list(s) for s in shapes],
                  "contenders": {}}
        for name, worker in workers.items():
            entry = result["contenders"][name] = {"first_us": [], "repeat_us": []}
            wid = f"unseen-{kind}"
            r = worker.ask({"op": "load", "id": wid, "model": model, "example": warm_inputs})
            if r.get("ok"):
                r = worker.ask({"op": "run", "id": wid, "inputs": warm_inputs, "warmup": 20, "iters": 5,
                                "output_dir": os.path.join(self.out_dir, name)})
            for inputs in shape_inputs:
                if not r.get("ok"):
                    break
                first = worker.ask({"op": "run", "id": wid, "inputs": inputs, "warmup": 0, "iters": 1,
                                    "output_dir": os.path.join(self.out_dir, name)})
                r = worker.ask({"op": "run", "id": wid, "inputs": inputs, "warmup": 0, "iters": 5,
                                "output_dir": os.path.join(self.out_dir, name)}) if first.get("ok") else first
                if r.get("ok"):
                    entry["first_us"].append(first["times_us"][0])
                    entry["repeat_us"].append(float(np.median(r["times_us"])))
            if not r.get("ok"):
                entry["error"] = r.get("error", "failed")
                continue
            ratios = [f / p for f, p in zip(entry["first_us"], entry["repeat_us"])]
            entry["ratio_median"] = float(np.median(ratios))
            entry["ratios"] = ratios
        return result


def check_stream(outputs, want):
    for i, (descs, ref) in enumerate(zip(outputs, want)):
        ok, detail = outputs_agree(read_outputs(descs), ref)
        if not ok:
            return f"call {i}: {detail}"
    return ""


def summary(flat, round_medians):
    return {"median_us": float(np.median(flat)), "min_us": float(np.min(flat)), "max_us": float(np.max(flat)),
            "p90_us": float(np.percentile(flat, 90)), "round_medians_us": round_medians, "calls": len(flat)}


def machine_floors(build_dir, threads, triad_bytes, quick):
    exe = os.path.join(build_dir, "bench", "canary_bench_machine_floors")
    argv = [exe, "--threads", ",".join(map(str, threads)), "--triad-bytes", ",".join(map(str, triad_bytes))]
    if quick:
        argv.append("--quick")
    return json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)


def git_commit():
    try:
        return subprocess.run(["git", "-C", workloads.ROOT, "rev-parse", "--short", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_thread_count(bench, args, threads, fixed, streams, log_dir):
    log(f"threads={threads}: starting workers")
    workers = start_workers(args.build, threads, args.contenders, log_dir)
    out = {"threads": threads, "versions": {n: w.versions for n, w in workers.items()}, "fixed": [],
           "streams": [], "unseen": [], "profiles": {}}
    try:
        for w in fixed:
            log(f"threads={threads}: {w.name}")
            out["fixed"].append(bench.fixed(workers, w))
            out["profiles"][w.name] = bench.profile(workers["canary"], w)
        if threads in args.stream_threads:
            for s in streams:
                log(f"threads={threads}: {s.name}")
                out["streams"].append(bench.stream(workers, s))
            for kind in (("conv", "lstm") if args.unseen else ()):
                log(f"threads={threads}: first call at unseen {kind} shapes")
                out["unseen"].append(bench.unseen(workers, kind))
    finally:
        for w in workers.values():
            w.close()
    return out


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True, help="build directory with bench/canary_peer_worker")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--stream-threads", default="1", help="thread counts that also run streams and unseen shapes")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--stream-rounds", type=int, default=0, help="default: one per contender, rotated")
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument("--quick", action="store_true", help="fewer calls and shorter streams (a smoke run)")
    p.add_argument("--no-zoo", dest="zoo", action="store_false",
                   help="leave out the model-zoo workloads (torchvision CNNs and the nets of model_zoo.py)")
    p.add_argument("--only", default="", help="comma-separated workload name prefixes to run (default: all)")
    p.add_argument("--no-unseen", dest="unseen", action="store_false", help="skip the unseen-shape measurement")
    p.add_argument("--results", default=os.path.join(workloads.ROOT, "bench", "RESULTS.md"))
    p.add_argument("--json", default=os.path.join(workloads.ROOT, "bench", "results.json"))
    args = p.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.stream_threads = [int(t) for t in args.stream_threads.split(",")]
    args.contenders = args.contenders.split(",")
    args.only = [s for s in args.only.split(",") if s]
    if "canary" not in args.contenders:
        p.error("canary must be a contender: it provides the fp64 reference")
    if args.stream_rounds <= 0:
        args.stream_rounds = len(args.contenders)
    return args


def main():
    args = parse_args()
    started = time.time()
    workdir = tempfile.mkdtemp(prefix="canary-peers-")
    log_dir = os.path.join(workdir, "logs")
    os.makedirs(log_dir)
    try:
        bench = Bench(args, workdir)
        calls = 60 if args.quick else 300
        fixed = workloads.fixed_workloads(workdir)
        streams = workloads.stream_workloads(calls=calls)
        if args.zoo:
            fixed += workloads.zoo_workloads(workdir)
            streams += workloads.zoo_stream_workloads(workdir, calls=calls)
        if args.only:
            fixed = [w for w in fixed if any(w.name.startswith(p) for p in args.only)]
            streams = [s for s in streams if any(s.name.startswith(p) for p in args.only)]
        triad_sizes = sorted({w.bytes_moved for w in fixed if w.floor == "bandwidth"} | {3 << 29})
        log("machine floors")
        floors = machine_floors(args.build, args.threads, triad_sizes, args.quick)
        results = {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "python": platform.python_version(), "quick": args.quick, "rounds": args.rounds,
                   "floors": floors, "workloads": {w.name: {"title": w.title, "floor": w.floor,
                                                            "bytes_moved": w.bytes_moved, "flops": w.flops,
                                                            "targets": w.targets} for w in fixed}
                   | {s.name: {"title": s.title, "max_vs_ort": s.max_vs_ort} for s in streams},
                   "runs": []}
        for threads in args.threads:
            results["runs"].append(run_thread_count(bench, args, threads, fixed, streams, log_dir))
        results["seconds"] = time.time() - started
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
        with open(args.results, "w") as f:
            f.write(report.markdown(results))
        log(f"wrote {args.results} and {args.json} in {results['seconds']:.0f} s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
