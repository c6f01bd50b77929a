"""Benchmark: a night with model checks on, against the local Anthropic-compatible server with a fixed
latency per call (default 2 s). Prints wall time vs the critical path (analyzer + verifier + brief = 3
calls), tokens per candidate per role (chars/3.5 of the recorded requests and answers) and the night's $.

    .venv/bin/python bench/model_night.py [--latency 2] [--as-of 2015-08-30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from datetime import date
from pathlib import Path

import dagster as dg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opportunity_assets import night as nights
from opportunity_assets.cost import load_prices, worst_case
from opportunity_assets.definitions import build_definitions
from resources.criteria import DEFAULT_PACK
from resources.model import AnthropicModel
from resources.store import ResultStore
from tests.fake_anthropic import FakeAnthropic, estimate_tokens

warnings.filterwarnings("ignore")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2015, 8, 30))
    args = parser.parse_args()
    nights.apply_dagster_run_settings()  # as `opportunity run` does
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(latency=args.latency) as server:
        store = ResultStore(path=str(Path(tmp) / "r.duckdb"))
        model = AnthropicModel(api_key="bench", base_url=server.url, store=store)
        defs = build_definitions(store_path=store.path, model=model)
        instance = dg.DagsterInstance.from_config(tmp)
        start = time.perf_counter()
        nights.run_night(defs, instance, args.as_of)
        wall = time.perf_counter() - start
        run = nights.state(defs, args.as_of)
        replay_start = time.perf_counter()
        sent = len(server.requests)
        nights.run_night(defs, instance, args.as_of)
        replay = time.perf_counter() - replay_start
        assert len(server.requests) == sent, "the replayed night sent requests"

        fresh = ResultStore(path=str(Path(tmp) / "memory.duckdb"))  # nothing to replay: every call is made again
        memory_defs = build_definitions(store_path=fresh.path,
                                        model=AnthropicModel(api_key="bench", base_url=server.url, store=fresh))
        memory_start = time.perf_counter()
        nights.run_night(memory_defs, dg.DagsterInstance.ephemeral(), args.as_of)
        in_memory = time.perf_counter() - memory_start

        critical = 3 * args.latency
        n = len(run.analyses)
        print(f"night {args.as_of}: {n} candidates, {sent} model calls, latency {args.latency:.1f} s a call")
        print(f"  wall time:                    {wall:6.2f} s")
        print(f"  critical path (3 calls):      {critical:6.2f} s   ratio {wall / critical:.2f}x (goal <= 1.5x; "
              f"sequential would be {sent * args.latency:.0f} s, {sent * args.latency / critical:.0f}x)")
        print(f"  same night, in-memory Dagster instance: {in_memory:6.2f} s   ratio {in_memory / critical:.2f}x")
        print(f"  replayed re-run (SQLite):     {replay:6.2f} s, no new request")

        by_role: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for request in server.requests[:sent]:
            title = request.body["output_config"]["format"]["schema"]["title"]
            system = "".join(b["text"] for b in request.body["system"])
            by_role[title].append((estimate_tokens(system + json.dumps(request.body["messages"])), 0))
        answers = store.query("SELECT role, response, input_tokens, cache_read_tokens, cache_write_tokens, "
                              "output_tokens, usd FROM model_calls")
        print("  tokens per call (chars/3.5 of requests; answers as billed by the server):")
        for role, title in (("analyzer", "AnalyzerJudgment"), ("verifier", "VerifierJudgment"),
                            ("brief", "BriefWording")):
            ins = [i for i, _ in by_role[title]]
            outs = [a["output_tokens"] for a in answers if a["role"] == role]
            print(f"    {role:<9} input median {statistics.median(ins):6.0f}  max {max(ins):6.0f}   "
                  f"output median {statistics.median(outs):5.0f}  max {max(outs):5.0f}   (goal <= 2,500 in / 600 out)")
        typical = sum(a["usd"] for a in answers)
        print(f"  typical night, as billed (prompt caching on): ${typical:.4f}  (goal <= $0.25)")
        pack = nights.resources_of(defs)[0]
        estimate = worst_case(pack, load_prices(), n, model_checks_on=True)
        print(f"  worst case for {n} candidates (max tokens, one retry): ${estimate.worst_case_usd:.4f}; "
              f"with the Batch API (-50%): ${estimate.worst_case_usd / 2:.4f}")
        print(f"  pack: {DEFAULT_PACK.name}, ceiling ${pack.caps.cost_ceiling_usd:.2f}")


if __name__ == "__main__":
    main()
