#!/usr/bin/python3
"""How cost grows with model size and context: tokens/s and peak memory, tapegrad and PyTorch
side by side (same model, parameters and batches, as train_vs_torch.py), alternating runs.

    /usr/bin/python3 benchmarks/scaling.py [--threads 2] [--repeats 3] [--steps 3] [--sweeps d_model,context,gpt2]
        [--names ctx2048,...] [--merge]

Sweeps (GPT, no dropout, our 17,905-word vocabulary):
  d_model  128, 256, 512, 768 at context 256, batch 4; layers and heads grow as GPT-2's
           (d_model / 64 each: 2, 4, 8, 12)
  context  64 to 2048 at d_model 256, 4 layers, 4 heads, 4,096 tokens per step (a memory that
           stays flat here is linear in the context: no [T, T] matrix is kept)
  gpt2     GPT-2 small's shape: d_model 768, 12 layers, 12 heads, context 1024, batch 4
Writes benchmarks/results/scaling.json (with --merge, the points measured now replace or join
those already there); render_results.py draws scaling_*.png from it.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_vs_torch import BENCH, HERE, sgemm_peak, timed, torch_allocator, torch_env  # noqa: E402


def gpt(d_model, layers, heads, context, batch):
    return ["--model", "gpt", "--d-model", str(d_model), "--layers", str(layers), "--heads", str(heads),
            "--context", str(context), "--batch", str(batch)]


SWEEPS = {
    "d_model": [(f"d{d}", d, gpt(d, d // 64, d // 64, 256, 4)) for d in (128, 256, 512, 768)],
    "context": [(f"ctx{t}", t, gpt(256, 4, 4, t, 4096 // t)) for t in (64, 128, 256, 512, 1024, 2048)],
    "gpt2": [("gpt2-small", 768, gpt(768, 12, 12, 1024, 4))],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=3, help="timed steps per run (after bench_train's warm-up)")
    ap.add_argument("--sweeps", default=",".join(SWEEPS))
    ap.add_argument("--names", default="", help="only these points, e.g. ctx64,gpt2-small")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "scaling.json"))
    ap.add_argument("--merge", action="store_true", help="keep the other points already in --out")
    args = ap.parse_args()
    for s in args.sweeps.split(","):
        if s not in SWEEPS:
            sys.exit(f"scaling.py: unknown sweep '{s}' (known: {', '.join(SWEEPS)})")
    tmp = tempfile.mkdtemp(prefix="scaling_")
    kept = []
    if args.merge and os.path.exists(args.out):
        old = json.load(open(args.out))
        same = {k: old.get(k) for k in ("repeats", "steps", "threads")}
        if same != {"repeats": args.repeats, "steps": args.steps, "threads": args.threads}:
            sys.exit(f"scaling.py: --merge: {args.out} was measured with {same}; use the same settings")
        kept = old["rows"]
    rows = []
    for sweep in args.sweeps.split(","):
        for name, x, flags in SWEEPS[sweep]:
            if args.names and name not in args.names.split(","):
                continue
            dump = os.path.join(tmp, f"{name}.st")
            base = [BENCH] + flags + ["--threads", str(args.threads), "--steps", str(args.steps),
                                      "--warmup-steps", "1"]
            ours, theirs, peaks = [], [], []
            for rep in range(args.repeats):
                peaks.append(sgemm_peak(args.threads))
                ours.append(timed(base + (["--dump", dump] if rep == 0 else [])))
                theirs.append(timed(["/usr/bin/python3", os.path.join(HERE, "torch_train.py"), "--dump", dump,
                                     "--threads", str(args.threads), "--warmup-steps", "1"],
                                    env=torch_env(args.threads)))
                print(f"{sweep} {name} repeat {rep + 1}: tapegrad {ours[-1]['tokens_per_s']:.0f} tok/s "
                      f"{ours[-1]['peak_rss_mib']:.0f} MiB, pytorch {theirs[-1]['tokens_per_s']:.0f} tok/s "
                      f"{theirs[-1]['peak_rss_mib']:.0f} MiB", file=sys.stderr)
            cfg = ours[0]["config"]
            flops = ours[0]["model_flops_per_token"]  # bench_train's count (docs/performance.md)
            la, lb = ours[0]["losses"], theirs[0]["losses"]
            side = lambda runs: {"tokens_per_s": statistics.median(r["tokens_per_s"] for r in runs),
                                 "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in runs),
                                 "runs": [r["tokens_per_s"] for r in runs],
                                 "rss_runs": [r["peak_rss_mib"] for r in runs]}
            row = {"sweep": sweep, "name": name, "x": x, "params": ours[0]["params"], "config": cfg,
                   "threads": args.threads, "tokens_per_step": ours[0]["tokens_per_step"],
                   "flops_per_token": flops, "sgemm_peak_gflops": peaks,
                   "peak_fraction": statistics.median(flops * r["tokens_per_s"] / (p * 1e9)
                                                      for r, p in zip(ours, peaks)),
                   "tapegrad": side(ours), "pytorch": dict(side(theirs), allocator=torch_allocator()),
                   "loss_max_rel_diff": max(abs(a - b) / abs(b) for a, b in zip(la, lb))}
            row["speed_ratio"] = row["tapegrad"]["tokens_per_s"] / row["pytorch"]["tokens_per_s"]
            row["memory_ratio"] = row["tapegrad"]["peak_rss_mib"] / row["pytorch"]["peak_rss_mib"]
            rows.append(row)
            write(args, merged(kept, rows))


def merged(kept, new):
    """The points of both lists, a new one replacing a kept one of the same name, in SWEEPS order."""
    by_name = {(r["sweep"], r["name"]): r for r in kept + new}
    order = [(sweep, name) for sweep, points in SWEEPS.items() for name, _, _ in points]
    return [by_name[k] for k in order if k in by_name]


def write(args, rows):
    with open(args.out + ".tmp", "w") as f:
        json.dump({"benchmark": "scaling", "repeats": args.repeats, "steps": args.steps,
                   "threads": args.threads, "rows": rows}, f, indent=2)
    os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
