"""Typed records of one night: the state object of seed 000, field for field.

Every record is frozen: a stage never edits what an earlier stage wrote, it writes its own record.
Records carry `as_of` so that any row read back from the store says which night it belongs to.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class FrozenRecord(BaseModel):
    """Base of every record: immutable once written, and no key that is not declared."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class FilterResult(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    UNCLEAR = "UNCLEAR"


class Verdict(StrEnum):
    STRONG = "STRONG"
    MARGINAL = "MARGINAL"
    SKIP = "SKIP"
    INSUFFICIENT_DATA = "INSUFFICIENT_DATA"


class Status(StrEnum):
    CONFIRMED = "CONFIRMED"
    REJECTED = "REJECTED"
    UNCERTAIN = "UNCERTAIN"


class Destination(StrEnum):
    BRIEF = "brief"
    ARCHIVE = "archive"


class Source(FrozenRecord):
    """Where a number came from: enough to find the rows again."""

    table: str
    """Source table (the pack's `source.table`)."""
    entity: str
    """Entity id of the rows the number was computed from."""
    period: str
    """Period or window the number describes, e.g. `2015-05..2015-07`."""
    published_at: date
    """Latest `published_at` among the rows used; never after the night's as_of."""


class SourcedNumber(FrozenRecord):
    value: float
    source: Source


class Criteria(FrozenRecord):
    """The part of the criteria pack that the state object reports."""

    domain: str
    hard_filters: list[str]
    thresholds: dict[str, float]


class CopiedFigures(FrozenRecord):
    """A candidate's column equal, period for period, to other entities' (`verifications.copies`), or a multiple of
    another's (`scale`)."""

    others: list[str]
    """The entities' names, sorted."""
    periods: int
    """Latest periods that match."""
    chance: float
    """Of a coincidence this close among the night's entities."""
    basis: str
    """How the chance was judged, in words."""
    scale: float | None = None
    """None: the figures themselves. Else the entity's figures are the others' times about this, change for change
    within rounding (a scaled copy: `verifications.copies.scaled_copies`)."""


class AbsorbedEvents(FrozenRecord):
    """A candidate's events column that rose, from some period on, by what another entity's fell over the same
    periods (`verifications.absorbed`): events counted under the wrong entity."""

    other: str
    """The other entity's name."""
    periods: int
    """Periods from the break to the latest, both counted."""
    rise: float
    """The candidate's figures over its level before the break, summed over those periods (net of the season)."""
    fall: float
    """The other entity's figures under its own level, summed the same way."""
    rise_sds: float
    """The rise in robust standard deviations of the candidate's own noise over those periods."""
    fall_sds: float
    """The fall in the other entity's."""


class Refusal(FrozenRecord):
    """One of the entity's source rows in the metrics' reach that the source refused, whole or a cell of it
    (`candidates.quarantine`)."""

    period: str
    """The row's period, as the grain writes it."""
    columns: list[str]
    """The source columns refused; empty where the whole row was."""
    why: str
    """The reason in a few words, without the raw values (`sales not a number`, `duplicated key`)."""


class RepeatedEvents(FrozenRecord):
    """An events source's rows of one period of the entity's, and how many repeat another in every column read."""

    period: str
    """The period, as the grain writes it."""
    events: int
    """Rows read for the period."""
    repeated: int
    """Of them, rows equal to another of the period's in every column the night reads (a copy)."""


class Candidate(FrozenRecord):
    as_of: date
    id: str
    """Stable id, safe in a partition key (no `|`)."""
    name: str
    raw_data: list[dict[str, Any]]
    """The as_of-filtered source rows, as read by the scanner's query: for a candidate going on, its metric
    windows and the integrity yardstick's history (`integrity.history_periods`); for the others none (their
    metrics, filters and gaps say what the scan saw; the replay of outcomes asks the scan for their windows)."""
    source: str
    """Source table the rows came from."""
    metrics: dict[str, float | None]
    """Metric values computed by the scanner's SQL; None where the window lacks rows (a data gap)."""
    anchor_period: date | None
    """Latest period published by as_of: month 0 of every window."""
    data_gaps: list[str]
    """Human-readable gaps: which metric is missing and why. Never filled by an estimate."""
    filters: dict[str, FilterResult]
    went_on: bool
    """True when no filter FAILed and the cap did not cut it: it gets an analysis partition."""
    capped: bool = False
    """True when it passed the filters but fell beyond `max_candidates`."""
    flagged: bool = False
    """True when it was placed past the cap with a quarantined row or cell in a metric's reach, or a gap in the cap
    order's metric: it went on besides `max_candidates`, or, beyond `caps.max_flagged`, was capped."""
    gone: bool = False
    """True when the entity has no row, read or refused, in the night's latest `CriteriaPack.carried_span` periods
    (its metrics' windows and a year before them; an events source's: no event): the source stopped recording it (a
    club renamed decades ago). It is not judged: no cap places it, nothing is analyzed; the scan's note names it.
    An entity with any row there, however few or late, is judged as every other."""
    preliminary_score: float | None = None
    """The pack's formula on the scan's metrics (what the cap orders by under `caps.order_by: score`); None when a
    required input is missing. The analysis computes the same score again, step by step."""
    peers: dict[str, dict[str, float]] = Field(default_factory=dict)
    """The night's cross-section, the same for every candidate going on (the others have none: they are not
    verified): per source column, the median, robust scale (1.4826 × MAD) and count of the scanned entities' latest
    period-on-period change (log), and of their latest levels (`verifications.peers.levels`). A reference
    distribution for the verifier's cross-sectional checks, never a ranking."""
    peer_ratios: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    """The pairs of source columns the scanned entities hold in proportion (a state's output and its employment:
    `verifications.proportions.ratios`), by the pair's first column and then its second: the median, robust scale and
    count of their latest log ratios, and the two largest and smallest. The same for every candidate going on."""

    typical_scales: dict[str, float] = Field(default_factory=dict)
    """Per source column, the median over the scanned entities of each one's robust scale (1.4826 × MAD) of its
    period-on-period changes (log) over the kept history, where enough entities had enough changes
    (`integrity.MIN_PEERS`, `series.MIN_SAMPLE`): the domain's ordinary move, which a short history's own yardstick
    is widened toward (`series.widened`). The same for every candidate going on."""

    shared_changes: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per source column, the scanned entities' median period-on-period change (log) into each period of the kept
    history, keyed by periods back from the night's latest ("0"), where enough entities had one
    (`integrity.MIN_PEERS`): a move far outside an entity's own changes that tonight's entities made alike,
    beyond their usual year's (a tax every state raised, a recession), is the world's, not the feed's. Each change on
    the entity's own scale (`series.log_level`). The same for every candidate going on; annual grains only (within a
    year each entity's own season moves it apart from the shared move; trial 53's judging of every grain's changes
    net of it doubted 49 more clean held-out Texas picks: withdrawn)."""
    shared_spreads: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per source column, the robust spread (1.4826 × the MAD) of the scanned entities' changes into each period of
    `shared_changes`, by periods back: the yardstick of one period's changes across entities, which an entity's
    move is judged against beside its own past (`shifts.ColumnFacts.spread`). Annual grains only, as
    `shared_changes`."""
    shared_levels: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per source column, the value more than half the scanned entities hold alike in each period of the kept
    history, by periods back, where `integrity.MIN_PEERS` or more have one: a national index every state's rows
    repeat (`verifications.peers`). The same for every candidate going on."""
    shared_decimals: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Per source column, the decimals the median scanned entity's figure is written with in each period of the kept
    history, by periods back, where `integrity.MIN_PEERS` or more have one: a column the whole feed writes finer from
    some period on (a county's rates with 3 decimals from 1993, 2 before) is the feed's format, not one entity's
    figure computed otherwise (`regularity.precision`). The same for every candidate going on."""
    copies: dict[str, CopiedFigures] = Field(default_factory=dict)
    """Per source column, the other entities whose latest figures this one's equal exactly (`verifications.copies`:
    found by the scan, which sees every entity; the verifier judges them)."""
    absorbed: dict[str, AbsorbedEvents] = Field(default_factory=dict)
    """Per events column that adds up across entities (a count, a sum), another entity whose figures fell from the
    period this one's rose by as much (`verifications.absorbed`: found by the scan, which sees every entity)."""
    repeated_events: list[RepeatedEvents] = Field(default_factory=list)
    """An events source's periods of the candidate's kept history with a row, oldest first, each with its rows and
    copies: the verifier doubts a period far fuller of copies than its past (`integrity.repeated_events`)."""
    latest_cut_short: str | None = None
    """For an events source whose events end well before the night's latest period does (`sources.partial_period`):
    that in words, the same for every candidate going on. The verifier doubts each whose metrics read that period
    (`integrity.partial_period`)."""
    refused: list[Refusal] = Field(default_factory=list)
    """The entity's source rows in the metrics' reach (periods 0 to the widest window back) that the source refused,
    oldest first: a figure the night could not read, which the verifier doubts (`integrity.refused`)."""

    @property
    def partition_key(self) -> str:
        return f"{self.as_of.isoformat()}|{self.id}"


class CalculationStep(FrozenRecord):
    name: str
    expression: str
    substituted: str
    """The expression with the input values written in."""
    value: float


class Analysis(FrozenRecord):
    as_of: date
    candidate_id: str
    numbers: dict[str, SourcedNumber]
    calculation: list[CalculationStep]
    components: dict[str, float]
    """Normalised component scores in [0, 1], by component name."""
    score: float | None
    """0-100; None when the verdict is INSUFFICIENT_DATA."""
    verdict: Verdict
    missing: list[str] = Field(default_factory=list)
    """Required inputs that were missing (only with INSUFFICIENT_DATA)."""
    reasoning: str
    assumptions: list[str]
    red_flags: list[str]


class CheckOutcome(FrozenRecord):
    passed: bool | None
    """True pass, False fail, None when the check could not be resolved."""
    finding: str


class Perturbation(FrozenRecord):
    """One sensitivity trial of the verifier: an input moved within its band, or one period left out."""

    input: str
    change: str
    """`-5%` (band) or `without 2015-07` (leave one period out: a month, `without 2012-Q4` a quarter)."""
    relative_change: float | None
    """Signed relative move of the input for band trials (-0.05), None for leave-one-period-out."""
    score: float
    verdict: Verdict
    flips: bool
    """True when the act/don't-act side (STRONG or not) changes."""


class DataFinding(FrozenRecord):
    """A doubt about the source data itself, found by code against the entity's own history (or the night's
    cross-section, or a declared identity)."""

    rule: str
    """`level_shift`, `spike`, `out_of_range`, `stuck`, `repeated_row`, `stale`, `precision`, `rounded`, `copied`,
    `echoed`, `interpolated`, `refused`, `repeated_events`, `cross_section`, `off_level` (far off tonight's
    entities' levels), `off_move` (a move the size of a unit change far off tonight's entities', on a past too short
    to judge it by), `off_ratio` (far off the proportion to its other sizes tonight's entities hold),
    `off_peers` (off the figure tonight's entities carry alike), `identity:<name>` (off the identity's band),
    `exact:<name>` (off an exact identity by more than its rounding)."""
    check: str
    """`inputs` (integrity: the rows contradict each other or themselves) or `assumptions` (plausibility: a
    value far outside what this entity or tonight's entities do)."""
    column: str
    """Source column (or identity name) the finding is about."""
    periods: list[str]
    """Periods concerned, as the grain writes them (`2015-07` for a month), oldest first."""
    periods_back: list[int]
    """The same periods as periods back from the latest published one (0 = latest): the blinded form."""
    value: float | None
    """The value (or ratio) found, as in the source."""
    size: float | None
    """How far outside: robust standard deviations for shifts, spikes, identities and outliers; rounding steps for
    an exact identity; periods for stuck, stale, copied and refused columns; None for repeated rows."""
    effect: str
    """`note`, `doubt` or `reject`, from the pack's rule."""
    message: str
    """The finding in words, naming column, period, value and size."""
    to_resolve: str
    """What would settle it, e.g. `confirm 2015-06 inventory with the source`."""


class ModelFinding(FrozenRecord):
    """A skeptic model's finding that cited the analysis (uncited ones are dropped and counted as noise)."""

    check: str
    cites: str
    finding: str
    effect: str
    """note, uncertain or reject: applied only as a downgrade of the code's status."""


class Verification(FrozenRecord):
    as_of: date
    candidate_id: str
    status: Status
    checks: dict[str, CheckOutcome]
    """Exactly the five checks: arithmetic, inputs, assumptions, omissions, constraints."""
    failed_checks: list[str]
    reason: str
    fatal_assumption: str | None
    """The input whose perturbation flips the verdict's side (largest score move among flips)."""
    key_assumption: str | None = None
    """The perturbation that moves the score most, flip or not: what the verdict depends on most."""
    sensitivity: list[Perturbation] = Field(default_factory=list)
    to_resolve: str | None = None
    """What would resolve an UNCERTAIN status, in one line (code-written)."""
    data_findings: list[DataFinding] = Field(default_factory=list)
    """Integrity and plausibility findings on the source rows, with the effect each had."""
    model_findings: list[ModelFinding] = Field(default_factory=list)
    model_noise: int = 0
    """Model findings discarded because they cited no field or number of the analysis."""
    model_fatal_assumption: str | None = None
    """The skeptic model's semantic fatal assumption, when code's sensitivity found none."""


class Route(FrozenRecord):
    as_of: date
    candidate_id: str
    destination: Destination
    section_or_tag: str
    rule: str
    """The router rule that matched first."""


FATAL_NODES = ("analyze", "verify", "brief")
"""Nodes whose error leaves a candidate without a verdict. Model nodes (`analyzer_model`, `verifier_model`,
`brief_model`) only mean the model added nothing: the code's records stand and are routed."""


MODEL_STOPPED = "stopped tonight: "
"""In a model error record, what follows says why the night sends no more calls to a model (a refused key, an
unknown model): one digit-free sentence that names the fix, which the brief says once however many calls it
stopped."""

MODEL_UNREACHABLE = ("the model's server could not be reached: check ANTHROPIC_BASE_URL (unset for the Anthropic "
                     "API) and this host's network")
"""Ends a model error record whose requests never left (refused, no such host, a base URL that is no URL): the fix,
digit-free, which the brief says once however many calls failed so (trial 68: "APIConnectionError after 3
attempt(s)" on every call, and the brief said only that every call failed)."""


class RunError(FrozenRecord):
    as_of: date
    candidate_id: str
    node: str
    error: str

    @property
    def fatal(self) -> bool:
        return self.node in FATAL_NODES


class Summary(FrozenRecord):
    scanned: int
    passed_filters: int
    capped: int
    analyzed: int
    by_tag: dict[str, int]
    errors: int
    """Candidates that went on but have no verdict (an analyze/verify/brief error)."""
    model_errors: int = 0
    """Model steps that failed or were refused by the budget; their candidates keep the code's verdict."""


class Cost(FrozenRecord):
    """What the model answers in a night's records cost. A re-run that replays answers from the store is billed
    nothing for them: they count as replayed, at what they were billed when first made."""

    calls: int = 0
    """Calls sent when their record was last written (failed calls included: their tokens were billed)."""
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    """Billed for those calls."""
    replayed_calls: int = 0
    """Answers taken from the store instead of a call."""
    replayed_usd: float = 0.0
    """What those answers were billed once, by the run that first made them; not billed again."""


class Brief(FrozenRecord):
    as_of: date
    markdown: str
    words: int


class RunState(FrozenRecord):
    """What `opportunity run --json` prints: one night, read back from the store."""

    run_id: str
    as_of: date
    criteria: Criteria
    candidates: list[Candidate]
    analyses: list[Analysis]
    verifications: list[Verification]
    routes: list[Route]
    brief: Brief | None
    errors: list[RunError]
    summary: Summary
    cost: Cost
    model_checks: str = ""
    """`off (deterministic mode …)` or `on (…)`: whether model judgment took part in this night."""
