"""Stall samples and executed instructions of a Nsight Compute source page, summed by opcode (no GPU needed).

    python benchmarks/summarize_sass_stalls.py DIR/sass-LABEL.csv [...] > DIR/summary.txt

Reads the ``--page source --csv --print-source sass`` export that benchmarks/gpu_session_sass_stalls.sh and
gpu_session_sptc_stalls_now.sh write, and prints per file: the stall reasons' shares of all samples, the instructions
executed per HMMA by opcode, and each opcode's share of the samples with its main stall reason.
"""
from __future__ import annotations

import collections
import csv
import re
import sys


def summarize(path: str) -> str:
    rows = list(csv.reader(open(path, newline="")))
    hdr = rows[1]
    data = [r for r in rows[2:] if len(r) == len(hdr)]
    ix = {h: i for i, h in enumerate(hdr)}
    reasons = [h for h in hdr if h.startswith("stall_") and "(Not Issued)" not in h]
    total, by_op, executed = collections.Counter(), collections.defaultdict(collections.Counter), collections.Counter()
    for r in data:
        op = re.sub(r"^@!?U?P\w+\s+", "", r[ix["Source"]].strip()).split(" ")[0].split(".")[0]
        executed[op] += int(r[ix["Instructions Executed"]] or 0)
        for h in reasons:
            v = int(r[ix[h]] or 0)
            total[h] += v
            by_op[op][h] += v
    samples = sum(total.values())
    mma = executed["HMMA"] or 1
    ops = sorted(by_op.items(), key=lambda kv: -sum(kv[1].values()))[:10]
    return "\n".join([
        f"{path.split('/')[-1]} samples {samples} instructions executed {sum(executed.values())}",
        " reasons: " + ", ".join(f"{k[6:]} {100 * v / samples:.1f}%" for k, v in total.most_common(8)),
        " executed per HMMA: " + ", ".join(f"{k} {v / mma:.2f}" for k, v in executed.most_common(14)),
        " samples by op: " + ", ".join(f"{k} {100 * sum(c.values()) / samples:.1f}% ({max(c, key=c.get)[6:]})"
                                       for k, c in ops)])


if __name__ == "__main__":
    print("\n".join(summarize(p) for p in sys.argv[1:]))
