"""Benchmark: a night with model checks on, against the local Anthropic-compatible server with a fixed
latency per call (default 2 s), run in its own process as the real API is. Prints wall time vs the critical path
(analyzer + verifier + brief = 3 calls) on an instance in use (a night ran before) and on a new one, tokens
per candidate per role (chars/3.5 of the recorded requests; answers as billed) and the night's $.

    .venv/bin/python bench/model_night.py [--latency 2] [--as-of 2015-08-30] [--night-before 2015-07-31]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
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
from tests.fake_anthropic import estimate_tokens

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def fake_api(latency: float, record: Path) -> Iterator[str]:
    """The local Anthropic-compatible server in its own process (as the real API is); yields its base URL.
    On exit it writes every request it received to `record` (JSON lines)."""
    server = subprocess.Popen([sys.executable, "-m", "tests.fake_anthropic", "--latency", str(latency),
                               "--record", str(record)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert server.stdout is not None and server.stdin is not None
    try:
        yield server.stdout.readline().strip()
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def requests_of(record: Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2015, 8, 30))
    parser.add_argument("--night-before", type=date.fromisoformat, default=date(2015, 7, 31),
                        help="run first on the same instance, so the measured night finds it in use")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "requests.jsonl"
        with fake_api(args.latency, record) as url:
            store = ResultStore(path=str(Path(tmp) / "r.duckdb"))
            defs = build_definitions(store_path=store.path,
                                     model=AnthropicModel(api_key="bench", base_url=url, store=store))
            nights.prepare_in_process_runs()  # as `opportunity` does
            instance = nights.local_instance(Path(tmp) / "dagster_home")  # the CLI's instance: SQLite
            start = time.perf_counter()
            nights.run_night(defs, instance, args.night_before)
            first = time.perf_counter() - start
            before = store.query("SELECT count(*) AS n FROM model_calls")[0]["n"]
            start = time.perf_counter()
            nights.run_night(defs, instance, args.as_of)
            wall = time.perf_counter() - start
            run = nights.state(defs, args.as_of)
            sent = store.query("SELECT count(*) AS n FROM model_calls")[0]["n"] - before
            replay_start = time.perf_counter()
            nights.run_night(defs, instance, args.as_of)
            replay = time.perf_counter() - replay_start
            replayed_sent = store.query("SELECT count(*) AS n FROM model_calls")[0]["n"] - before - sent
            assert replayed_sent == 0, "the replayed night made model calls"

            fresh = ResultStore(path=str(Path(tmp) / "memory.duckdb"))  # nothing to replay: every call is made again
            memory_defs = build_definitions(store_path=fresh.path,
                                            model=AnthropicModel(api_key="bench", base_url=url, store=fresh))
            memory_start = time.perf_counter()
            nights.run_night(memory_defs, dg.DagsterInstance.ephemeral(), args.as_of)
            in_memory = time.perf_counter() - memory_start
        measured = requests_of(record)[before:before + sent]  # one request a call: no faults injected here

        critical = 3 * args.latency
        n = len(run.analyses)
        print(f"night {args.as_of}: {n} candidates, {sent} model calls, latency {args.latency:.1f} s a call "
              "(the API in its own process)")
        print(f"  wall time, SQLite instance in use: {wall:6.2f} s   ratio {wall / critical:.2f}x the critical path "
              f"of 3 calls, {critical:.0f} s (goal <= 1.5x; sequential: {sent * args.latency:.0f} s, "
              f"{sent * args.latency / critical:.0f}x)")
        print(f"  first night on a new SQLite instance ({args.night_before}): {first:6.2f} s   "
              f"ratio {first / critical:.2f}x")
        print(f"  in-memory Dagster instance:        {in_memory:6.2f} s   ratio {in_memory / critical:.2f}x")
        print(f"  replayed re-run (SQLite):          {replay:6.2f} s, no new request")

        by_role: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for request in measured:
            title = request["body"]["output_config"]["format"]["schema"]["title"]
            system = "".join(b["text"] for b in request["body"]["system"])
            by_role[title].append((estimate_tokens(system + json.dumps(request["body"]["messages"])), 0))
        answers = store.query("SELECT role, response, input_tokens, cache_read_tokens, cache_write_tokens, "
                              "output_tokens, usd FROM model_calls WHERE as_of = ?", [args.as_of])
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
