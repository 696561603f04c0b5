"""LLM-as-a-judge over any OpenAI-compatible endpoint (DESIGN.md §6 `memscope judge`).

One job per module: `prompt` (the rubric and user templates), `parse` (reading a judge's reply),
`client` (the endpoint: key, URL, one request, the retry loop), `cache` (SQLite, one row per
judgment), `runner` (which rows to judge, the concurrent loop), `write` (the output run folders).
The command itself is scorer.commands.judge.
"""
