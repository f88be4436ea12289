#!/usr/bin/python3
"""word2vec speed and quality, this trainer vs gensim 4, same data and hyperparameters,
in the same run, alternating, at 1 and 2 threads.

    /usr/bin/python3 benchmarks/word2vec_vs_gensim.py [--repeats 3] [--out benchmarks/results]

Both sides train skip-gram, dim 128, window 5, negative 5, sample 1e-3, 5 epochs, min count 4
on the Brown training split (800,000 tokens, exported by `build/bin/word2vec export`), in
sentences of 1,000 tokens. Words/s = corpus words x epochs / training seconds (vocabulary
building excluded on both sides). Both sets of vectors are scored by the same evaluator
(`word2vec eval`: WordSim-353 Spearman, case-insensitive, OOV share reported).
"""
import argparse
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, "build", "bin", "word2vec")
PARAMS = dict(size=128, window=5, negative=5, sample=1e-3, iter=5, min_count=4)


def atomic_write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def ours(corpus, threads, out):
    cmd = [BIN, "train", "--input", corpus, "--output", out, "--cbow", "0", "--binary", "1", "--threads", str(threads),
           "--seed", "1", "--size", str(PARAMS["size"]), "--window", str(PARAMS["window"]), "--negative",
           str(PARAMS["negative"]), "--sample", str(PARAMS["sample"]), "--iter", str(PARAMS["iter"]),
           "--min-count", str(PARAMS["min_count"])]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"trained (\d+) words x (\d+) epochs, vocabulary (\d+), in ([0-9.]+) s", res.stderr)
    words, epochs, vocab, seconds = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))
    from gensim.models import KeyedVectors  # our files must load in gensim
    assert len(KeyedVectors.load_word2vec_format(out, binary=True)) == vocab
    return {"seconds": seconds, "words_per_s": words * epochs / seconds, "vocab": vocab}


def theirs(sentences, threads, out):
    from gensim.models import Word2Vec
    model = Word2Vec(vector_size=PARAMS["size"], window=PARAMS["window"], negative=PARAMS["negative"], hs=0,
                     sample=PARAMS["sample"], min_count=PARAMS["min_count"], sg=1, workers=threads, seed=1)
    model.build_vocab(sentences)
    start = time.perf_counter()
    model.train(sentences, total_examples=len(sentences), epochs=PARAMS["iter"])
    seconds = time.perf_counter() - start
    model.wv.save_word2vec_format(out, binary=True)
    words = sum(1 for s in sentences for w in s if w in model.wv.key_to_index)
    return {"seconds": seconds, "words_per_s": words * PARAMS["iter"] / seconds, "vocab": len(model.wv)}


def similarity(vectors):
    """WordSim-353 and SimLex-999 Spearman of a vector file, by this project's evaluator."""
    res = subprocess.run([BIN, "eval", "--vectors", vectors], capture_output=True, text=True, check=True)
    out = {}
    for key, name in (("wordsim353", "WordSim-353"), ("simlex999", "SimLex-999")):
        m = re.search(name + r"\s+Spearman ([-0-9.]+)\s+pairs (\d+)/(\d+) \(([0-9.]+)% out", res.stdout)
        out[key] = {"spearman": float(m.group(1)), "oov_percent": float(m.group(4))}
    return out


def cpu_name():
    """The CPU's model name and its widest vector instructions, as /proc/cpuinfo gives them."""
    name, flags = "unknown", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name == "unknown":
                name = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    simd = "avx512f" if "avx512f" in flags else "avx2" if "avx2" in flags else "sse"
    return f"{name} ({simd})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    import gensim
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="w2v_bench_")
    corpus = os.path.join(tmp, "brown_train.txt")
    subprocess.run([BIN, "export", "--corpus", "brown", "--split", "train", "--output", corpus], check=True)
    sentences = [line.split() for line in open(corpus) if line.strip()]
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        runs = {"tapegrad": [], "gensim": []}
        for rep in range(args.repeats):  # alternate, so both sides see the same machine state
            runs["tapegrad"].append(ours(corpus, threads, os.path.join(tmp, f"ours_{threads}.bin")))
            runs["gensim"].append(theirs(sentences, threads, os.path.join(tmp, f"gensim_{threads}.bin")))
            print(f"threads {threads} repeat {rep + 1}: tapegrad {runs['tapegrad'][-1]['seconds']:.2f} s, "
                  f"gensim {runs['gensim'][-1]['seconds']:.2f} s", file=sys.stderr)
        row = {"threads": threads}
        for side in runs:
            row[side] = {"seconds_median": statistics.median(r["seconds"] for r in runs[side]),
                         "words_per_s_median": statistics.median(r["words_per_s"] for r in runs[side]),
                         "runs": runs[side], "vocab": runs[side][0]["vocab"],
                         **similarity(os.path.join(tmp, f"{'ours' if side == 'tapegrad' else 'gensim'}_{threads}.bin"))}
        row["speed_ratio"] = row["tapegrad"]["words_per_s_median"] / row["gensim"]["words_per_s_median"]
        rows.append(row)
    result = {"benchmark": "word2vec_vs_gensim", "params": PARAMS, "gensim_version": gensim.__version__, "cpu": cpu_name(),
              "repeats": args.repeats, "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "auto"), "rows": rows}
    atomic_write(os.path.join(args.out, "word2vec.json"), json.dumps(result, indent=2) + "\n")
    lines = [f"CPU: {result['cpu']}.", "",
             "| threads | tapegrad words/s | gensim words/s | ratio | WordSim-353 tapegrad / gensim | "
             "SimLex-999 tapegrad / gensim |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        t, g = r["tapegrad"], r["gensim"]
        lines.append(f"| {r['threads']} | {t['words_per_s_median']:,.0f} | {g['words_per_s_median']:,.0f} | "
                     f"{r['speed_ratio']:.2f}x | {t['wordsim353']['spearman']:.3f} / {g['wordsim353']['spearman']:.3f} | "
                     f"{t['simlex999']['spearman']:.3f} / {g['simlex999']['spearman']:.3f} |")
    oov = rows[0]["tapegrad"]
    lines += ["", f"Out of vocabulary: WordSim-353 {oov['wordsim353']['oov_percent']:.0f}%, "
              f"SimLex-999 {oov['simlex999']['oov_percent']:.0f}% of the pairs (the same for both)."]
    table = "\n".join(lines) + "\n"
    atomic_write(os.path.join(args.out, "word2vec.md"), table)
    print(table)


if __name__ == "__main__":
    main()
