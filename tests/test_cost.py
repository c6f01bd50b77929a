"""The worst-case cost: candidates × calls × max tokens × price × (1 + retries), bounded by the caps."""

from __future__ import annotations

import pytest

from opportunity_assets.cost import load_prices, worst_case


def test_worst_case_is_the_documented_arithmetic(texas_pack) -> None:  # type: ignore[no-untyped-def]
    prices = load_prices()
    estimate = worst_case(texas_pack, prices, 30, model_checks_on=True)
    retries = texas_pack.caps.retries
    expected = 0.0
    for role, calls in (("analyzer", 30), ("verifier", 30), ("brief", 1)):
        spec = getattr(texas_pack.models, role)
        price = prices.models[spec.model]
        expected += calls * (spec.max_input_tokens * price.input + spec.max_output_tokens * price.output) / 1e6 \
            * (1 + retries)
    assert estimate.worst_case_usd == pytest.approx(expected)
    assert estimate.max_calls == (30 + 30 + 1) * (1 + retries)
    # haiku 2500 in / 600 out: (2500*0.10 + 600*0.50)/1e6 = $0.00055 a call; sonnet: $0.011 a call
    brief_call = (4000 * 0.10 + 800 * 0.50) / 1e6
    assert estimate.worst_case_usd == pytest.approx(30 * 2 * 0.00055 + 30 * 2 * 0.011 + 2 * brief_call)


def test_worst_case_is_bounded_by_max_candidates_and_is_zero_without_a_model(texas_pack) -> None:  # type: ignore[no-untyped-def]
    prices = load_prices()
    capped = worst_case(texas_pack, prices, 10_000, model_checks_on=True)
    assert capped.candidates == texas_pack.caps.max_candidates
    assert capped.worst_case_usd == worst_case(texas_pack, prices, 30, model_checks_on=True).worst_case_usd
    off = worst_case(texas_pack, prices, 30, model_checks_on=False)
    assert off.tonight_usd == 0.0 and off.worst_case_usd > 0
    assert worst_case(texas_pack, prices, 0, model_checks_on=True).worst_case_usd == 0.0


def test_candidates_within_the_ceiling(texas_pack) -> None:  # type: ignore[no-untyped-def]
    estimate = worst_case(texas_pack, load_prices(), 30, model_checks_on=True)
    per_candidate = 2 * (0.00055 + 0.011)  # analyzer + verifier, each retried once
    brief = 2 * (4000 * 0.10 + 800 * 0.50) / 1e6
    assert estimate.candidates_within(0.50) == int((0.50 - brief) // per_candidate) == 21
    assert estimate.candidates_within(100.0) == 30
    assert estimate.candidates_within(0.0) == 0
