"""The paper's Table 4 beside a `maze_group_sweep` summary: `python experiments/table4.py
SUMMARY_CSV [SET]` prints a markdown table of exact pass@1, 256, 2048 (percent; mean ± standard
error over seeds, seeds in brackets), the paired difference of each gamma against GRPO with its
95% interval (from `mazerl-summarize`'s `paired_focal.gamma/...` columns) and, on the `id` set,
the paper's values (shared/reference: F-GRPO Table 4, 20K steps)."""

import csv
import sys

GAMMAS = ("0", "0.5", "1.0")
# N: (pass@1 GRPO, gamma 0.5, gamma 1.0), (pass@256 GRPO, gamma 0.5, gamma 1.0)
PAPER = {
    4: ((65.6, 74.4, 79.7), (67.3, 75.9, 81.5)),
    8: ((72.2, 83.4, 76.3), (73.4, 84.0, 76.6)),
    16: ((73.9, 83.7, 84.4), (74.2, 84.3, 86.5)),
    32: ((74.5, 85.1, 84.9), (75.1, 85.8, 85.8)),
    64: ((73.4, 85.4, 84.8), (74.7, 86.5, 85.8)),
    128: ((75.8, 93.6, 91.2), (76.9, 96.5, 95.7)),
}


def percent(x: str) -> str:
    return f"{100 * float(x):.1f}" if x else "n/a"  # a standard error needs two seeds


def main(path: str, eval_set: str = "id") -> None:
    with open(path) as f:
        rows = {r["group"]: r for r in csv.DictReader(f)}
    head = "| N | metric | GRPO | F-GRPO 0.5 | F-GRPO 1.0 | 0.5 - GRPO | 1.0 - GRPO |"
    print(head + (" paper GRPO | paper 0.5 | paper 1.0 |" if eval_set == "id" else ""))
    print("|---" * (head.count("|") - 1 + 3 * (eval_set == "id")) + "|")
    for n, paper in PAPER.items():
        groups = [rows.get(f"focal.gamma={g}, train.group_size={n}") for g in GAMMAS]
        if groups[0] is None:
            continue
        for k, paper_k in (("1", paper[0]), ("256", paper[1]), ("2048", None)):
            m = f"eval/{eval_set}/exact_pass@{k}"
            cells = [
                f"{percent(r[m])} ± {percent(r[m + '_se'])} ({r['n_seeds']})" if r else "-"
                for r in groups
            ]
            for r in groups[1:]:
                d = f"paired_focal.gamma/{m}"
                if r and r.get(d + "_lo"):
                    lo, hi = 100 * float(r[d + "_lo"]), 100 * float(r[d + "_hi"])
                    cells.append(f"{100 * float(r[d]):+.1f} [{lo:+.1f}, {hi:+.1f}]")
                else:  # one seed (or none): no interval
                    cells.append(f"{100 * float(r[d]):+.1f} (n/a)" if r and r.get(d) else "n/a")
            if eval_set == "id":
                cells += [str(p) for p in paper_k] if paper_k else ["", "", ""]
            print(f"| {n} | pass@{k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:])
