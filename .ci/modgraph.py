"""The module graph of scorer/ and tui/, as figures (issue 13): import cycles, imports inside
function bodies, imports that run up the layers, and the largest modules.

    python .ci/modgraph.py [--json]

Cycles are the strongly connected components of the import graph of each package (every import
counted, function bodies included: an import moved into a body to dodge a cycle is still one).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def body_imports(pkg: str) -> list[str]:
    """`file:line module` for every import of a project module inside a function body."""
    out = []
    for path in sorted((ROOT / pkg).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("scorer", "tui"):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.module}")
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name.split(".")[0] in ("scorer", "tui"):
                            out.append(f"{path.relative_to(ROOT)}:{node.lineno} {a.name}")
    return out


def cycles(graph: grimp.ImportGraph, pkg: str) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    nodes = sorted(m for m in graph.modules if m == pkg or m.startswith(pkg + "."))
    succ = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in set(nodes)) for m in nodes}
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    return comps


def largest(pkg: str, n: int = 10) -> list[tuple[str, int]]:
    sizes = [(str(p.relative_to(ROOT)), len(p.read_text(encoding="utf-8").splitlines()))
             for p in (ROOT / pkg).rglob("*.py")]
    return sorted(sizes, key=lambda t: -t[1])[:n]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    out = {}
    for pkg in ("scorer", "tui"):
        graph = grimp.build_graph(pkg)
        out[pkg] = {"modules": len([m for m in graph.modules if m.startswith(pkg)]),
                    "cycles": cycles(graph, pkg), "imports_in_function_bodies": body_imports(pkg),
                    "largest": largest(pkg), "over_400_lines": [p for p, k in largest(pkg, 999) if k > 400]}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for pkg, d in out.items():
        print(f"== {pkg}: {d['modules']} modules")
        print(f"cycles ({len(d['cycles'])}):")
        for c in d["cycles"]:
            print("  " + " ↔ ".join(c))
        print(f"imports of project modules inside function bodies: {len(d['imports_in_function_bodies'])}")
        for line in d["imports_in_function_bodies"]:
            print("  " + line)
        print("over 400 lines: " + (", ".join(d["over_400_lines"]) or "none"))
        print("largest: " + ", ".join(f"{p} {k}" for p, k in d["largest"][:6]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
