#!/usr/bin/python3
"""Renders benchmarks/RESULTS.md from the JSON files in benchmarks/results/."""
import datetime
import json
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(HERE, "results")


def load(name):
    path = os.path.join(R, name)
    return json.load(open(path)) if os.path.exists(path) else None


def ratio_plot(train):
    """benchmarks/ratios.png: our tokens/s over PyTorch's per configuration and thread count, the
    median of the alternating runs' ratios with their range as error bars, and the targets."""
    if not shutil.which("gnuplot"):
        return ""
    rows = []
    for r in train["rows"]:
        ratios = [a / b for a, b in zip(r["tapegrad"]["runs"], r["pytorch"]["runs"])] or [r["speed_ratio"]]
        rows.append((f"{r['config']} ({r['threads']}t)", statistics.median(ratios), min(ratios), max(ratios)))
    data = "".join(f"{i}\t{name}\t{med}\t{lo}\t{hi}\n" for i, (name, med, lo, hi) in enumerate(rows))
    open(os.path.join(HERE, "ratios.dat"), "w").write(data)
    top = max(hi for _, _, _, hi in rows)
    script = f"""set terminal pngcairo size 900,520 font ',11'
set output 'ratios.png.tmp'
set datafile separator '\\t'
set grid ytics
set key below horizontal
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:{top * 1.15:.2f}]
set xrange [-0.6:{len(rows) - 0.4}]
set ylabel 'tokens/s, tapegrad / PyTorch'
set xtics rotate by -30
plot 'ratios.dat' using 1:3:xtic(2) with boxes lc rgb '#1f77b4' title 'median of alternating runs', \\
     '' using 1:3:4:5 with yerrorbars lc rgb '#000000' pt 0 title 'range over runs', \\
     1 with lines dt 2 lc rgb '#7f7f7f' title 'PyTorch'
"""
    open(os.path.join(HERE, "ratios.gp"), "w").write(script)
    ok = subprocess.run(["gnuplot", "ratios.gp"], cwd=HERE).returncode == 0
    for f in ("ratios.dat", "ratios.gp"):
        os.remove(os.path.join(HERE, f))
    if not ok:
        return ""
    os.replace(os.path.join(HERE, "ratios.png.tmp"), os.path.join(HERE, "ratios.png"))
    return "![speed ratios against PyTorch](ratios.png)"


def log_ticks(low, high):
    """1, 2, 5 x 10^k between low and high, or finer steps when that gives fewer than 4 labels
    (an axis spanning less than a decade)."""
    import math
    decades = range(int(math.floor(math.log10(low))), int(math.ceil(math.log10(high))) + 1)
    for mantissas in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7)):
        ticks = [m * 10 ** k for k in decades for m in mantissas if low <= m * 10 ** k <= high]
        if len(ticks) >= 4:
            break
    return "(" + ", ".join(f"{t:g}" for t in ticks) + ")"


def scaling_plot(scaling, sweep, xlabel):
    """benchmarks/scaling_<sweep>.png: tokens/s and peak memory of both sides against the swept
    size (log axes), the median over alternating runs with their range as error bars."""
    rows = [r for r in scaling["rows"] if r["sweep"] == sweep]
    if not shutil.which("gnuplot") or len(rows) < 2:
        return ""
    data = "".join(
        f"{r['x']}\t{r['tapegrad']['tokens_per_s']}\t{min(r['tapegrad']['runs'])}\t{max(r['tapegrad']['runs'])}"
        f"\t{r['pytorch']['tokens_per_s']}\t{min(r['pytorch']['runs'])}\t{max(r['pytorch']['runs'])}"
        f"\t{r['tapegrad']['peak_rss_mib']}\t{r['pytorch']['peak_rss_mib']}\n" for r in rows)
    name = f"scaling_{sweep}"
    open(os.path.join(HERE, name + ".dat"), "w").write(data)
    xs = [r["x"] for r in rows]
    speeds = [v for r in rows for side in ("tapegrad", "pytorch") for v in r[side]["runs"]]
    memory = [r[side]["peak_rss_mib"] for r in rows for side in ("tapegrad", "pytorch")]
    script = f"""set terminal pngcairo size 1000,420 font ',11'
set output '{name}.png.tmp'
set datafile separator '\\t'
set logscale xy
set grid
set key below horizontal
set xrange [{min(xs) / 1.2}:{max(xs) * 1.2}]
set xtics ({", ".join(str(x) for x in xs)})
set xlabel '{xlabel}' noenhanced
set multiplot layout 1,2
set ylabel 'training tokens/s ({scaling["threads"]} threads)'
set yrange [{min(speeds) / 1.3}:{max(speeds) * 1.3}]
set ytics {log_ticks(min(speeds) / 1.3, max(speeds) * 1.3)}
plot '{name}.dat' using 1:2:3:4 with yerrorlines lc rgb '#1f77b4' pt 7 title 'tapegrad', \\
     '' using 1:5:6:7 with yerrorlines lc rgb '#d62728' pt 5 title 'PyTorch'
set ylabel 'peak memory (MiB)'
set yrange [{min(memory) / 1.3}:{max(memory) * 1.3}]
set ytics {log_ticks(min(memory) / 1.3, max(memory) * 1.3)}
plot '{name}.dat' using 1:8 with linespoints lc rgb '#1f77b4' pt 7 title 'tapegrad', \\
     '' using 1:9 with linespoints lc rgb '#d62728' pt 5 title 'PyTorch'
unset multiplot
"""
    open(os.path.join(HERE, name + ".gp"), "w").write(script)
    ok = subprocess.run(["gnuplot", name + ".gp"], cwd=HERE).returncode == 0
    for f in (name + ".dat", name + ".gp"):
        os.remove(os.path.join(HERE, f))
    if not ok:
        return ""
    os.replace(os.path.join(HERE, name + ".png.tmp"), os.path.join(HERE, name + ".png"))
    return f"![{sweep} sweep]({name}.png)"


def scaling_section(scaling):
    lines = ["## How cost grows with model size and context", "",
             f"`benchmarks/scaling.py`: GPT, no dropout, {scaling['threads']} threads, {scaling['repeats']} alternating "
             f"runs of {scaling['steps']} timed steps after one untimed; same parameters and batches on both sides. "
             "`d_model` sweep: context 256, batch 4, layers and heads d_model / 64 as GPT-2's; `context` sweep: d_model 256, "
             "4 layers, 4 heads, 4,096 tokens per step (a flat memory there is linear in the context: no [T, T] "
             "matrix is kept); `gpt2`: GPT-2 small's shape with our vocabulary. `PyTorch allocator`: rows "
             "measured before the benchmarks gave PyTorch jemalloc ran it on glibc's, whose page faults on "
             "every step's fresh activations slow PyTorch (HISTORY.md), so their ratios overstate ours.", "",
             "| sweep | point | params | tapegrad tok/s | PyTorch tok/s | speed ratio | of sgemm peak | tapegrad MiB | "
             "PyTorch MiB | memory ratio | loss diff | PyTorch allocator |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in scaling["rows"]:
        allocator = r["pytorch"].get("allocator", "glibc").split(" ")[0]
        lines.append(f"| {r['sweep']} | {r['name']} | {r['params'] / 1e6:.1f}M | {r['tapegrad']['tokens_per_s']:,.0f} | "
                     f"{r['pytorch']['tokens_per_s']:,.0f} | {r['speed_ratio']:.2f}x | {100 * r['peak_fraction']:.0f}% | "
                     f"{r['tapegrad']['peak_rss_mib']:,.0f} | {r['pytorch']['peak_rss_mib']:,.0f} | "
                     f"{r['memory_ratio']:.2f} | {r['loss_max_rel_diff']:.1e} | {allocator} |")
    lines.append("")
    for sweep, xlabel in (("d_model", "d_model (layers = heads = d_model / 64)"), ("context", "context (tokens)")):
        image = scaling_plot(scaling, sweep, xlabel)
        if image:
            lines += [image, ""]
    return lines


def utilisation(row):
    """ "12.5% / 4.1% of 3.60 TFLOP/s": both bf16 sides' share of the measured bf16 product rate."""
    if "mfu" not in row["bf16"]:
        return ""
    return (f"{100 * row['bf16']['mfu']:.1f}% / {100 * row['torch_bf16']['mfu']:.1f}% "
            f"of {row['bf16_peak_tflops']:.2f} TFLOP/s")


def bf16_section(bf16, heading="## bf16 products vs PyTorch autocast"):
    """The bf16 rows: tapegrad fp32 and bf16 against PyTorch autocast bf16, one invocation."""
    lines = [heading, "",
             f"{bf16['cpu']}; native bf16: {bf16['native_bf16'] or 'none'}"
             + (f"; fp32 products on OpenBLAS's `{bf16['blas_kernel']}` kernel" if bf16.get("blas_kernel") else "")
             + (f"; PyTorch's allocator {bf16['torch_allocator']}"
                if bf16.get("torch_allocator", "glibc") != "glibc" else "")
             + ". tapegrad `--precision fp32`, "
             "`--precision bf16` and PyTorch under `torch.autocast(\"cpu\", torch.bfloat16)` from the same "
             f"parameters and batches, {bf16['repeats']} alternating runs of {bf16['steps']} timed steps "
             "(`benchmarks/bf16_vs_torch.py`). Losses: the median (and largest) relative difference of "
             "tapegrad's bf16 losses from PyTorch's, step by step; a largest far above the median is a step "
             "where one side's loss spiked and recovered." + (f" {bf16['note']}" if bf16.get("note") else ""), "",
             "| config | threads | tapegrad fp32 tok/s | tapegrad bf16 tok/s | PyTorch autocast bf16 tok/s "
             "| bf16 / fp32 | bf16 / PyTorch | peak RSS fp32 / bf16 / PyTorch (MiB) | bf16 / PyTorch RSS | losses |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    measured = any("mfu" in r.get("bf16", {}) for r in bf16["rows"])
    if measured:
        lines[-2] += " of bf16 peak: tapegrad / PyTorch |"
        lines[-1] += "---:|"
        lines[2] += (" `of bf16 peak`: model FLOP/s (bench_train's count of the model's FLOPs per token, "
                     "docs/performance.md, x tokens/s) over the 2048^3 bf16 product rate through oneDNN "
                     "measured by bench_train in the same repeat at the same threads (the median over "
                     "repeats); PyTorch's at the same FLOPs per token.")
    for r in bf16["rows"]:
        fp32 = r["fp32"]["tokens_per_s"]
        # A config timed over other than the run's step count says so.
        config = r["config"] + (f" ({r['steps']} steps)" if r.get("steps", bf16["steps"]) != bf16["steps"] else "")
        if "bf16" not in r:
            lines.append(f"| {config} | {r['threads']} | {fp32:,.0f} | no native bf16 on this CPU | | | | | |"
                         + (" |" if measured else ""))
            continue
        bf, tb = r["bf16"]["tokens_per_s"], r["torch_bf16"]["tokens_per_s"]
        mem = " / ".join(f"{r[s]['peak_rss_mib']:.0f}" for s in ("fp32", "bf16", "torch_bf16"))
        # Same parameters and batches on both sides: the loss curves agree to bf16's rounding.
        diffs = [abs(a - b) / abs(b) for a, b in zip(r["bf16"]["losses"], r["torch_bf16"]["losses"])]
        rss = r["bf16"]["peak_rss_mib"] / r["torch_bf16"]["peak_rss_mib"]
        lines.append(f"| {config} | {r['threads']} | {fp32:,.0f} | {bf:,.0f} | {tb:,.0f} | {bf / fp32:.2f}x "
                     f"| {bf / tb:.2f}x | {mem} | {rss:.2f}x | {statistics.median(diffs):.1e} ({max(diffs):.1e}) |"
                     + (f" {utilisation(r)} |" if measured else ""))
    return lines + [""]


def tokenizer_lines(tok):
    lines = [f"{tok['cpu']}, one thread each; tiktoken {tok['tiktoken']} (npm, WebAssembly) under node "
             f"{tok['node']}; each figure the median of {tok['rounds']} alternating rounds, each round the median "
             f"of {tok['repeats']} encodings of the whole text in one process (vocabulary loading excluded) "
             "(`benchmarks/tokenizer_vs_tiktoken.py`).", "",
             "| text | MB | tokens | tapegrad MB/s | tiktoken MB/s | speed-up | identical ids |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for r in tok["texts"]:
        lines.append(f"| {r['text']} | {r['bytes'] / 1e6:.2f} | {r['tokens']:,} | {r['ours_mb_s']:.1f} | "
                     f"{r['tiktoken_mb_s']:.1f} | {r['speedup']:.1f}x | {'yes' if r['identical'] else 'NO'} |")
    lines += ["", "One word of random letters (the merge loop on one long piece):", "",
              "| word | tapegrad s | tapegrad s/MB | tiktoken s |", "|---:|---:|---:|---:|"]
    for r in tok["long_words"]:
        ref = f"{r['tiktoken_s']:.3f}" if "tiktoken_s" in r else "not run (quadratic)"
        lines.append(f"| {r['kb']:,} KB | {r['ours_s']:.3f} | {r['ours_s'] / r['kb'] * 1024:.3f} | {ref} |")
    return lines + [""]


def main():
    micro, w2v, train = load("micro.json"), load("word2vec.json"), load("train.json")
    mpi = load("mpi_scaling.json")
    tok = load("tokenizer.json")
    scaling = load("scaling.json")
    lines = ["# Benchmarks", "", f"Rendered {datetime.date.today()} by `benchmarks/render_results.py` from "
             "`benchmarks/results/*.json` (written by `scripts/bench.sh`). All figures are medians of repeated runs "
             "measured in the same invocation, alternating between the systems compared.", ""]
    peak = {}
    if micro:
        ctx = micro["context"]
        lines += ["## Machine and micro-benchmarks", "",
                  f"{ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz; OpenBLAS kernel "
                  f"`{micro.get('openblas_coretype', 'auto')}`.", "",
                  "| benchmark | time | extra |", "|---|---:|---|"]
        for b in micro["benchmarks"]:
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            # Google Benchmark stores the inverted-rate counter in seconds.
            extra = ", ".join(f"{k} {b[k] * (1e9 if k == 'ns/op' else 1):.1f}" for k in ("GFLOP/s", "ns/op") if k in b)
            if b.get("label"):
                extra = (b["label"] + "; " + extra) if extra else b["label"]
            lines.append(f"| {b['name']} | {b['real_time']:.3f} {b['time_unit']} | {extra} |")
            if b["name"].startswith("BM_sgemm_peak/2048/"):
                peak[int(b["name"].split("/")[2].split("_")[0])] = b["GFLOP/s"]
        lines.append("")
    if train:
        with_gemm = any(r.get("gemm") for r in train["rows"])
        lines += ["## Training throughput and memory vs PyTorch", "",
                  f"PyTorch {train['rows'][0]['pytorch']['torch']}"
                  + (f" with {train['rows'][0]['pytorch']['allocator']} as its allocator (PyTorch's CPU tuning "
                     "advice: freed activations stay mapped, as tapegrad's do)"
                     if train['rows'][0]['pytorch'].get('allocator', 'glibc') != 'glibc' else "")
                  + f"; {train['repeats']} alternating runs of "
                  f"{train['steps']} timed steps each (after 3 untimed). Loss trajectories of the two sides start from "
                  "the same parameters and batches; `loss diff` is their largest relative difference over the run. "
                  "`measured`: the date of the row's runs and how our side threaded (`openmp`: BLAS and the ops share "
                  "one OpenMP pool; `pthreads`: OpenBLAS's pthreads, ops on one thread); rows re-measured with "
                  "`train_vs_torch.py --merge` are newer than the rest. `of sgemm peak`: model FLOP/s (model FLOPs per "
                  "token as bench_train counts them, docs/performance.md, x tokens/s; rows measured before it "
                  "counted attention's causal half) over the 2048^3 sgemm GFLOP/s at the same thread count, measured just before each "
                  "run (the median over runs; `sgemm GFLOP/s`: the median peak); rows without it use the "
                  "micro-benchmarks' peak above." + (
                      " `in sgemm`: the share of our step spent inside sgemm (one thread only: at two, the output "
                      "layer's threads call it side by side) and `sgemm on its shapes`: sgemm's own GFLOP/s over this "
                      "model's products; `of sgemm peak` is about their product over the peak, so a model whose "
                      "products run below the 2048^3 peak cannot reach it however little else it does: `ceiling` is "
                      "that bound, sgemm on its shapes over the peak (one thread)."
                      if with_gemm else ""), "",
                  "| model | threads | tapegrad tok/s | PyTorch tok/s | ratio | of sgemm peak (ours) | "
                  "of sgemm peak (PyTorch) | sgemm GFLOP/s | "
                  + ("in sgemm | sgemm on its shapes | ceiling | " if with_gemm else "")
                  + "tapegrad peak MiB | PyTorch peak MiB | memory ratio | loss diff | measured |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if with_gemm else "") + "---:|---:|---:|---:|---|"]
        for r in train["rows"]:
            gemm = r.get("gemm") or {}
            share = f"{100 * gemm['share']:.0f}%" if gemm and r["threads"] == 1 else ""
            shapes = f"{gemm['gflops']:.0f}" if gemm else ""
            ceiling = (f"{100 * gemm['gflops'] / statistics.median(r['sgemm_peak_gflops']):.0f}%"
                       if gemm and r["threads"] == 1 and "sgemm_peak_gflops" in r else "")
            gemm_cells = f"{share} | {shapes} | {ceiling} | " if with_gemm else ""
            frac, gflops = "", ""
            torch_frac = f"{100 * r['pytorch_peak_fraction']:.0f}%" if "pytorch_peak_fraction" in r else ""
            if "peak_fraction" in r:
                frac, gflops = f"{100 * r['peak_fraction']:.0f}%", f"{statistics.median(r['sgemm_peak_gflops']):.0f}"
            elif r["threads"] in peak:
                frac = f"{100 * r['flops_per_token'] * r['tapegrad']['tokens_per_s'] / (peak[r['threads']] * 1e9):.0f}%"
                gflops = f"{peak[r['threads']]:.0f} (micro)"
            lines.append(f"| {r['config']} | {r['threads']} | {r['tapegrad']['tokens_per_s']:,.0f} | "
                         f"{r['pytorch']['tokens_per_s']:,.0f} | {r['speed_ratio']:.2f}x | {frac} | {torch_frac} | {gflops} | {gemm_cells}"
                         f"{r['tapegrad']['peak_rss_mib']:.0f} | {r['pytorch']['peak_rss_mib']:.0f} | "
                         f"{r['tapegrad']['peak_rss_mib'] / r['pytorch']['peak_rss_mib']:.2f} | {r['loss_max_rel_diff']:.1e} | "
                         f"{r.get('measured', '')} {r.get('threading', '')} |")
        lines.append("")
        image = ratio_plot(train)
        if image:
            lines += [image, ""]
    if scaling:
        lines += scaling_section(scaling)
    bf16 = load("bf16.json")
    if bf16:
        lines += bf16_section(bf16)
        # Earlier machines' runs, kept as bf16_<machine>.json when the newest run was on another CPU.
        for name in sorted(f for f in os.listdir(R) if f.startswith("bf16_") and f.endswith(".json")):
            lines += bf16_section(load(name), "On another machine, same benchmark:")
    if w2v:
        lines += ["## word2vec vs gensim", "",
                  f"gensim {w2v['gensim_version']}, skip-gram, dim 128, window 5, negative 5, sample 1e-3, 5 epochs, "
                  f"min count 4, Brown training split; {w2v['repeats']} alternating runs; words/s = corpus words x epochs / "
                  "training seconds; WordSim-353 and SimLex-999 by the same evaluator for both.", ""]
        lines += open(os.path.join(R, "word2vec.md")).read().splitlines() + [""]
        # Earlier machines' runs, kept as word2vec_<isa>.md when the newest run was on another CPU.
        for name in sorted(f for f in os.listdir(R) if f.startswith("word2vec_") and f.endswith(".md")):
            lines += ["On another machine, same benchmark:", ""]
            lines += open(os.path.join(R, name)).read().splitlines() + [""]
    if tok:
        lines += ["## GPT-2 tokenizer vs tiktoken", ""] + tokenizer_lines(tok)
        # Other machines' runs, kept as tokenizer_<machine>.json.
        for name in sorted(f for f in os.listdir(R) if f.startswith("tokenizer_") and f.endswith(".json")):
            lines += ["On another machine, same benchmark:", ""] + tokenizer_lines(load(name))
    if mpi:
        lines += ["## Data parallelism over MPI ranks", "",
                  f"{mpi['mpi']}; the same global batch on 1 rank and on 2 ranks of 1 OpenBLAS thread each "
                  f"(`mpirun -np 2 --bind-to core`), {mpi['repeats']} alternating runs of {mpi['steps']} timed steps. "
                  "Communication: the share of step time a rank spends blocked in gradient exchange; "
                  "stop check: the share in the per-step agreement on a stop signal (a one-value "
                  "allreduce on 2 ranks, including any wait for the other rank it absorbs) "
                  "(`benchmarks/mpi_scaling.py`).", "",
                  "| model | run | tok/s | speed-up vs 1 rank | communication | stop check |",
                  "|---|---|---:|---:|---:|---:|"]
        for r in mpi["rows"]:
            stop = f"{100 * r['stop_check_fraction']:.2f}%" if "stop_check_fraction" in r else "-"
            lines.append(f"| {r['config']} | {r['variant']} | {r['tokens_per_s']:,.0f} | {r['speedup']:.2f}x | "
                         f"{100 * r['comm_fraction']:.1f}% | {stop} |")
        lines.append("")
    tmp = os.path.join(HERE, "RESULTS.md.tmp")
    open(tmp, "w").write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(HERE, "RESULTS.md"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
