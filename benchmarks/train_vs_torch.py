#!/usr/bin/python3
"""Training throughput and peak memory, tapegrad vs PyTorch, same models, same initial
parameters, same batches, alternating runs in one invocation.

    /usr/bin/python3 benchmarks/train_vs_torch.py [--repeats 3] [--threads 1,2] [--configs ...] [--merge]

For each configuration bench_train dumps its initial parameters and batches; torch_train.py
loads them, so both sides run the same computation: their loss trajectories must agree
(checked, reported as max relative difference). Tokens/s is the median over the timed steps
of each run, then the median over repeats; peak memory is /usr/bin/time's maximum resident
set size of the whole process.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Another build's binary (e.g. to compare two commits): TAPEGRAD_BENCH_TRAIN=path/to/bench_train.
BENCH = os.environ.get("TAPEGRAD_BENCH_TRAIN", os.path.join(ROOT, "build", "bin", "bench_train"))

CONFIGS = {
    "gpt-tiny": ["--model", "gpt", "--d-model", "128", "--layers", "2", "--heads", "4", "--context", "64", "--batch", "32"],
    "gpt-tiny-tied": ["--model", "gpt", "--d-model", "128", "--layers", "2", "--heads", "4", "--context", "64", "--batch", "32", "--tied"],
    "gpt-small": ["--model", "gpt", "--d-model", "256", "--layers", "4", "--heads", "4", "--context", "128", "--batch", "16"],
    "gpt-small-tied": ["--model", "gpt", "--d-model", "256", "--layers", "4", "--heads", "4", "--context", "128", "--batch", "16", "--tied"],
    "nplm": ["--model", "nplm", "--d-model", "128", "--hidden", "128", "--ngram", "5", "--context", "64", "--batch", "32"],
    # The study across scale (scripts/scaling.sh; its d128 is gpt-tiny): one step of each size's
    # runs, so that the sweep's compute plan can be read off the table; --configs
    # sweep-d64,gpt-tiny,sweep-d192,sweep-d256 --threads 1 (its runs take one core each).
    "sweep-d64": ["--model", "gpt", "--d-model", "64", "--layers", "2", "--heads", "2", "--context", "64", "--batch", "32"],
    "sweep-d192": ["--model", "gpt", "--d-model", "192", "--layers", "3", "--heads", "6", "--context", "64", "--batch", "32"],
    "sweep-d256": ["--model", "gpt", "--d-model", "256", "--layers", "4", "--heads", "8", "--context", "64", "--batch", "32"],
    # The size sweep's upper end and GPT-2 small's body (Brown's vocabulary): not in the default
    # list (minutes per run on two cores); --configs gpt-d512,gpt2-small-body.
    "gpt-d512": ["--model", "gpt", "--d-model", "512", "--layers", "4", "--heads", "8", "--context", "128", "--batch", "16"],
    "gpt2-small-body": ["--model", "gpt", "--d-model", "768", "--layers", "12", "--heads", "12", "--context", "1024",
                        "--batch", "4"],
}


def order(row):
    """Rows in CONFIGS order, then by threads."""
    names = list(CONFIGS)
    return (names.index(row["config"]) if row["config"] in names else len(names), row["threads"])


def timed(cmd, env=None):
    res = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stderr[-2000:]}")
    rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr).group(1))
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["peak_rss_mib"] = rss_kib / 1024
    return out


MICRO = os.path.join(os.path.dirname(BENCH), "bench_micro")


def sgemm_peak(threads):
    """The machine's limit right now: 2048^3 sgemm GFLOP/s at this thread count (bench_micro).
    Measured before every repeat, because this machine's speed drifts by 30% within minutes."""
    res = subprocess.run([MICRO, f"--benchmark_filter=BM_sgemm_peak/2048/{threads}/", "--benchmark_format=json"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{MICRO} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout)["benchmarks"][0]["GFLOP/s"]


# PyTorch allocates every large activation afresh, and glibc hands freed large blocks back to
# the kernel, so each step faults them in again, page by page (tapegrad keeps them: mallopt in
# autograd/tensor.cpp). Where page faults are dear that costs PyTorch more than its arithmetic
# (benchmarks/HISTORY.md). Its CPU tuning advice is jemalloc; with decay off, freed blocks stay
# mapped and are reused.
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
JEMALLOC_CONF = "dirty_decay_ms:-1,muzzy_decay_ms:-1"


def torch_allocator():
    return f"jemalloc ({JEMALLOC_CONF})" if os.path.exists(JEMALLOC) else "glibc"


def torch_env(threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads))
    if threads > 1:
        env["OMP_WAIT_POLICY"] = "PASSIVE"  # measured to help PyTorch a lot at 2 threads here
    if os.path.exists(JEMALLOC):
        # Prepended, so that a caller's own preloads (a profiler, a sanitizer) still load.
        env["LD_PRELOAD"] = " ".join(filter(None, [JEMALLOC, os.environ.get("LD_PRELOAD", "")]))
        env["MALLOC_CONF"] = JEMALLOC_CONF
    return env


def cpu_model():
    """The CPU's model name: rows measured on different machines must say so."""
    return next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--configs", default="gpt-tiny,gpt-tiny-tied,gpt-small,gpt-small-tied,nplm")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--merge", action="store_true",
                    help="re-measure only the given configs/threads: other rows of train.json are kept, "
                         "each with the date it was measured")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="train_bench_")
    today = datetime.date.today().isoformat()
    kept = []
    previous = os.path.join(args.out, "train.json")
    if args.merge and os.path.exists(previous):
        old = json.load(open(previous))
        old_date = datetime.date.fromtimestamp(os.path.getmtime(previous)).isoformat()
        wanted = {(c, int(t)) for c in args.configs.split(",") for t in args.threads.split(",")}
        # Rows from before bench_train reported its threading came from the pthreads build.
        kept = [dict(r, measured=r.get("measured", old_date), threading=r.get("threading", "pthreads"))
                for r in old["rows"] if (r["config"], r["threads"]) not in wanted]
    rows = []
    for name in args.configs.split(","):
        for threads in [int(t) for t in args.threads.split(",")]:
            dump = os.path.join(tmp, f"{name}.st")
            base = [BENCH] + CONFIGS[name] + ["--threads", str(threads), "--steps", str(args.steps)]
            ours, theirs, peaks = [], [], []
            for rep in range(args.repeats):
                peaks.append(sgemm_peak(threads))
                ours.append(timed(base + (["--dump", dump] if rep == 0 else [])))
                theirs.append(timed(["/usr/bin/python3", os.path.join(HERE, "torch_train.py"), "--dump", dump,
                                     "--threads", str(threads)], env=torch_env(threads)))
                print(f"{name} threads {threads} repeat {rep + 1}: tapegrad {ours[-1]['tokens_per_s']:.0f} tok/s, "
                      f"pytorch {theirs[-1]['tokens_per_s']:.0f} tok/s, sgemm peak {peaks[-1]:.0f} GFLOP/s", file=sys.stderr)
            # Model FLOPs per token as bench_train counts them (docs/performance.md), the same
            # for both sides: they train the same model. Each run against the peak measured just
            # before it, then the median.
            flops = ours[0]["model_flops_per_token"]
            fraction = statistics.median(flops * r["tokens_per_s"] / (p * 1e9) for r, p in zip(ours, peaks))
            torch_fraction = statistics.median(flops * r["tokens_per_s"] / (p * 1e9) for r, p in zip(theirs, peaks))
            la, lb = ours[0]["losses"], theirs[0]["losses"]
            loss_diff = max(abs(a - b) / abs(b) for a, b in zip(la, lb))
            tps = statistics.median(r["tokens_per_s"] for r in ours)
            ttps = statistics.median(r["tokens_per_s"] for r in theirs)
            # sgemm inside our steps (bench_train's accounting): its share of the step time and
            # its FLOP/s on this model's shapes. Times are summed over calling threads, so the
            # share is exact at one thread only.
            gemm = {"share": statistics.median(r["gemm_seconds"] / sum(r["step_seconds"]) for r in ours),
                    "gflops": statistics.median(r["gemm_flops"] / r["gemm_seconds"] / 1e9 for r in ours)} \
                if "gemm_seconds" in ours[0] and ours[0]["gemm_seconds"] > 0 else None
            rows.append({"config": name, "threads": threads, "vocab": ours[0]["vocab"], "params": ours[0]["params"],
                         "tokens_per_step": ours[0]["tokens_per_step"],
                         "flops_per_token": flops, "sgemm_peak_gflops": peaks, "peak_fraction": fraction,
                         "pytorch_peak_fraction": torch_fraction, "gemm": gemm,
                         "tapegrad": {"tokens_per_s": tps, "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in ours),
                                      "runs": [r["tokens_per_s"] for r in ours], "losses": la},
                         "pytorch": {"tokens_per_s": ttps, "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in theirs),
                                     "runs": [r["tokens_per_s"] for r in theirs], "losses": lb,
                                     "torch": theirs[0]["torch"], "blas": theirs[0]["blas"],
                                     "allocator": torch_allocator()},
                         "speed_ratio": tps / ttps, "loss_max_rel_diff": loss_diff, "measured": today,
                         "cpu": cpu_model(),
                         "threading": ours[0].get("threading", "pthreads"), "blas_kernel": ours[0].get("blas_kernel")})
            with open(os.path.join(args.out, "train.json.tmp"), "w") as f:
                json.dump({"benchmark": "train_vs_torch", "repeats": args.repeats, "steps": args.steps,
                           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "auto"),
                           "rows": sorted(kept + rows, key=order)}, f, indent=2)
            os.replace(os.path.join(args.out, "train.json.tmp"), os.path.join(args.out, "train.json"))


if __name__ == "__main__":
    main()
