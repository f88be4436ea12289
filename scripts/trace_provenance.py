#!/usr/bin/python3
"""Makes the committed result files traceable without retraining them.

Run files written before the programs recorded their build's commit carry no "commit"; each
such JSON file gains "added_in_commit": the commit that first added it to the repository
(renames followed). The binary that trained it was built from that commit or an earlier one,
possibly with uncommitted changes: a bound, not the build itself, and named so that it is
never mistaken for "commit". Absolute paths of the machine that wrote a file
(".../results/converged/gpt/word2vec_d128.bin") become the repository-relative paths newer
files record ("results/converged/gpt/word2vec_d128.bin").

    scripts/trace_provenance.py [FOLDER]      (default: results; run from anywhere)

Files are edited in place as text (the numbers keep the digits the programs wrote), checked to
parse to the intended JSON, and replaced atomically; a second run changes nothing.
"""
import json, os, re, subprocess, sys

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
folder = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "results"))
if len(sys.argv) > 2 or not os.path.isdir(folder):
    raise SystemExit(__doc__)


def git(*args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def first_commit(path):
    """The commit that first added path (following renames), or None if it is not committed."""
    rel = os.path.relpath(path, repo)
    log = git("log", "--follow", "--diff-filter=A", "--format=%H", "--", rel).split()
    return log[-1][:12] if log else None


# A JSON string holding an absolute path into a results folder: its part from "results/" on.
absolute = re.compile(r'"/(?:[^"/]+/)*?(results/[^"]*)"')


def relative_paths(value):
    """The intended edit of a parsed file, to check the textual one against."""
    if isinstance(value, dict):
        return {k: relative_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_paths(v) for v in value]
    if isinstance(value, str) and value.startswith("/") and "/results/" in value:
        return value[value.index("/results/") + 1:]
    return value


changed = untraced = 0
for root, _, names in sorted(os.walk(folder)):
    for name in sorted(names):
        if not name.endswith(".json"):
            continue
        path = os.path.join(root, name)
        with open(path) as f:
            text = f.read()
        data = json.loads(text)
        if not isinstance(data, dict):
            continue
        intended = relative_paths(data)
        out = absolute.sub(r'"\1"', text)
        if "commit" not in data and "added_in_commit" not in data:
            commit = first_commit(path)
            if commit is None:
                untraced += 1
                print(f"not committed yet, left without a commit: {os.path.relpath(path, repo)}")
            elif not out.startswith("{\n"):
                raise SystemExit(f"{path}: not a file the programs wrote (no '{{' line first)")
            else:
                out = '{\n  "added_in_commit": "' + commit + '",\n' + out[2:]
                intended["added_in_commit"] = commit
        if out == text:
            continue
        if json.loads(out) != intended:
            raise SystemExit(f"{path}: the edit would change more than the paths and the commit")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(out)
        os.replace(tmp, path)
        changed += 1
print(f"trace_provenance: {changed} files rewritten, {untraced} not yet committed")
