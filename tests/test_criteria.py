"""Criteria pack validation: the bundled pack loads; a bad pack names the key, the bad value and the expectation."""

from __future__ import annotations

import copy
import math
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from opportunity_assets import criteria
from opportunity_assets.criteria import CriteriaError, CriteriaPack, load_criteria
from tests.conftest import PACK, month_rows, write_csv, write_pack


def _source(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "source.csv", month_rows("Alpha"))


def _load(tmp_path: Path, **changes: Any) -> CriteriaPack:
    return load_criteria(write_pack(tmp_path, _source(tmp_path), **changes))


def _error(tmp_path: Path, **changes: Any) -> str:
    with pytest.raises(CriteriaError) as exc:
        _load(tmp_path, **changes)
    return str(exc.value)


def test_bundled_pack_loads(texas_pack: CriteriaPack) -> None:
    assert texas_pack.domain == "texas_housing"
    assert texas_pack.source.table == "txhousing"
    assert texas_pack.source_path == (PACK.parent / "../txhousing.csv").resolve()
    assert texas_pack.source_path.is_file()
    assert [f.name for f in texas_pack.hard_filters] == ["liquidity", "freshness", "coverage"]
    assert set(texas_pack.required_inputs) <= set(texas_pack.metrics)
    assert math.isclose(sum(c.weight for c in texas_pack.formula.components), 1.0)
    assert texas_pack.thresholds.marginal < texas_pack.thresholds.strong
    assert texas_pack.models.analyzer.model != texas_pack.models.verifier.model
    assert texas_pack.max_window == 14
    assert all(rule.parsed.is_comparison for rule in texas_pack.red_flags)
    assert not any(c.parsed.is_comparison for c in texas_pack.formula.components)
    assert len(texas_pack.fingerprint) == 12
    assert texas_pack.fingerprint == load_criteria(PACK).fingerprint


def test_fingerprint_changes_with_the_criteria(tmp_path: Path) -> None:
    base = _load(tmp_path)
    assert _load(tmp_path, **{"thresholds.strong": 71}).fingerprint != base.fingerprint
    assert _load(tmp_path).fingerprint == base.fingerprint
    # the bundled pack's, as the stores of earlier releases hold it: a key added unset keeps it (`events_from`, in
    # the model's dump as null, had changed every pack's, each stored night read as another criteria's)
    assert load_criteria(PACK).fingerprint == "688cf11a4f60"
    # a rule added since (`integrity.partial_period`) keeps it at its default, and changes it set otherwise
    pack = load_criteria(PACK)
    noted = pack.integrity.model_copy(update={"partial_period": pack.integrity.partial_period.model_copy(
        update={"effect": "note"})})
    assert pack.model_copy(update={"integrity": noted}).fingerprint != "688cf11a4f60"
    # a rule's default changed since (`repeated_events.min_share`, 0.25 -> 0.02) keeps it too; another value not
    fewer = pack.integrity.model_copy(update={"repeated_events": pack.integrity.repeated_events.model_copy(
        update={"min_share": 0.1})})
    assert pack.integrity.repeated_events.min_share == 0.02
    assert pack.model_copy(update={"integrity": fewer}).fingerprint != "688cf11a4f60"


def test_a_source_path_under_the_home_folder_is_read_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 44: `path: ~/houses.csv` was looked for in a folder named `~` beside the pack, and refused."""
    home, packs = tmp_path / "home", tmp_path / "packs"
    home.mkdir()
    packs.mkdir()
    write_csv(home / "source.csv", month_rows("Alpha"))
    monkeypatch.setenv("HOME", str(home))
    pack = load_criteria(write_pack(packs, home / "source.csv", **{"source.path": "~/source.csv"}))
    assert pack.path_of(pack.source) == (home / "source.csv").resolve()


def test_a_source_path_to_a_folder_says_it_is_one(tmp_path: Path) -> None:
    """Trial 44: `path: ./` was "expected an existing file (looked at /data)", as if nothing were there."""
    _source(tmp_path)
    message = _error(tmp_path, **{"source.path": "./"})
    assert f"key `source.path`: got './'; {tmp_path} is a folder: expected a data file's path, such as one of " \
           "['source.csv']" in message


def test_a_source_path_of_a_symlink_loop_names_its_key(tmp_path: Path) -> None:
    """Trial 142: a `source.path` of two symlinks pointing at each other raised Python's "Symlink loop from ..." from
    `Path.resolve`, a raw traceback before the night."""
    _source(tmp_path)
    (tmp_path / "a.csv").symlink_to(tmp_path / "b.csv")
    (tmp_path / "b.csv").symlink_to(tmp_path / "a.csv")
    message = _error(tmp_path, **{"source.path": "a.csv"})
    assert message.endswith(f"key `source.path`: got 'a.csv'; {tmp_path / 'a.csv'} is a symbolic link that leads back "
                            "to itself (a loop of links): expected a link to the data file, or the file"), message


def test_a_misspelt_source_path_offers_the_data_file_it_likely_means(tmp_path: Path) -> None:
    """Trial 101: `path: txhousng.csv` beside `txhousing.csv` was only "expected an existing file (looked at ...)",
    where every other misspelt name of a pack is offered its likely meaning. A name like none of the folder's data
    files is offered none; a file of no data format (the pack itself) never."""
    _source(tmp_path)
    message = _error(tmp_path, **{"source.path": "sorce.csv"})
    assert message.endswith(f"key `source.path`: got 'sorce.csv'; expected an existing file (looked at "
                            f"{tmp_path / 'sorce.csv'}); did you mean 'source.csv'?"), message
    assert "did you mean" not in _error(tmp_path, **{"source.path": "monthly_rents.csv"})
    assert "did you mean" not in _error(tmp_path, **{"source.path": "pack.yml"})


def test_relative_source_path_is_resolved_against_the_pack_file(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _source(tmp_path)
    pack_file = write_pack(tmp_path, Path("source.csv"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    pack = load_criteria(pack_file)
    assert pack.source_path == (tmp_path / "source.csv").resolve()


BAD_PACKS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("thresholds_written_as_fractions", {"thresholds.strong": 0.7, "thresholds.marginal": 0.55},
     ["key `thresholds.strong`", "0.7", "a bar of 70% is 70, not 0.7"]),
    ("threshold_beyond_the_scale", {"thresholds.strong": 170}, ["key `thresholds.strong`", "at most 100"]),
    # trial 11: on a formula scaled 0 to 1, a bar of 70 was told "a bar of 70% is 70, not 0.7", the reverse of its fix
    ("thresholds_written_as_percents_on_a_scale_of_one",
     {"formula.scale": 1, "thresholds.strong": 70, "thresholds.marginal": 55},
     ["key `thresholds.strong`: got 70.0", "at most 1", "a bar of 70% is 0.7, not 70"]),
    ("weights_do_not_sum_to_one", {"formula.components.0.weight": 0.5},
     ["key `formula.components`", "1.15", "sum to 1"]),
    ("unknown_metric_in_hard_filter", {"hard_filters.0.metric": "sales_99m"},
     ["key `hard_filters.0.metric`", "'sales_99m'", "a metric name", "sales_12m"]),
    ("hard_filter_op", {"hard_filters.0.op": "=="}, ["key `hard_filters.0.op`", "'=='", "'>='"]),
    ("hard_filter_value_not_number", {"hard_filters.0.value": "many"}, ["key `hard_filters.0.value`", "'many'"]),
    ("formula_unknown_name", {"formula.components.0.expression": "sales_3m / foo"},
     ["key `formula.components.0.expression`", "'sales_3m / foo'", "a required input", "unknown: ['foo']"]),
    ("formula_uses_metric_that_is_not_required", {"formula.components.0.expression": "median_3m / 1000"},
     ["key `formula.components.0.expression`", "'median_3m / 1000'",
      "['median_3m'] is a metric but not in `required_inputs`: add it there"]),
    ("formula_is_comparison", {"formula.components.0.expression": "sales_3m > 1"},
     ["key `formula.components.0.expression`", "'sales_3m > 1'", "without a comparison"]),
    ("formula_calls_function", {"formula.components.0.expression": "max(sales_3m, 1)"},
     ["key `formula.components.0.expression`", "'max(sales_3m, 1)'", "arithmetic expression"]),
    ("red_flag_not_comparison", {"red_flags.0.when": "sales_peak_3m / sales_3m"},
     ["key `red_flags.0.when`", "'sales_peak_3m / sales_3m'", "a comparison"]),
    # trial 107: "`sales_3m > 10 and ...` is not allowed", the whole `when` quoted, not the word at fault
    ("red_flag_of_two_conditions", {"red_flags.0.when": "sales_3m > 10 and sales_peak_3m > 20"},
     ["key `red_flags.0.when`: got 'sales_3m > 10 and sales_peak_3m > 20'", "`and` is not allowed",
      "each condition goes in a red flag or hard filter of its own"]),
    # trial 107: `value: "40"` was told "a number written plainly (... no thousands separator, unit or % sign)"
    ("hard_filter_value_quoted", {"hard_filters.0.value": "40"},
     ["key `hard_filters.0.value`: got '40'", "the quotes make '40' text, no number; write 40 without them"]),
    # trial 107: `window_months` beside `window_periods` was "unknown key (did you mean `window_periods`?)", a key
    # the README documents as the other's first name
    ("outcome_window_by_both_names", {"outcome.window_months": 1},
     ["key `outcome.window_months`: got 1; expected it or `window_periods` (3), not both"]),
    ("red_flag_unknown_metric", {"red_flags.1.when": "price_drop > 0.1"},
     ["key `red_flags.1.when`", "'price_drop > 0.1'", "unknown: ['price_drop']"]),
    ("marginal_equals_strong", {"thresholds.marginal": 70}, ["key `thresholds.marginal`: got 70", "below strong (70)"]),
    ("marginal_above_strong", {"thresholds.marginal": 80}, ["key `thresholds.marginal`: got 80", "below strong (70)"]),
    ("verifier_is_analyzer", {"models.verifier.model": "claude-haiku-5-5"},
     ["key `models.verifier.model`: got 'claude-haiku-5-5'", "other than the analyzer's"]),
    # trial 34: a red flag written as a filter was five errors in one line (`when`, `message` missing, `metric`,
    # `op`, `value` unknown), a filter written as a red flag four; each is one mistake, said once with its fix
    ("red_flag_written_as_a_filter", {"red_flags.0": {"name": "hot", "metric": "sales_3m", "op": ">", "value": 50}},
     ["key `red_flags.0.when`: got {'metric': 'sales_3m', 'op': '>', 'value': 50}", '`when: "sales_3m > 50"`']),
    ("hard_filter_written_as_a_red_flag", {"hard_filters.0": {"name": "busy", "when": "sales_3m >= 30"}},
     ["key `hard_filters.0.when`: got 'sales_3m >= 30'", "a hard filter's `metric`, `op` and `value`"]),
    ("unknown_top_level_key", {"bogus": 1}, ["key `bogus`", "unknown key"]),
    ("unknown_nested_key", {"caps.max_candidate": 5}, ["key `caps.max_candidate`", "unknown key"]),
    # trial 40: a key's last words, too short beside it for a close match, had no "did you mean"
    ("key_written_by_its_last_words", {"source.lag_days": 15},
     ["key `source.lag_days`: unknown key (did you mean `publication_lag_days`?)"]),
    ("metric_column_misspelt", {"metrics.sales_3m.column": "sale"},
     ["key `metrics.sales_3m.column`: got 'sale'", "did you mean 'sales'?"]),
    ("metric_column_not_in_source", {"metrics.sales_3m.column": "price"},
     ["key `metrics.sales_3m.column`: got 'price'", "'price'", "source.columns", "'sales'"]),
    ("coverage_column_misspelt", {"metrics.coverage_15m.columns.1": "listing"},
     ["key `metrics.coverage_15m.columns.1`: got 'listing'", "did you mean 'listings'?"]),
    ("bad_window", {"metrics.sales_3m.window": [3, 1]},
     ["key `metrics.sales_3m.window`: got [3, 1]", "0 <= from <= to"]),
    ("negative_window", {"metrics.sales_3m.window": [-1, 2]}, ["key `metrics.sales_3m.window`: got [-1, 2]"]),
    ("min_rows_beyond_window", {"metrics.sales_3m.min_rows": 4},
     ["key `metrics.sales_3m.min_rows`: got 4", "the window's length, 3"]),
    ("unknown_aggregation", {"metrics.sales_3m.agg": "median"}, ["key `metrics.sales_3m.agg`", "'median'"]),
    ("band_above_one", {"uncertainty.sales_3m": 1.5}, ["key `uncertainty.sales_3m`: got 1.5", "between 0 and 1"]),
    ("band_zero", {"uncertainty.sales_3m": 0}, ["key `uncertainty.sales_3m`: got 0", "between 0 and 1"]),
    ("band_negative", {"uncertainty.sales_3m": -0.05}, ["key `uncertainty.sales_3m`: got -0.05", "between 0 and 1"]),
    ("band_for_non_input", {"uncertainty.median_3m": 0.05},
     ["key `uncertainty.median_3m`", "'median_3m'", "a required input"]),
    ("next_action_unknown_placeholder", {"next_action": "Call the {mayor} of {name}."},
     ["key `next_action`", "{mayor}", "`mayor` is no metric of the pack"]),
    ("next_action_misspelt_metric", {"next_action": "Price rentals near {median_3} in {name}."},
     ["key `next_action`", "{median_3}", "is no metric of the pack", "did you mean `{median_3m}`?"]),
    # trial 26: `{Name}` was offered no `{name}`
    ("next_action_name_in_another_case", {"next_action": "Call the mayor of {Name}."},
     ["key `next_action`", "{Name}", "did you mean `{name}`?"]),
    ("window_beyond_the_kept_history", {"metrics.sales_3m_prev.window": [1190, 1192]},
     ["key `metrics.sales_3m_prev.window`", "[1190, 1192]", "at most 1175 periods back", "at most 1200 periods"]),
    ("required_input_unknown", {"required_inputs.0": "sales_1m"},
     ["key `required_inputs.0`", "'sales_1m'", "a metric name"]),
    ("omission_requires_unknown", {"omissions.0.requires": ["median_3m", "rent_3m"]},
     ["key `omissions.0.requires`", "'rent_3m'", "a metric name"]),
    # trial 29: a misspelt metric here had no "did you mean", as every other key naming a metric has
    ("omission_requires_misspelt", {"omissions.0.requires": ["median_3m", "sales_3"]},
     ["key `omissions.0.requires`", "'sales_3'", "did you mean `sales_3m`?"]),
    ("band_for_misspelt_input", {"uncertainty": {"sales_3": 0.05}},
     ["key `uncertainty.sales_3`", "did you mean `sales_3m`?"]),
    ("order_by_unknown", {"caps.order_by": "population"}, ["key `caps.order_by`", "'population'", "a metric name"]),
    # trial 27: a misspelt order had no "did you mean"; a lower-is-better component's metric kept the worst first
    ("order_by_misspelt", {"caps.order_by": "sales_12"}, ["key `caps.order_by`: got 'sales_12'",
                                                          "did you mean `sales_12m`?"]),
    ("order_by_lower_is_better_descending", {"caps.order_by": "inventory_3m"},
     ["key `caps.descending`: got True; expected `descending: false` (the lowest first): `caps.order_by` "
      "'inventory_3m' is formula component `months_of_inventory`, lower_is_better"]),
    ("min_above_max", {"caps.min_candidates": 40},
     ["key `caps.min_candidates`: got 40", "at most max_candidates (30)"]),
    ("max_candidates_zero", {"caps.max_candidates": 0}, ["key `caps.max_candidates`", "0"]),
    ("bad_metric_name", {"metrics.Sales": {"agg": "sum", "column": "sales", "window": [0, 2]}},
     ["key `metrics.Sales`: got 'Sales'", "a metric name matching"]),
    ("publication_lag_negative", {"source.publication_lag_days": -1}, ["key `source.publication_lag_days`", "-1"]),
    # trial 5: pydantic's own words ("expected a valid integer, unable to parse string as an integer")
    ("publication_lag_in_words", {"source.publication_lag_days": "1 month"},
     ["key `source.publication_lag_days`: got '1 month'; expected a whole number"]),
    ("publication_lag_fraction", {"source.publication_lag_days": 1.5},
     ["key `source.publication_lag_days`: got 1.5; expected a whole number"]),
    ("scale_in_words", {"formula.scale": "hundred"}, ["key `formula.scale`: got 'hundred'; expected a number"]),
    ("range_reversed", {"formula.components.0.range": [0.3, -0.25]},
     ["key `formula.components.0.range`: got [0.3, -0.25]; expected [low, high] with low < high"]),
    ("missing_source_file", {"source.path": "nope.csv"}, ["key `source.path`", "'nope.csv'", "an existing file"]),
    ("coverage_filter_in_percent", {"hard_filters.2.value": 90},
     ["key `hard_filters.2.value`", "got 90.0", "coverage_15m is a coverage", "a share from 0 to 1",
      "`>= 90` never holds (90% is 0.9)"]),
]


@pytest.mark.parametrize(("changes", "fragments"), [(c, f) for _, c, f in BAD_PACKS],
                         ids=[name for name, _, _ in BAD_PACKS])
def test_bad_pack_names_key_value_and_expectation(tmp_path: Path, changes: dict[str, Any],
                                                  fragments: list[str]) -> None:
    message = _error(tmp_path, **changes)
    assert message.startswith(f"criteria file {tmp_path / 'pack.yaml'}: ")
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert "expected" in message


@pytest.mark.parametrize("template", [
    "Call about {} in {name}.",
    "Price rentals near {median_3m:.0f} in {name}.",
    "Price rentals near {median_3m.real} in {name}.",
    "Price rentals near {median_3m[0]} in {name}.",
])
def test_next_action_that_cannot_be_filled_is_refused_on_load(tmp_path: Path, template: str) -> None:
    """Metric placeholders are filled with already formatted text (`$150,000`): a positional field, a format
    spec or attribute access crashes the brief at the end of the night (IndexError, ValueError,
    AttributeError), index access prints one character; the pack must not load."""
    message = _error(tmp_path, next_action=template)
    assert "key `next_action`" in message


@pytest.mark.parametrize("template", ["{name}}: call.", "Call {name.", "Call {name} {"])
def test_a_next_action_of_unbalanced_braces_is_told_in_the_packs_words(tmp_path: Path, template: str) -> None:
    """Trial 33: `{name}}` was told "(Single '}' encountered in format string)", Python's own text."""
    message = _error(tmp_path, next_action=template)
    assert message.endswith(f"key `next_action`: got {template!r}; expected a template with balanced braces: each "
                            "`{` closed by a `}` around `name` or a metric's name, `{name}`, and a brace meant as text "
                            "written twice, `{{`"), message


@pytest.mark.parametrize("template", ["", "   "])
def test_an_empty_next_action_is_refused_on_load(tmp_path: Path, template: str) -> None:
    """Trial 101: `next_action: ''` loaded, check said ok, and the brief's act-on line ended "Next: " with nothing
    after it."""
    message = _error(tmp_path, next_action=template)
    assert message.endswith(f"key `next_action`: got {template!r}; expected the next step for an act-on candidate, "
                            "written as a template of `{name}` and the metrics' names (`Call the agent in {name} this "
                            "week.`)"), message


def test_a_red_flag_of_no_message_is_refused_on_load(tmp_path: Path) -> None:
    """Trial 101: a red flag `message: ''` loaded, and the rejected candidate's archive reason read "Data rejected:
    red flag rich: ; red flags: rich"."""
    flag = {"name": "rich", "when": "sales_3m > 10", "message": " ", "effect": "reject"}
    message = _error(tmp_path, red_flags=[flag])
    assert message.endswith("key `red_flags.0.message`: got ' '; expected the text the analysis and a rejected "
                            "candidate's archive reason quote when the flag holds (`Incomes this high are top-coded "
                            "in the survey`)"), message


def test_a_red_flag_message_with_a_placeholder_is_refused_on_load(tmp_path: Path) -> None:
    """Trial 141: `message: "only {land} ha"`, written as `next_action` is, loaded, and a rejected candidate's archive
    reason read "red flag tiny_plot: only {land} ha": a red flag's message is quoted as written, never filled in."""
    flag = {"name": "rich", "when": "sales_3m > 10", "message": "sales of {sales_3m} are too many", "effect": "note"}
    message = _error(tmp_path, red_flags=[flag])
    assert message.endswith("key `red_flags.0.message`: got 'sales of {sales_3m} are too many'; expected plain text, "
                            "quoted as written: `{sales_3m}` would stay in braces (only `next_action` is a template; "
                            "the analysis shows the metrics beside the flag)"), message


def test_a_long_window_keeps_the_history_it_needs_without_integrity_keys(tmp_path: Path) -> None:
    """A daily pack comparing with a year earlier needs no `integrity.history_periods`: the kept history is the
    widest window and `min_history` periods before it, or `history_periods` where that is more (Texas: 72)."""
    pack = _load(tmp_path, **{"metrics.sales_3m_prev.window": [364, 391]})
    assert pack.history_reach == 391 + pack.integrity.min_history
    assert load_criteria(PACK).history_reach == 71


def test_next_action_with_name_and_metric_placeholders_loads(tmp_path: Path) -> None:
    pack = _load(tmp_path, next_action="Visit {name}; compare {median_3m} with {median_3m_prev}.")
    assert "{median_3m}" in pack.next_action


@pytest.mark.parametrize("key", ["domain", "next_action", "formula", "source"])
def test_missing_required_key(tmp_path: Path, key: str) -> None:
    raw = _bundled(tmp_path)
    del raw[key]
    message = _refused(tmp_path, raw)
    assert f"key `{key}`: missing" in message


def test_models_are_optional_and_default_to_the_bundled_choice(tmp_path: Path) -> None:
    """A new domain in deterministic mode need not name models (a new user found `models` required)."""
    from opportunity_assets.criteria import DEFAULT_MODELS

    raw = _bundled(tmp_path)
    del raw["models"]
    path = tmp_path / "pack.yaml"
    path.write_text(yaml.safe_dump(raw))
    models = load_criteria(path).models
    assert {role: getattr(models, role).model for role in DEFAULT_MODELS} == \
        {role: spec["model"] for role, spec in DEFAULT_MODELS.items()}


def test_missing_nested_key(tmp_path: Path) -> None:
    raw = _bundled(tmp_path)
    del raw["source"]["entity_id"]
    path = tmp_path / "pack.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(CriteriaError, match=r"key `source\.entity_id`: missing"):
        load_criteria(path)


@pytest.mark.parametrize(("text", "fragment"), [
    ("- domain\n- source\n", "got a list (lines starting `- `), ['domain', 'source']; expected a mapping"),
    ("just a sentence\n", "got a text, 'just a sentence'; expected a mapping"),
    ("", "got nothing (an empty file, or only comments); expected a mapping"),
])
def test_non_mapping_yaml(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "pack.yaml"
    path.write_text(text)
    with pytest.raises(CriteriaError) as exc:
        load_criteria(path)
    assert fragment in str(exc.value)
    assert str(path) in str(exc.value)


def test_a_key_written_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    """PyYAML keeps the later of two equal keys silently (a metric defined twice: the first one vanishes)."""
    path = tmp_path / "pack.yaml"
    path.write_text("domain: x\nmetrics:\n  a: {agg: sum}\n  a: {agg: avg}\n")
    with pytest.raises(CriteriaError, match=r"line 4, column 3, 'a: \{agg: avg\}': key 'a' written twice \(first at "
                                            r"line 3\): the later would win"):
        load_criteria(path)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_pack_saved_as_utf16_says_so(tmp_path: Path, encoding: str) -> None:
    """Trial 142: a pack saved as "Unicode text" (UTF-16, as a Windows editor may) was "not UTF-8 text (byte 0)",
    where a UTF-16 data file is named as one; with or without its byte-order mark."""
    path = tmp_path / "pack.yaml"
    path.write_bytes(PACK.read_text().encode(encoding))
    with pytest.raises(CriteriaError, match=r"pack.yaml: not UTF-8 text: it looks like UTF-16 text \(first line "
                                            r"'# Criteria pack: Texas housing .*'\); expected the file saved as "
                                            r"UTF-8"):
        load_criteria(path)


def test_anchors_that_expand_past_any_pack_are_refused_fast(tmp_path: Path) -> None:
    """Trial 142: a "billion laughs" pack (nine aliases of nine aliases, nine deep, as `domain`) loaded in a blink, as
    PyYAML shares what an alias names, then hung past a minute while its error was written out whole. A pack using
    an anchor the usual way (one list written twice) still loads."""
    import time
    path = tmp_path / "pack.yaml"
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
    path.write_text("\n".join(lines) + "\ndomain: *i\n")
    started = time.monotonic()
    with pytest.raises(CriteriaError, match=r"criteria file .*pack.yaml: got anchors and aliases \(`&name`, "
                                            r"`\*name`\) expanding to over 100,000 values from 22 written"):
        load_criteria(path)
    assert time.monotonic() - started < 5
    raw = yaml.safe_load(PACK.read_text())
    raw["source"]["path"] = str(_source(tmp_path))
    text = yaml.safe_dump(raw).replace("assumptions:\n", "assumptions: &said\n", 1) + "x_notes: *said\n"
    path.write_text(text)
    with pytest.raises(CriteriaError, match="key `x_notes`: unknown key"):
        load_criteria(path)


@pytest.mark.parametrize(("key", "text"), [("nights", "nights: {start: 2013-12-40}\n"),
                                           ("source.known_at", "source: {known_at: 1985-02-29}\n")])
def test_a_date_no_calendar_has_names_its_key(tmp_path: Path, key: str, text: str) -> None:
    """Trial 33: PyYAML raised "day is out of range for month" from inside the load, no key and no value."""
    path = tmp_path / "pack.yaml"
    path.write_text("domain: x\n" + text)
    with pytest.raises(CriteriaError) as exc:
        load_criteria(path)
    value = text.split(": ")[-1].strip("{}\n")
    assert f"got '{value}'; expected a valid date" in str(exc.value)
    assert f"key `{key}" in str(exc.value)


@pytest.mark.parametrize(("key", "written", "shown"), [
    ("source.publication_lag_days", "yes", "True"),
    ("metrics.sales_3m.window", "[0, yes]", "[0, True]"),
    ("metrics.sales_3m.min_rows", "on", "True"),
    ("thresholds.strong", "on", "True"),
    ("formula.scale", "yes", "True"),
    ("caps.max_candidates", "yes", "True"),
    ("integrity.history_periods", "off", "False"),
])
def test_a_truth_value_where_a_number_goes_is_refused_naming_its_key(tmp_path: Path, key: str, written: str,
                                                                     shown: str) -> None:
    """Trial 44: YAML reads an unquoted `yes`, `on`, `off` as a truth value, which pydantic took as 1 or 0:
    `publication_lag_days: yes` was a lag of one day and `window: [0, yes]` the window [0, 1], check saying ok;
    `thresholds.strong: on` was told under `thresholds.marginal`, a key the pack had right."""
    path = write_pack(tmp_path, _source(tmp_path), **{key: "WRITTEN"})
    path.write_text(path.read_text().replace("WRITTEN", written))
    with pytest.raises(CriteriaError) as exc:
        load_criteria(path)
    assert f"key `{key}`: got {shown}; expected a number: YAML reads an unquoted yes" in str(exc.value)


def test_a_truth_value_stays_one_where_a_key_takes_one(tmp_path: Path) -> None:
    """`caps.descending: false` and a `where`'s `in: [yes]` are truth values by design, read as before."""
    pack = _load(tmp_path, **{"caps.order_by": "sales_3m", "caps.descending": False})
    assert pack.caps.descending is False


def test_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "pack.yaml"
    path.write_text("domain: x\nmetrics: [1, 2\nformula: {\n")
    with pytest.raises(CriteriaError, match="not valid YAML"):
        load_criteria(path)


@pytest.mark.parametrize(("text", "said"), [
    ("domain: x\nsource:\n\tpath: a.csv\n", "line 3, column 1, 'path: a.csv': a tab in the indentation: YAML "
                                             "indents with spaces only"),
    ("domain: x\nsource:\n  path: a.csv\n   grain: year\n", "line 4, column 9, 'grain: year': a `key: value` "
                                                           "where none can start: a line indented deeper"),
    ("domain: x\nsource:\n  path: a.csv\n grain: year\n", "line 4, column 2, 'grain: year': a line indented "
                                                          "otherwise than the keys beside it"),
    ("domain: x\n---\ndomain: y\n", "line 2, column 1, '---': a second document (`---`) starts here"),
])
def test_a_yaml_slip_is_said_in_the_packs_words_with_its_line(tmp_path: Path, text: str, said: str) -> None:
    """Trial 44: PyYAML's own text ("mapping values are not allowed here", "but found another document") for a
    key indented one space too deep or a second `---`: now the slip in words, and the line as written."""
    path = tmp_path / "pack.yaml"
    path.write_text(text)
    with pytest.raises(CriteriaError) as exc:
        load_criteria(path)
    assert f"not valid YAML ({said}" in str(exc.value)


def test_a_number_written_with_a_comma_in_a_flow_mapping_names_the_mapping(tmp_path: Path) -> None:
    """Trial 44: `{..., value: 1,000}` is YAML's `value: 1` and a key `000`: pydantic's "Keys should be strings",
    under `hard_filters.0.0`, a key the pack never wrote."""
    for written, key in (("1,000", "000"), ("1,5", "5")):
        path = write_pack(tmp_path, _source(tmp_path), **{"hard_filters.0": "FLOW"})
        path.write_text(path.read_text().replace(
            "FLOW", f"{{name: liquidity, metric: sales_12m, op: '>=', value: {written}}}"))
        with pytest.raises(CriteriaError) as exc:
            load_criteria(path)
        assert f"key `hard_filters.0`: got a key '{key}', a number, where each key is a name; expected names as " \
               "keys: in a `{...}` mapping a comma ends a value, so `value: 1,000` is read as `value: 1`" \
               in str(exc.value)
        assert "Keys should be strings" not in str(exc.value)


def test_a_number_yaml_would_read_in_another_base_is_read_as_written(tmp_path: Path) -> None:
    """Trial 44: YAML 1.1 reads a leading zero as octal and a colon as base 60: `window: [02, 010]` was told
    "got [2, 8]", and `in: [02134]`, a ZIP code, compared as '1116'."""
    path = write_pack(tmp_path, _source(tmp_path), **{"metrics.sales_3m.window": "PAIR"})
    path.write_text(path.read_text().replace("PAIR", "[0, 010]"))
    assert load_criteria(path).metrics["sales_3m"].window == (0, 10)
    path.write_text(path.read_text().replace("[0, 010]", "[0, 1:30]"))
    with pytest.raises(CriteriaError, match=r"key `metrics.sales_3m.window.1`: got '1:30'; expected a whole number"):
        load_criteria(path)
    assert yaml.load("in: [02134, 7, 0x1F]", Loader=criteria._UniqueKeyLoader) == {"in": ["02134", 7, 31]}


def test_missing_pack_file(tmp_path: Path) -> None:
    with pytest.raises(CriteriaError, match="not found"):
        load_criteria(tmp_path / "absent.yaml")


def test_a_pack_named_without_its_extension_offers_the_yaml_file_beside_it(tmp_path: Path) -> None:
    """Trial 107: `--criteria presidents`, the pack being presidents.yaml beside it, was "not found", no more."""
    pack = write_pack(tmp_path, _source(tmp_path))
    with pytest.raises(CriteriaError) as exc:
        load_criteria(pack.with_suffix(""))
    assert str(exc.value) == f"criteria file {pack.with_suffix('')}: not found; did you mean {str(pack)!r}?"
    with pytest.raises(CriteriaError) as exc:
        load_criteria(tmp_path / "pakc.yml")
    assert str(exc.value).endswith(f"not found; did you mean {str(pack)!r}?")
    with pytest.raises(CriteriaError) as exc:
        load_criteria(tmp_path / "absent.yaml")
    assert str(exc.value).endswith("absent.yaml: not found")


def test_a_cap_below_the_default_floor_lowers_the_floor_it_never_wrote(tmp_path: Path) -> None:
    """Trial 33: `caps: {max_candidates: 2}` was refused as "key `caps.min_candidates`: got 10; expected at most
    max_candidates (2)", a key the pack never wrote; a floor written above the cap is still refused."""
    caps = {"max_candidates": 2, "order_by": "score"}
    pack = _load(tmp_path, caps=caps)
    assert (pack.caps.max_candidates, pack.caps.min_candidates) == (2, 2)
    assert "key `caps.min_candidates`: got 5; expected at most max_candidates (2)" in _error(
        tmp_path, caps={**caps, "min_candidates": 5})
    # trial 35: a cap written as YAML text or a decimal, as the field reads it, lowers the floor too
    for written in ("5", 5.0):
        pack = _load(tmp_path, caps={**caps, "max_candidates": written})
        assert (pack.caps.max_candidates, pack.caps.min_candidates) == (5, 5)


def test_a_section_item_written_as_a_name_is_told_its_keys(tmp_path: Path) -> None:
    """Trial 33: `omissions: [sales_3m]` (the README: "checklist items: metrics an analysis must report") was told
    "expected a mapping of its own keys, such as {key: value}", and which keys, never."""
    assert "key `omissions.0`: got 'sales_3m'; expected a mapping of its own keys, {name: ..., description: ..., " \
        "requires: ...}" in _error(tmp_path, omissions=["sales_3m"])


def test_two_filters_or_flags_of_one_name_are_refused(tmp_path: Path) -> None:
    """Trial 33: two hard filters named `busy`, the first refusing every candidate and the second passing them,
    were kept by name, the first's FAIL hidden: check said "3 pass the hard filters" beside its own warning that
    the first refused every one."""
    raw = yaml.safe_load(PACK.read_text())
    first = raw["hard_filters"][0]
    message = _error(tmp_path, hard_filters=[first, {**raw["hard_filters"][1], "name": first["name"]}])
    assert f"key `hard_filters.1.name`: got {first['name']!r}; expected a name of its own: `hard_filters.0` is " \
        "named so" in message, message
    flag = raw["red_flags"][0]
    assert "key `red_flags.1.name`" in _error(tmp_path, red_flags=[flag, {**flag, "when": "sales_3m > 0"}])


def test_several_problems_are_all_reported(tmp_path: Path) -> None:
    message = _error(tmp_path, **{"bogus": 1, "caps.retries": 9})
    assert "key `bogus`" in message
    assert "key `caps.retries`" in message


def test_criteria_error_is_a_value_error() -> None:
    assert issubclass(CriteriaError, ValueError)


@pytest.mark.parametrize(("template", "fragment"), [
    ("Check {coverage_15m}% of the rows of {name}.", "'{coverage_15m}%'"),
    ("Look at ${median_3m} in {name}.", "'${median_3m}'"),
    ("Call 3 agents in {name}.", "would show '3'"),
])
def test_a_next_action_the_brief_check_would_refuse_is_refused_on_load(tmp_path: Path, template: str,
                                                                       fragment: str) -> None:
    """Numbers the store does not hold (a literal number, a unit beside a placeholder that makes its number read
    as another) stopped a night at `numbers_in_store`; they now stop the load, naming the key."""
    message = _error(tmp_path, next_action=template)
    assert "key `next_action`" in message and fragment in message and "\n" not in message


@pytest.mark.parametrize(("label", "fragment"), [
    ("murders per 10,000", "'10,000'"),
    ("sales per 1000 homes", "'1000'"),
    ("homes at a 7.5% yield", "'7.5%'"),
])
def test_a_component_label_with_a_number_the_store_lacks_is_refused_on_load(tmp_path: Path, label: str,
                                                                            fragment: str) -> None:
    """The brief writes a component's label beside its value: a number in it that the pack does not hold ("murders
    per 10,000") stopped every night that component led at `numbers_in_store`, naming no key."""
    message = _error(tmp_path, **{"formula.components.0.label": label})
    assert "key `formula.components.0.label`" in message and fragment in message and "\n" not in message


def test_a_component_label_may_hold_the_packs_own_numbers(tmp_path: Path) -> None:
    """A number the pack holds (a window's 12, "vs 12 months before") is one the store keeps with the pack."""
    pack = _load(tmp_path, **{"formula.components.0.label": "sales vs 12 months before"})
    assert pack.formula.components[0].label == "sales vs 12 months before"


def test_the_load_time_template_check_agrees_with_the_brief_check_on_a_real_night(tmp_path: Path) -> None:
    from datetime import date

    from opportunity_assets.analyses.logic import analyze
    from opportunity_assets.brief.render import next_action
    from opportunity_assets.candidates.logic import scan
    from opportunity_assets.grounding import unsupported_numbers
    from opportunity_assets.sources.snapshot import read_snapshot

    template = "Compare {sales_3m} sales and {coverage_15m} coverage in {name} with {median_3m}."
    pack = _load(tmp_path, next_action=template)
    snapshot = read_snapshot(pack, date(2015, 1, 30))
    found, _ = scan(pack, date(2015, 1, 30), snapshot.anchor_period, snapshot.metrics, snapshot.history)
    for candidate in found:
        analysis = analyze(pack, candidate)
        stored = [n.value for n in analysis.numbers.values()]
        assert unsupported_numbers(next_action(pack, candidate, analysis), stored, date(2015, 1, 30),
                                   names=[candidate.name]) == []


def test_a_misspelt_key_gets_a_did_you_mean(tmp_path: Path) -> None:
    raw = _bundled(tmp_path)
    raw["metrics"]["sales_3m"]["windw"] = raw["metrics"]["sales_3m"].pop("window")
    message = _refused(tmp_path, raw)
    assert "key `metrics.sales_3m.windw`: unknown key (did you mean `window`?)" in message


@pytest.mark.parametrize(("changes", "said"), [
    ({"hard_filters.0.op": "=>"}, "key `hard_filters.0.op`: got '=>'; expected '>=', '>', '<=' or '<' (did you mean "
                                  "'>='?)"),
    ({"source.shape": "Events"}, "(did you mean 'events'?)"),
    ({"source.shape": "evnts"}, "(did you mean 'events'?)"),
])
def test_a_choice_written_otherwise_gets_a_did_you_mean(tmp_path: Path, changes: dict[str, Any], said: str) -> None:
    """Trial 64: `op: '=>'` was told the four operators alone; a choice turned round, in another case or a letter
    off is offered the one it likely means."""
    assert said in _error(tmp_path, **changes)


def test_a_choice_far_from_every_one_gets_the_list_alone(tmp_path: Path) -> None:
    assert "did you mean" not in _error(tmp_path, **{"hard_filters.0.op": "=="})


def test_an_unknown_key_of_a_long_section_names_the_keys_one_level_down_it_may_mean(tmp_path: Path) -> None:
    """Trial 44: `integrity: {min_mads: 3}` was "unknown key; expected only the documented keys", naming none."""
    message = _error(tmp_path, **{"integrity.min_mads": 3})
    assert "key `integrity.min_mads`: unknown key (did you mean `integrity.level_shift.threshold_mads`" in message


def test_a_mapping_of_another_form_is_one_line_naming_its_unknown_and_missing_keys(tmp_path: Path) -> None:
    """Trial 37: an identity written as a comparison, `{name, left, right, tolerance}`, was four messages for one
    cause: "`integrity.identities.0.ratio`: missing", "`...left`: unknown key (did you mean `effect`?)", "`...right`:
    unknown key", "`...tolerance`: unknown key". It is one line naming the mapping, the keys it has and lacks."""
    raw = _bundled(tmp_path)
    raw["integrity"]["identities"][0] = {"name": "x", "left": "sales_3m", "right": "sales_12m", "tolerance": 0.1}
    message = _refused(tmp_path, raw)
    assert message.endswith(
        ": key `integrity.identities.0`: got the unknown key(s) `left`, `right`, `tolerance` and not `ratio`; "
        "expected the keys of `integrity.identities.0`: `name`, `ratio`, `expected`, `threshold_mads`, `latest_mads`, "
        "`effect`, `description`"), message


def test_the_keys_a_mapping_lacks_are_one_line_naming_the_mapping(tmp_path: Path) -> None:
    """Trial 38: `models: {analyzer: {model: x}, ...}` was "key `models.analyzer.max_input_tokens`: missing; expected
    a value; key `models.analyzer.max_output_tokens`: missing; ...", a line per key for one mapping written short."""
    raw = _bundled(tmp_path)
    raw["hard_filters"][0] = {"name": "x", "metric": "sales_3m"}
    message = _refused(tmp_path, raw)
    assert message.endswith(
        ": key `hard_filters.0`: missing `op`, `value`; expected the keys of `hard_filters.0`: `name`, `metric`, "
        "`op`, `value`, `description`"), message


def test_an_unknown_key_is_matched_against_its_own_section_keys(tmp_path: Path) -> None:
    """Trial 18: a hard filter pasted under `omissions` was told "key `omissions.0.metric`: unknown key (did you mean
    `metric`?)": the "did you mean" was drawn from every key of every section, so it offered the very name refused.
    It is now drawn from the keys that section takes, which the message lists."""
    raw = _bundled(tmp_path)
    raw["omissions"][0].update({"metric": "sales_3m", "op": ">=", "value": 5})
    message = _refused(tmp_path, raw)
    assert "key `omissions.0.metric`: unknown key; expected only the keys of `omissions.0`: `name`, `description`, " \
        "`requires`" in message, message
    assert "did you mean `metric`" not in message and "did you mean `op`" not in message
    raw["omissions"][0] = {"name": "x", "description": "y", "require": ["sales_3m"]}
    message = _refused(tmp_path, raw)
    assert "key `omissions.0.require`: unknown key (did you mean `requires`?); expected only the keys of " \
        "`omissions.0`" in message, message


def test_an_unknown_key_of_a_where_lists_in_as_the_pack_writes_it(tmp_path: Path) -> None:
    """Trial 112: `where: [{column: species, values: [86]}]` was told "expected only the keys of `source.where.0`:
    `column`, `in_`, ...": a name no pack may write (`in_` is the code's, `in` the pack's)."""
    raw = _bundled(tmp_path)
    raw["source"]["where"] = [{"column": "city", "values": ["Austin"]}]
    message = _refused(tmp_path, raw)
    assert "expected only the keys of `source.where.0`: `column`, `in`, `not_in`, `op`, `value`" in message, message
    assert "in_" not in message


def test_a_key_of_another_section_misplaced_is_one_line_naming_where_it_belongs(tmp_path: Path) -> None:
    """Trial 38: `published_column` written at the top level was told "unknown key; expected only the documented
    keys", and `next_action` indented under `formula` that, and "key `next_action`: missing" besides: two lines for
    one cause, and no word of where the key goes. It is one line naming its home."""
    raw = _bundled(tmp_path)
    path = tmp_path / "pack.yaml"
    for move, said in (
            (lambda r: r.update(publication_lag_days=r["source"].pop("publication_lag_days")),
             "key `publication_lag_days`: unknown key at the top level; expected it under `source`, "
             "`source.publication_lag_days` (the key of another section, misplaced)"),
            (lambda r: r["formula"].update(next_action=r.pop("next_action")),
             "key `formula.next_action`: unknown key in `formula`; expected it at the top level, `next_action`, "
             "beside `source` (the key of another section, misplaced)")):
        moved = copy.deepcopy(raw)
        move(moved)
        path.write_text(yaml.safe_dump(moved))
        with pytest.raises(CriteriaError) as exc:
            load_criteria(path)
        assert str(exc.value) == f"criteria file {path}: {said}"


def _bundled(tmp_path: Path) -> dict[str, Any]:
    """The bundled pack as YAML data, reading a small source of its shape."""
    raw = yaml.safe_load(PACK.read_text())
    raw["source"]["path"] = str(_source(tmp_path))
    return dict(raw)


def _refused(tmp_path: Path, raw: dict[str, Any]) -> str:
    """The one-line refusal of the pack `raw` (`_refusal`), which must not load."""
    message = _refusal(tmp_path, raw)
    assert message is not None, "the pack loaded"
    return message


def _nyc_pack() -> dict[str, Any]:
    """The bundled NYC routes pack (events, with a `share` aggregate) as YAML data, its source path made absolute."""
    nyc = Path(PACK).parent / "nyc_routes.yaml"
    raw = yaml.safe_load(nyc.read_text())
    raw["source"]["path"] = str((nyc.parent / raw["source"]["path"]).resolve())
    return dict(raw)


def _refusal(tmp_path: Path, raw: dict[str, Any]) -> str | None:
    """The pack `raw` written and loaded: None if it loads, else its one-line refusal."""
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    try:
        load_criteria(tmp_path / "pack.yaml")
    except CriteriaError as exc:
        return str(exc)
    return None


def test_a_filter_no_share_can_meet_is_refused_naming_its_value(tmp_path: Path) -> None:
    """A bird-strike pack's `coverage_12m >= 90` (a percent for a share): every entity failed the filter, the night
    had no candidate and check said ok. An events `share` aggregate's average is a share too; a bound any share
    meets (`>= 0`, `<= 1`) and the bundled packs load."""
    raw = _nyc_pack()
    for value, op, refused in ((0.2, ">=", False), (1, "<=", False), (0, ">=", False), (20, ">=", True),
                               (0, "<", True), (1, ">", True)):
        raw["hard_filters"][1] = {"name": "punctual", "metric": "late_share_4w", "op": op, "value": value}
        refusal = _refusal(tmp_path, raw)
        assert (refusal is not None) == refused, refusal
        assert refusal is None or refusal.endswith(
            f"key `hard_filters.1.value`: got {float(value)}; expected a value from 0 to 1: late_share_4w is the avg "
            f"of `late_share`, an events `share` aggregate, a share from 0 to 1, so `{op} {value:g}` never holds (90% "
            "is 0.9)")
    for pack in sorted(Path(PACK).parent.glob("*.yaml")):
        load_criteria(pack)


def test_a_red_flag_no_share_can_meet_or_every_share_meets_is_refused_naming_its_when(tmp_path: Path) -> None:
    """Trial 94: a pack copied from one in percent kept its red flag, `adults > 20`, over the average of an events
    `share`: it flagged no one, and check said ok. A bound on a share by construction that no share meets, or that
    every share meets (flagging every candidate), either way round, names `red_flags.N.when`."""
    raw = _nyc_pack()
    share = "late_share_4w is the avg of `late_share`, an events `share` aggregate, a share from 0 to 1, so"
    for when, said in (("late_share_4w > 0.2", None), ("0.5 < late_share_4w", None), ("late_share_4w < 1", None),
                       ("late_share_4w > 20", f"a bound from 0 to 1: {share} `> 20` never holds, flagging no one "
                                              "(90% is 0.9)"),
                       ("20 <= late_share_4w", f"a bound from 0 to 1: {share} `>= 20` never holds, flagging no one "
                                               "(90% is 0.9)"),
                       ("late_share_4w >= 0", f"a bound a share lies either side of: {share} `>= 0` holds for every "
                                              "value, flagging every candidate")):
        raw["red_flags"] = [{"name": "late", "when": when, "message": "late"}]
        refusal = _refusal(tmp_path, raw)
        assert refusal == (None if said is None else
                           f"criteria file {tmp_path / 'pack.yaml'}: key `red_flags.0.when`: got {when!r}; expected "
                           f"{said}"), refusal
    for pack in sorted(Path(PACK).parent.glob("*.yaml")):
        load_criteria(pack)


def test_a_share_metric_under_a_unit_that_is_no_share_is_refused_naming_the_unit(tmp_path: Path) -> None:
    """A share under `unit: usd` wrote a 42% late share as "$0" in the brief. A share by construction (an events
    `share` aggregate's average, a coverage) under usd, count, months or days names `metrics.X.unit`; under `share`
    or `number` it loads."""
    raw = _nyc_pack()
    for unit, written in (("usd", "$0"), ("count", "0"), ("days", "0"), ("share", None), ("number", None)):
        raw["metrics"]["late_share_4w"]["unit"] = unit
        refusal = _refusal(tmp_path, raw)
        assert (refusal is not None) == (written is not None), refusal
        assert refusal is None or refusal.endswith(
            f"key `metrics.late_share_4w.unit`: got {unit!r}; expected `unit: share`: late_share_4w is the avg of "
            f"`late_share`, an events `share` aggregate, a share from 0 to 1, and `unit: {unit}` writes a share of "
            f"0.42 in the brief as {written!r}")


def test_a_sum_of_an_events_share_under_unit_share_is_refused_naming_the_agg(tmp_path: Path) -> None:
    """Trial 112: `warm_4w: {agg: sum, column: warm_share, window: [0, 3], unit: share}`, four weeks' shares summed
    (3.2 of "share"), loaded, and check warned only of a formula range over it ("on another scale"), which a user
    widens to [0, 4]. A sum of a `share` aggregate under `unit: share` names `metrics.X.agg`; an avg loads."""
    raw = _nyc_pack()
    raw["metrics"]["late_share_4w"]["agg"] = "sum"
    refusal = _refusal(tmp_path, raw)
    assert refusal is not None and refusal.endswith(
        "key `metrics.late_share_4w.agg`: got 'sum'; expected `agg: avg` (or `min`, `max`, `last`): `late_share` is "
        "an events `share` aggregate, a share from 0 to 1 in each period, and a sum of shares is no share (1.0 in "
        "each of 4 periods sums to 4); for the share of the window's events, divide two counts summed over it"), refusal
    raw["metrics"]["late_share_4w"]["agg"] = "avg"
    assert _refusal(tmp_path, raw) is None


def test_an_events_packs_outcome_or_identity_naming_no_aggregate_names_source_aggregates(tmp_path: Path) -> None:
    """Trial 17: `outcome.metric: film` on an events pack (ggplot2movies counted by rating and year) was told
    "expected one of source.columns [...]", a key an events pack cannot have, with no "did you mean"; so was an
    identity's ratio."""
    raw = _nyc_pack()
    names = "['carriers', 'dep_delay', 'flights', 'late_share']"
    for key, value, said in (
            ("outcome", {**raw["outcome"], "metric": "flight"},
             f"key `outcome.metric`: got 'flight'; expected one of the aggregates' names (`source.aggregates`: "
             f"events are counted into them) {names}; did you mean `flights`?"),
            ("integrity", {**raw["integrity"], "identities": [{"name": "late", "ratio": "late_shares / flights",
                                                               "expected": [0.01, 1]}]},
             f"key `integrity.identities.0.ratio`: got 'late_shares / flights'; expected names that are each one of "
             f"the aggregates' names (`source.aggregates`: events are counted into them) {names}; unknown: "
             "['late_shares']; did you mean `late_share`?")):
        (tmp_path / "pack.yaml").write_text(yaml.safe_dump({**raw, key: value}, sort_keys=False))
        with pytest.raises(CriteriaError) as exc:
            load_criteria(tmp_path / "pack.yaml")
        assert str(exc.value).endswith(said), str(exc.value)


def test_an_events_packs_metric_of_a_joined_column_names_the_joined_tables_columns(tmp_path: Path) -> None:
    """Trial 40: a joined table's `columns: [elevation]` (its file writes `elevation_m`) beside a metric reading
    `elevation_m` was told "expected one of the aggregates' names [..., 'elevation', ...]; did you mean
    'elevation'?", the misspelt name, with no word of the joined table's list. The joined lists are named."""
    raw = _nyc_pack()
    (tmp_path / "airports.csv").write_text("route,elevation_m\nEWR-ATL,5\n")
    raw["source"]["join"] = [{"table": "airports", "path": str(tmp_path / "airports.csv"), "entity_id": "route",
                              "shape": "snapshot", "known_at": "2013-01-01", "columns": ["elevation"]}]
    raw["metrics"]["height"] = {"agg": "last", "column": "elevation_m", "window": [0, 0], "unit": "number"}
    refusal = _refusal(tmp_path, raw)
    assert refusal is not None and refusal.endswith(
        "key `metrics.height.column`: got 'elevation_m'; expected one of the panel's columns ['carriers', "
        "'dep_delay', 'elevation', 'flights', 'late_share'], the aggregates' names (`source.aggregates`) and the "
        "joined tables' columns (or that name added to `source.join.0.columns` (table 'airports'), if it is a joined "
        "table's column list that is wrong); did you mean 'elevation'?"), refusal


def test_an_identitys_band_from_zero_names_its_expected_key(tmp_path: Path) -> None:
    """Trial 33: `expected: [0, 10]` was "key `integrity.identities.0`: expected [0.0, 10.0] must be [low, high]
    with 0 < low < high": no "got", and the identity's whole key for its `expected`."""
    raw = _nyc_pack()
    identity = {"name": "late", "ratio": "late_share / flights", "expected": [0, 10]}
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump({**raw, "integrity": {**raw["integrity"],
                                                                            "identities": [identity]}}))
    with pytest.raises(CriteriaError) as exc:
        load_criteria(tmp_path / "pack.yaml")
    assert str(exc.value).endswith("key `integrity.identities.0.expected`: got [0, 10]; expected [low, high] with 0 < "
                                   "low < high: the band a ratio of positive figures lies in"), str(exc.value)


@pytest.mark.parametrize(("changes", "fragments"), [
    ({"hard_filters.0.value": "50,000"}, ["key `hard_filters.0.value`: got '50,000'; expected a number written "
                                          "plainly (50000, 0.25: no thousands separator, unit or % sign)"]),
    ({"source.publication_lag_days": "45 days"}, ["key `source.publication_lag_days`: got '45 days'; expected a "
                                                  "whole number written plainly (45: no unit"]),
    ({"nights": {"start": "June 2002"}}, ["key `nights.start`: got 'June 2002'; expected a valid date, written "
                                          "YYYY-MM-DD (2002-06-30)"]),
    ({"nights": {"start": "2002-13-01"}}, ["key `nights.start`: got '2002-13-01'; expected a valid date, written"]),
    # trial 33: a night that has not ended was shown as Python writes a date, "got datetime.date(2030, 1, 1)"
    ({"nights": {"start": date(2999, 1, 1)}}, ["key `nights.start`: got 2999-01-01; expected a night that has ended"]),
    ({"source.entity_id": 7}, ["key `source.entity_id`: got 7; expected one column name or a list of column names"]),
    # trial 24: a pattern's list with an item that is no text was told columns, then again under pydantic's own key
    ({"source.period_format": ["%Y-%m-%d", 5]}, ["key `source.period_format`: got ['%Y-%m-%d', 5]; expected one "
                                                 "pattern or a list of patterns, each text"]),
    ({"source.entity_id": ["State", 5]}, ["key `source.entity_id`: got ['State', 5]; expected one column name or a "
                                          "list of column names"]),
    ({"source.publication_lag_days": -45}, ["key `source.publication_lag_days`: got -45; expected a number of at "
                                            "least 0"]),
    ({"uncertainty": None}, ["key `uncertainty`: got None; expected a mapping, such as {key: value}"]),
    # trial 7: a pair written otherwise ("expected a valid tuple", "Tuple should have at most 2 items after
    # validation", "key `metrics.sales_3m.window.1`: missing")
    ({"metrics.sales_3m.window": "0-2"}, ["key `metrics.sales_3m.window`: got '0-2'; expected a pair in brackets, "
                                          "such as [0, 2]"]),
    ({"metrics.sales_3m.window": [0]}, ["key `metrics.sales_3m.window`: got [0]; expected a pair in brackets"]),
    ({"metrics.sales_3m.window": [0, 1, 2]}, ["key `metrics.sales_3m.window`: got [0, 1, 2]; expected a pair in "
                                              "brackets"]),
    ({"hard_filters": []}, ["key `hard_filters`: got []; expected a list of at least one item (it has none)"]),
    # trial 23: a fraction was told "a whole number written plainly (45: ...)", as if 45 were offered for 4.5
    ({"metrics.sales_3m.window": [0, 4.5]}, ["key `metrics.sales_3m.window.1`: got 4.5; expected a whole number, "
                                             "without a fraction (periods, days and rows are counted whole)"]),
])
def test_a_value_of_the_wrong_type_is_said_in_the_packs_words_not_pydantics(
        tmp_path: Path, changes: dict[str, Any], fragments: list[str]) -> None:
    """Trial 6: a filter bound "50,000", a lag "45 days", a date "June 2002" and a key of two columns were answered
    with pydantic's own text ("unable to parse string as a number", "input is too short", "a valid string")."""
    message = _error(tmp_path, **changes)
    for fragment in fragments:
        assert fragment in message, message
    for engine in ("unable to parse", "input is too short", "Input should", "valid string", "outside expected",
                   "valid tuple", "Tuple should", "List should", "missing", "list[str]"):
        assert engine not in message, message


@pytest.mark.parametrize(("changes", "said"), [
    ({"source.table": 'sales"2020'}, "key `source.table`: got 'sales\"2020'; expected a table's or view's name as the "
                                     "database lists it, `sales` or `analytics.sales` (its schema before the dot), "
                                     "without double quotes"),
    ({"domain": "Aus Arrivals"}, "key `domain`: got 'Aus Arrivals'; expected a name of lower-case letters, digits and "
                                 "`_`, starting with a letter (e.g. 'aus_arrivals'"),
    ({"hard_filters.0.value": True},
     "key `hard_filters.0.value`: got True; expected a number: YAML reads an unquoted yes"),
])
def test_a_name_or_bound_of_the_wrong_form_is_said_in_words(tmp_path: Path, changes: dict[str, Any],
                                                            said: str) -> None:
    """Trial 6: `table: Arrivals` was "expected String should match pattern '^[a-z][a-z0-9_]*$'" (pydantic's text and
    a regular expression), and a filter `value: true` was read as the bound 1."""
    message = _error(tmp_path, **changes)
    assert said in message, message
    assert "should match pattern" not in message


@pytest.mark.parametrize(("changes", "said"), [
    ({"hard_filters.0.metric": "sales_12"}, "key `hard_filters.0.metric`: got 'sales_12'; expected a metric name"),
    ({"required_inputs.0": "sales_3"}, "key `required_inputs.0`: got 'sales_3'; expected a metric name"),
])
def test_a_misspelt_metric_in_a_filter_or_the_required_inputs_gets_a_did_you_mean(
        tmp_path: Path, changes: dict[str, Any], said: str) -> None:
    """Trial 6: `metric: populaton` listed the pack's metrics with no hint, where an expression's unknown name has
    one."""
    message = _error(tmp_path, **changes)
    assert said in message and message.endswith(f"; did you mean `{next(iter(changes.values()))}m`?"), message


def test_a_metric_column_of_a_pack_with_joins_names_the_joined_lists_and_a_case_slip(tmp_path: Path) -> None:
    """Trial 25: a metric reading `robbery`, a column of the joined Guns table its `columns` did not list, was told
    to add it to `source.columns` (the main source's, a PostgreSQL query without it), and `GSP` for `gsp` had no
    "did you mean" (difflib's ratio is case-sensitive)."""
    write_csv(tmp_path / "rates.csv", [{"city": "Alpha", "year": 2014, "month": 1, "rate": 1.0}],
              ["city", "year", "month", "rate"])
    join = [{"table": "rates", "path": "rates.csv", "entity_id": "city", "year_column": "year",
             "month_column": "month", "columns": ["rate"]}]
    joined = _error(tmp_path, **{"source.join": join, "metrics.sales_3m.column": "robbery"})
    assert "(or that name added to `source.columns` or `source.join.0.columns` (table 'rates'), the list of the " \
           "table that has it, if it is the column list that is wrong)" in joined, joined
    assert _error(tmp_path, **{"metrics.sales_3m.column": "SALES"}).endswith("; did you mean 'sales'?")


def test_a_column_listed_in_another_case_than_several_metrics_read_it_names_the_list(tmp_path: Path) -> None:
    """Trial 72 (trial 66 saw it and left it): `columns: [Close, prev_close]` over a file's `close`, read by four
    metrics, was told "key `metrics.close_now.column`: got 'close'; ... did you mean 'Close'?": the right name
    offered the wrong one, and the next check told the list, every metric then to be mended back. A name that
    several metrics spell alike, listed in another case, is the list's slip; one metric's is still the metric's."""
    error = _error(tmp_path, **{"source.columns": ["SALES", "volume", "median", "listings", "inventory"]})
    assert error.endswith(
        "key `source.columns.0`: got 'SALES'; expected the name as the 6 metrics reading it spell it ('sales': "
        "metrics.sales_3m.column, metrics.sales_3m_prev.column, metrics.sales_12m.column, ...), which differs only "
        "in case; did you mean 'sales'? (or those metrics' column 'SALES', if that is how the file writes it)"), error
    assert _error(tmp_path, **{"metrics.sales_3m.column": "SALES"}).endswith("; did you mean 'sales'?")
    # trial 89: a list entry misspelt, which no metric reads, is the list's slip too (each metric had been told
    # "did you mean 'mral'?", the typo); a metric's own misspelling of a listed name still names the metric
    error = _error(tmp_path, **{"source.columns": ["sales", "volume", "median", "listings", "inventry"]})
    assert error.endswith(
        "key `source.columns.4`: got 'inventry'; expected the name as the 3 metrics reading it spell it ('inventory': "
        "metrics.inventory_3m.column, metrics.inventory_3m_prev.column, metrics.coverage_15m.columns.1); 'inventry' "
        "is read by no metric; did you mean 'inventory'? (or those metrics' column 'inventry', if that is how the "
        "file writes it)"), error
    assert "key `metrics.sales_3m.column`: got 'salse'" in _error(tmp_path, **{"metrics.sales_3m.column": "salse"})


def test_one_item_written_without_its_list_is_shown_and_told_its_brackets(tmp_path: Path) -> None:
    """Trial 28 (seen in trial 26 and left): `where: {column: citationIssued, in: [YES]}`, one condition without
    its list, was told "got {...}; expected a list", the mapping hidden. Every list key is so: a hard filter too."""
    error = _error(tmp_path, **{"source.where": {"column": "city", "in": ["Alpha"]}})
    assert error.endswith(
        "key `source.where`: got a mapping, {column: 'city', in: ['Alpha']}; expected a list, such as [a, b]: one item "
        "is a list of one, the mapping in brackets ([{column: 'city', in: ['Alpha']}]) or on a line of its own after "
        "`- `"), error
    error = _error(tmp_path, hard_filters={"name": "big", "metric": "sales_3m", "op": ">=", "value": 1})
    assert "key `hard_filters`: got a mapping, {name: 'big', metric: 'sales_3m', op: '>=', value: 1}; expected a " \
           "list" in error, error


def test_a_pack_file_that_is_no_mapping_says_what_it_holds_in_words(tmp_path: Path) -> None:
    """Trial 30: an empty pack file was told "got NoneType; expected a mapping of keys" (Python's class name), a
    pack written as a list "got list". Now what the file holds, in words."""
    path = tmp_path / "pack.yaml"
    for text, said in (("", "got nothing (an empty file, or only comments)"), ("# a note\n", "got nothing"),
                       ("- a\n- b\n", "got a list (lines starting `- `), ['a', 'b']"), ("42\n", "got a number, 42")):
        path.write_text(text)
        with pytest.raises(CriteriaError) as caught:
            load_criteria(path)
        assert said in str(caught.value) and "NoneType" not in str(caught.value), str(caught.value)
        assert "expected a mapping of keys, one `key: value` a line" in str(caught.value), str(caught.value)


def test_a_folder_or_a_data_file_given_as_the_pack_says_what_it_got(tmp_path: Path) -> None:
    """Trial 105: `--criteria` naming the pack's folder was told "not found" (it exists), and the workbook beside it
    "not UTF-8 text (byte 12)". Now what was given, and that the YAML file goes there."""
    (tmp_path / "pack.yaml").write_text("domain: x\n")
    with pytest.raises(CriteriaError) as caught:
        load_criteria(tmp_path)
    assert f"criteria file {tmp_path}: got a folder (it holds pack.yaml); expected the YAML file itself" in \
        str(caught.value), str(caught.value)
    for name, head, said in (("prices.xlsx", b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xff", "a ZIP archive"),
                             ("long.parquet", b"PAR1\x15\x04\x15\xfa\xfe\xff", "a Parquet file")):
        (tmp_path / name).write_bytes(head)
        with pytest.raises(CriteriaError) as caught:
            load_criteria(tmp_path / name)
        assert f"got {said}" in str(caught.value) and "byte" not in str(caught.value), str(caught.value)
        assert "a data file is named by the pack's `source.path`" in str(caught.value), str(caught.value)


def test_the_automation_settings_given_as_the_pack_are_told_so(tmp_path: Path) -> None:
    """Trial 105: `check --criteria deploy/automation.yaml` said "key `domain`: missing; expected a value" for each
    of a pack's ten keys. Now that the file is the settings, once."""
    path = tmp_path / "automation.yaml"
    path.write_text("schedule: {hour: 2}\nsensors: {enabled: true}\n")
    with pytest.raises(CriteriaError) as caught:
        load_criteria(path)
    assert str(caught.value) == f"criteria file {path}: got the automation settings (its keys `schedule`, " \
        "`sensors`): expected a criteria pack (`domain`, `source`, `metrics`, ...); settings go to `--settings`"


@pytest.mark.parametrize(("name", "text", "said"), [
    ("theoph.csv", 'at,id,name\n2024-03-01,1,"Subject 1, 79.6 kg"\n\nNotes:\nSource: R datasets\n', "a CSV file"),
    ("theoph.csv", "at,id,conc\n2024-03-01,1,0.74\n", "a CSV file"),
    ("wages.jsonl", '{"county": 1, "year": 81}\n{"county": 1, "year": 82}\n', "a JSON Lines file"),
])
def test_a_text_data_file_given_as_the_pack_says_what_it_got(tmp_path: Path, name: str, text: str,
                                                             said: str) -> None:
    """Trial 118: `check --criteria theoph.csv` (the data, not the pack) was told "not valid YAML (line 135, column
    6, 'Notes:' ...)" of its notes below the table, or "got a text", and a JSON Lines file "expected '<document
    start>', but found '{'": YAML's words of a file that is no YAML. Now what was given, and where the data goes, as
    a Parquet file or a workbook are told."""
    (tmp_path / name).write_text(text)
    with pytest.raises(CriteriaError) as caught:
        load_criteria(tmp_path / name)
    message = str(caught.value)
    assert f"got {said}" in message and "a data file is named by the pack's `source.path`" in message, message
    assert "not valid YAML" not in message and "document start" not in message, message


@pytest.mark.parametrize(("first", "second", "key", "name"), [("counties", "counties", "join.1.table", "counties"),
                                                              ("t", "wages", "join.0.table", "t"),
                                                              ("wages", "T", "join.1.table", "T")])
def test_two_tables_of_one_name_are_refused_at_load(tmp_path: Path, first: str, second: str, key: str,
                                                     name: str) -> None:
    """Trial 118: a second join copied from the first, `table: counties` kept for the wages' JSON Lines, was taken
    with no word: the provenance and quarantine of one table named the other. A table's name is unique across the
    source and its joins (the main source's, `t` here, defaults to its file's name), case aside."""
    from tests.test_shapes import _csv, _pack

    _csv(tmp_path / "p.csv", ["id", "month", "sales"], [["a", f"2017-{m:02d}", m] for m in range(1, 13)])
    _csv(tmp_path / "c.csv", ["id", "share"], [["a", 0.5]])
    _csv(tmp_path / "w.csv", ["id", "month", "wage"], [["a", f"2017-{m:02d}", m] for m in range(1, 13)])
    joins = [{"table": first, "path": "c.csv", "entity_id": "id", "shape": "snapshot", "known_at": "2017-01-01",
              "columns": ["share"]},
             {"table": second, "path": "w.csv", "entity_id": "id", "period_column": "month", "columns": ["wage"]}]
    with pytest.raises(CriteriaError) as caught:
        _pack(tmp_path, {"path": "p.csv", "period_column": "month", "columns": ["sales"], "join": joins},
              {"level_now": {"agg": "last", "column": "wage", "window": [0, 0]}})
    message = str(caught.value)
    assert f"key `source.{key}`: got {name!r}" in message and "table names unique" in message, message


@pytest.mark.parametrize("window", [[], [None]])
def test_an_empty_pair_is_said_once(tmp_path: Path, window: list[Any]) -> None:
    """Trial 123: `window: []` lacks both items, one pydantic error each, and the load error said the same line
    twice, "...such as [0, 2]; key `metrics.sales_3m.window`: got []; expected ...": one cause, one line."""
    message = _error(tmp_path, **{"metrics.sales_3m.window": window})
    said = "key `metrics.sales_3m.window`: got"
    assert message.count(said) == 1, message


def test_a_condition_written_on_a_source_column_names_the_metrics_that_read_it(tmp_path: Path) -> None:
    """Trial 125 (MASS Cars93): a red flag `when: "MPG.highway < 20"` was told "`MPG.highway` is not allowed (only
    + - * /, comparisons, numbers and metric names)", and one on a plain column name offered the nearest metric by
    spelling: a condition reads metrics, and the metric that reads the column is the one meant."""
    from tests.test_shapes import _csv
    from tests.test_shapes import _pack as _shapes_pack

    rows = [[f"m{k}", 20 + k, 25 + k] for k in range(10)]
    source = {"path": _csv(tmp_path / "cars.csv", ["model", "MPG.city", "MPG.highway"], rows), "shape": "snapshot",
              "known_at": "1993-12-31", "grain": "year", "columns": ["MPG.city", "MPG.highway"]}
    metrics = {"level_now": {"agg": "last", "column": "MPG.city", "window": [0, 0]},
               "highway": {"agg": "last", "column": "MPG.highway", "window": [0, 0]}}
    for when, shown in (("MPG.highway < 20", "MPG.highway"), ("`MPG.highway` < 20", "MPG.highway")):
        flag = {"name": "thirsty", "when": when, "message": "thirsty on the highway", "effect": "doubt"}
        with pytest.raises(CriteriaError) as exc:
            _shapes_pack(tmp_path, source, metrics, red_flags=[flag])
        assert str(exc.value).endswith(f"`{shown}` is a source column, which metric `highway` reads: expected the "
                                       "metric's name in its place"), str(exc.value)
    message = _error(tmp_path, red_flags=[{"name": "low", "when": "inventory < 2", "message": "few months left",
                                           "effect": "note"}])
    assert message.endswith("`inventory` is a source column, which metrics `inventory_3m`, `inventory_3m_prev` "
                            "read: expected the metric's name in its place"), message
