#!/usr/bin/python3
"""Merges exp_embeddings summaries of the same configuration run in parts (different seeds)
into the first one, re-aggregating each (model, mode) row: mean and sample standard
deviation over all seeds, as exp_embeddings does.

    scripts/merge_seed_runs.py results/target/embeddings results/target/embeddings_seeds_2_3
"""
import json, os, statistics, sys
if len(sys.argv) < 3:
    raise SystemExit(__doc__)
parts = [json.load(open(os.path.join(d, "summary.json"))) for d in sys.argv[1:]]
a = parts[0]
# A run appears once even if a part was merged before (the script can be run again).
runs = list({(r["model"], r["mode"], r["seed"]): r for p in parts for r in p["runs"]}.values())
metrics = ["valid_ppl", "test_ppl", "train_ppl", "trainable_params", "wall_s", "train_tokens_per_s"]
rows, order = {}, []
for r in runs:
    key = (r["model"], r["mode"])
    if key not in rows:
        order.append(key)
        rows[key] = []
    rows[key].append(r)
out_rows = []
for key in order:
    group = rows[key]
    row = {"model": key[0], "mode": key[1], "runs": len(group)}
    for m in metrics:
        v = [float(g[m]) for g in group]
        row[m] = {"mean": statistics.fmean(v), "std": statistics.stdev(v) if len(v) > 1 else 0.0,
                  "min": min(v), "max": max(v), "n": len(v)}
    out_rows.append(row)
merged = dict(a)
merged["runs"], merged["rows"], merged["seeds"] = runs, out_rows, len({r["seed"] for r in runs})
merged["word2vec_parts"] = [p.get("word2vec") for p in parts]
tmp = os.path.join(sys.argv[1], "summary.json.tmp")
with open(tmp, "w") as f:
    json.dump(merged, f, indent=2)
os.replace(tmp, os.path.join(sys.argv[1], "summary.json"))
for row in out_rows:
    print(row["model"], row["mode"], row["runs"], "test %.1f +- %.1f" % (row["test_ppl"]["mean"], row["test_ppl"]["std"]),
          "valid %.1f +- %.1f" % (row["valid_ppl"]["mean"], row["valid_ppl"]["std"]))
