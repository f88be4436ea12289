#!/usr/bin/python3
"""GPT-2 encoding speed, this tokenizer vs OpenAI's tiktoken (npm package, Rust compiled to
WebAssembly, run by node), one thread each, same text, same run, alternating.

    /usr/bin/python3 benchmarks/tokenizer_vs_tiktoken.py [--repeats 5] [--out benchmarks/results]

Text: the whole Brown corpus as words joined by spaces (6.1 MB) and its training split (4.3 MB).
Each side's figure is the median over `repeats` encodings inside one process (loading the
vocabulary excluded on both sides); the ids of both sides must be identical. Then how the time
grows with the length of one word (random letters, 64 KB to 2 MB; tiktoken's merge loop is
quadratic in a piece's length, so it is timed up to 64 KB only).
Needs scripts/fetch_tiktoken.sh (installs tiktoken into data/cache/npm) and node.
"""
import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOKENIZE = os.path.join(ROOT, "build", "bin", "tokenize")
WORD2VEC = os.path.join(ROOT, "build", "bin", "word2vec")
REFERENCE = os.path.join(ROOT, "tests", "text", "tiktoken_encode.js")
MODULES = os.path.join(os.environ.get("TAPEGRAD_DATA", os.path.join(ROOT, "data", "cache")), "npm", "node_modules")


def atomic_write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def ours(path, repeats, ids_out=None):
    res = subprocess.run([TOKENIZE, "stats", "--input", path, "--repeats", str(repeats)], capture_output=True,
                         text=True, check=True)
    seconds = float(re.search(r"encoded in ([0-9.]+) s", res.stdout).group(1))
    tokens = int(re.search(r"tokens (\d+)", res.stdout.split("\n")[1]).group(1))
    if ids_out:
        subprocess.run([TOKENIZE, "encode", "--input", path, "--output", ids_out], check=True)
    return seconds, tokens


def theirs(path, repeats, ids_out):
    res = subprocess.run(["node", REFERENCE, MODULES, path, ids_out, str(repeats)], capture_output=True, text=True,
                         check=True)
    return float(re.search(r"seconds ([0-9.eE+-]+)", res.stdout).group(1))


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per text")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if not os.path.exists(os.path.join(MODULES, "tiktoken")):
        sys.exit("tokenizer_vs_tiktoken.py: tiktoken is not installed (scripts/fetch_tiktoken.sh)")
    work = tempfile.mkdtemp(prefix="tapegrad_bpe_bench_")
    texts = {}
    for split in ("all", "train"):
        words = os.path.join(work, split + ".words")
        subprocess.run([WORD2VEC, "export", "--split", split, "--output", words], check=True, capture_output=True)
        with open(words) as f:
            text = " ".join(f.read().split())
        texts[split] = os.path.join(work, split + ".txt")
        with open(texts[split], "w") as f:
            f.write(text)
    rows = []
    for split, path in texts.items():
        size = os.path.getsize(path)
        mine, ref = [], []
        for _ in range(args.rounds):  # alternating, so that a slow moment hits both sides
            s, tokens = ours(path, args.repeats)
            mine.append(s)
            ref.append(theirs(path, args.repeats, os.path.join(work, "ref.ids")))
        ours(path, 1, os.path.join(work, "ours.ids"))
        identical = open(os.path.join(work, "ref.ids")).read().split() == open(os.path.join(work, "ours.ids")).read().split()
        row = {"text": "Brown " + split, "bytes": size, "tokens": tokens, "ours_s": statistics.median(mine),
               "tiktoken_s": statistics.median(ref), "identical": identical}
        row["ours_mb_s"] = size / row["ours_s"] / 1e6
        row["tiktoken_mb_s"] = size / row["tiktoken_s"] / 1e6
        row["speedup"] = row["tiktoken_s"] / row["ours_s"]
        rows.append(row)
        print(f"{row['text']:12s} {size / 1e6:5.2f} MB {tokens:9d} tokens  ours {row['ours_mb_s']:6.2f} MB/s  "
              f"tiktoken {row['tiktoken_mb_s']:5.2f} MB/s  {row['speedup']:.2f}x  identical ids: {identical}")
    random.seed(1)
    long_words = []
    for kb in (64, 256, 1024, 2048):
        path = os.path.join(work, f"word{kb}.txt")
        with open(path, "w") as f:
            f.write("".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(kb * 1024)))
        s, tokens = ours(path, 3)
        row = {"kb": kb, "ours_s": s, "tokens": tokens}
        if kb <= 64:
            row["tiktoken_s"] = theirs(path, 1, os.path.join(work, "ref.ids"))
        long_words.append(row)
        ref = f"  tiktoken {row['tiktoken_s']:.3f} s" if "tiktoken_s" in row else ""
        print(f"one word of {kb:5d} KB: ours {s:.3f} s ({s / kb * 1024:.3f} s/MB){ref}")
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    result = {"cpu": cpu_name(), "threads": 1, "repeats": args.repeats, "rounds": args.rounds, "node": node,
              "tiktoken": json.load(open(os.path.join(MODULES, "tiktoken", "package.json")))["version"],
              "texts": rows, "long_words": long_words}
    os.makedirs(args.out, exist_ok=True)
    atomic_write(os.path.join(args.out, "tokenizer.json"), json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
