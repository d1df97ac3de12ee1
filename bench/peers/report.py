"""Renders the peer benchmark's results (results.json) as bench/RESULTS.md."""
import numpy as np

PEERS = ["onnxruntime", "torch-eager", "torch-script"]


def fmt_us(us):
    if us is None:
        return "—"
    if us >= 10000:
        return f"{us / 1000:.1f} ms"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs" if us < 100 else f"{us:.0f} µs"


def fmt_ratio(x):
    return "—" if x is None or not np.isfinite(x) else f"{x:.2f}x"


def cell(entry):
    """'median (min–max)' or why there is no time."""
    if "disagrees" in entry:
        return "disagrees: not timed"
    if "error" in entry:
        return "fails: not timed"
    if "median_us" not in entry:
        return "—"
    return f"{fmt_us(entry['median_us'])} ({fmt_us(entry['min_us'])}–{fmt_us(entry['max_us'])})"


def best(rows, key, **match):
    vals = [r[key] for r in rows if all(r.get(k) == v for k, v in match.items())]
    return max(vals) if vals else None


def triad_gbps(rows, threads, size):
    """Best triad bandwidth at the working set closest to `size` (the benchmark rounds sizes)."""
    rows = [r for r in rows if r["threads"] == threads]
    if not rows:
        return None
    return min(rows, key=lambda r: abs(r["bytes"] - size))["gbps_best"]


def floor_us(results, run, name):
    """The workload's floor on this machine at this thread count, in µs."""
    w = results["workloads"][name]
    floors = results["floors"]
    if w["floor"] == "bandwidth":
        gbps = triad_gbps(floors["triad"], run["threads"], w["bytes_moved"])
        return w["bytes_moved"] / (gbps * 1e3) if gbps else None
    if w["floor"] == "flops":
        gflops = best(floors["fma"], "gflops_best", threads=run["threads"])
        return w["flops"] / (gflops * 1e3) if gflops else None
    return None


def median_of(entry):
    return entry.get("median_us") if "disagrees" not in entry and "error" not in entry else None


def fixed_table(results, run):
    lines = ["| workload | Canary | ONNX Runtime | torch eager | TorchScript | ORT / Canary | floor | Canary / floor |",
             "|---|---|---|---|---|---|---|---|"]
    for f in run["fixed"]:
        c = f["contenders"]
        canary = median_of(c.get("canary", {}))
        ort = median_of(c.get("onnxruntime", {}))
        floor = floor_us(results, run, f["name"])
        lines.append("| " + " | ".join([
            f["title"], cell(c.get("canary", {})), cell(c.get("onnxruntime", {})), cell(c.get("torch-eager", {})),
            cell(c.get("torch-script", {})), fmt_ratio(ort / canary if ort and canary else None),
            fmt_us(floor) if floor else "— (per-call overhead)",
            fmt_ratio(canary / floor if canary and floor else None)]) + " |")
    return lines


def stream_table(run):
    lines = ["| stream | Canary | ONNX Runtime | torch eager | TorchScript | Canary / ORT | Canary compiles |",
             "|---|---|---|---|---|---|---|"]
    for s in run["streams"]:
        c = s["contenders"]

        def total(name):
            e = c.get(name, {})
            if "disagrees" in e:
                return "disagrees: not timed"
            if "error" in e:
                return "fails: not timed"
            return fmt_us(e.get("total_median_us")) if e.get("total_median_us") else "—"
        canary = c.get("canary", {}).get("total_median_us")
        ort = c.get("onnxruntime", {}).get("total_median_us")
        jit = c.get("canary", {}).get("jit", {})
        lines.append("| " + " | ".join([s["title"], total("canary"), total("onnxruntime"), total("torch-eager"),
                                         total("torch-script"), fmt_ratio(canary / ort if canary and ort else None),
                                         f"{jit.get('compiles', '—')} ({jit.get('compile_ms', 0):.1f} ms)"]) + " |")
    return lines


def unseen_table(run):
    lines = ["| model | contender | first call (median) | repeat call (median) | first / repeat |",
             "|---|---|---|---|---|"]
    for u in run["unseen"]:
        for name, e in u["contenders"].items():
            if "ratio_median" not in e:
                lines.append(f"| {u['name']} | {name} | {e.get('error', '—')[:80]} | | |")
                continue
            lines.append(f"| {u['name']} | {name} | {fmt_us(float(np.median(e['first_us'])))} | "
                         f"{fmt_us(float(np.median(e['repeat_us'])))} | {fmt_ratio(e['ratio_median'])} |")
    return lines


def profile_lines(run):
    lines = []
    for name, p in run["profiles"].items():
        if "error" in p:
            lines.append(f"- **{name}**: profile failed: {p['error']}")
            continue
        per_call = p["calls_us"] / p["iters"]
        covered = sum(t["us"] for t in p["tiers"])
        # Calls run as batch slices time every slice on its own thread: the
        # tiers then add up past the wall time, and shares are of thread time.
        split = covered > p["calls_us"]
        whole = max(covered, p["calls_us"])
        parts = [f"{t['tier']}{' ' + t['op'] if t['op'] else ''} {100 * t['us'] / whole:.0f}%"
                 for t in p["tiers"][:5] if whole > 0]
        tail = (", shares of thread time (batch slices on several threads)" if split else
                f", outside kernels (dispatch, checks, buffers) {100 * (whole - covered) / whole:.0f}%" if whole > 0 else "")
        lines.append(f"- **{name}** ({fmt_us(per_call)} per call with timers on): " + ", ".join(parts) + tail)
    return lines


def top_tiers(run, name, count=2):
    """Where Canary's time goes on a workload, as its largest timer shares ('kernel call Conv 83%')."""
    p = run["profiles"].get(name)
    if not p or "error" in p:
        return ""
    whole = max(sum(t["us"] for t in p["tiers"]), p["calls_us"])
    if whole <= 0:
        return ""
    return ", ".join(f"{t['tier']}{' ' + t['op'] if t['op'] else ''} {100 * t['us'] / whole:.0f}%"
                     for t in p["tiers"][:count])


def fixed_of_stream(name):
    """The fixed workload whose model a stream serves (its timer shares stand for the stream's)."""
    return {"conv_stream": "conv_b32_w128", "lstm_stream": "lstm_b32_w64"}.get(
        name, name[:-len("_stream")] if name.endswith("_stream") else name)


def target_row(text, measured, met, cause=""):
    return f"| {text} | {measured} | {'yes' if met else 'no'} | {'' if met else cause} |"


def targets(results, run):
    """Each target with the measured value, met or not, and for a missed one where Canary's time goes."""
    lines = ["| target | measured | met | where the time goes (missed only) |", "|---|---|---|---|"]
    for f in run["fixed"]:
        t = results["workloads"][f["name"]]["targets"]
        canary = median_of(f["contenders"].get("canary", {}))
        ort = median_of(f["contenders"].get("onnxruntime", {}))
        cause = top_tiers(run, f["name"])
        if "speedup_vs_ort" in t and canary and ort:
            x = ort / canary
            lines.append(target_row(f"{f['title']}: ≥ {t['speedup_vs_ort']:g}x faster than ORT", f"{x:.2f}x",
                                    x >= t["speedup_vs_ort"], cause))
        if "canary_over_floor" in t and canary:
            floor = floor_us(results, run, f["name"])
            if floor:
                x = canary / floor
                lines.append(target_row(f"{f['title']}: within {t['canary_over_floor']:g}x of the bandwidth floor",
                                        f"{x:.2f}x", x <= t["canary_over_floor"], cause))
    for s in run["streams"]:
        c = s["contenders"]
        canary, ort = c.get("canary", {}).get("total_median_us"), c.get("onnxruntime", {}).get("total_median_us")
        limit = results["workloads"].get(s["name"], {}).get("max_vs_ort", 0.8)
        if canary and ort:
            lines.append(target_row(f"{s['title']}: ≤ {limit:g}x of ORT's total", f"{canary / ort:.2f}x",
                                    canary / ort <= limit, top_tiers(run, fixed_of_stream(s["name"]))))
    for u in run["unseen"]:
        e = u["contenders"].get("canary", {})
        if "ratio_median" in e:
            lines.append(target_row(f"{u['name']}: first call within 1.2x of a repeat call",
                                    f"{e['ratio_median']:.2f}x", e["ratio_median"] <= 1.2))
    return lines


def thread_scaling(results):
    """Every workload at least as fast on 2 threads as on 1 (Canary's medians of the two runs)."""
    by_threads = {r["threads"]: r for r in results["runs"]}
    if 1 not in by_threads or 2 not in by_threads:
        return []
    one = {f["name"]: f for f in by_threads[1]["fixed"]}
    lines = ["| workload | 1 thread | 2 threads | 2 threads / 1 | met |", "|---|---|---|---|---|"]
    for f in by_threads[2]["fixed"]:
        a = median_of(one.get(f["name"], {}).get("contenders", {}).get("canary", {}))
        b = median_of(f["contenders"].get("canary", {}))
        if a and b:
            lines.append(f"| {f['title']} | {fmt_us(a)} | {fmt_us(b)} | {b / a:.2f}x | {'yes' if b <= a else 'no'} |")
    return lines


def machine_lines(results):
    f = results["floors"]
    m = f.get("machine", {})
    lines = [f"- Machine: {m.get('cpu', m.get('cpu_model', '?'))}, {m.get('logical_cores', m.get('cores', '?'))} "
             f"logical cores, kernel {m.get('kernel', '?')}, ISAs {m.get('isas', '?')}."]
    for t in f["triad"]:
        lines.append(f"- Triad, {t['threads']} thread(s), {t['bytes'] / 2**20:.0f} MiB working set: "
                     f"{t['gbps_best']:.1f} GB/s best, {t['gbps_median']:.1f} median.")
    for t in f["fma"]:
        lines.append(f"- FMA {t['isa']}, {t['threads']} thread(s): {t['gflops_best']:.0f} GFLOP/s best.")
    return lines


def markdown(results):
    out = ["# Peer benchmark results", "",
           "Generated by `bash bench/peers/run.sh` (do not edit by hand). Every figure comes from one run in which "
           "the contenders alternated (A B C D, rotating the order each round); quote ratios, not absolute times: "
           "whole runs on this shared machine differ by 30–50%.", "",
           f"Commit {results['commit']}, {results['date']}, {results['rounds']} rounds"
           f"{' (quick smoke run: few calls)' if results['quick'] else ''}, {results['seconds']:.0f} s in all.", ""]
    out += machine_lines(results)
    for run in results["runs"]:
        out += ["", f"## {run['threads']} thread{'s' if run['threads'] > 1 else ''}", ""]
        out += ["Versions: " + "; ".join(f"{n}: " + ", ".join(f"{k} {v}" for k, v in vs.items())
                                         for n, vs in run["versions"].items()), ""]
        out += ["### Per call (median, min–max)", ""] + fixed_table(results, run)
        if run["streams"]:
            out += ["", "### Dynamic streams (total, creation and every compile included; median of rounds)", ""]
            out += stream_table(run)
        if run["unseen"]:
            out += ["", "### First call at an unseen shape", ""] + unseen_table(run)
        out += ["", "### Targets", ""] + targets(results, run)
        out += ["", "### Where Canary's time goes (its own per-tier timers, Options::collect_timings)", ""]
        out += profile_lines(run)
    scaling = thread_scaling(results)
    if scaling:
        out += ["", "## Two threads against one (target: at least as fast on every workload)", ""] + scaling
    out += ["", "## Notes", "",
            "- Outputs of every contender are checked against Canary's fp64 reference interpreter "
            f"(|diff| ≤ 1e-4·max(1, max|ref|) + 1e-3·|ref|) before any timing; a contender that disagrees "
            "or fails is listed as such and not timed.",
            "- ONNX Runtime runs through onnxruntime-node: each timed call includes the Node binding "
            "(an event-loop turn and JavaScript wrapping), which dominates calls on tiny inputs.",
            "- PyTorch runs the same ONNX graph op by op with torch (eager), and that executor traced with "
            "torch.jit.trace and frozen (TorchScript); this build's TorchScript fuser is off.",
            "- Canary runs with default Options (JIT on, compiles on a background thread); stream totals are "
            "wall time, so a compile that overlaps calls on the second core counts only where it delays them.", ""]
    return "\n".join(out)
