"""What each model role may answer: structured output schemas. None of them has a number, a score, a verdict
or a status field, so a model has nowhere to put one; extra keys are ignored."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Item = Annotated[str, Field(max_length=300)]
"""One assumption or red flag: a sentence, not a page (a 1 MB flag would be stored, and shown, as written)."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AnalyzerJudgment(_Answer):
    assumptions: list[Item] = Field(default_factory=list, max_length=12)
    """Assumptions the verdict rests on that the code's structural list does not already state."""
    red_flags: list[Item] = Field(default_factory=list, max_length=8)
    reasoning: str = Field(default="", max_length=600)
    """Two or three sentences for a human; never a number the analysis does not hold."""


class VerifierFinding(_Answer):
    check: Literal["assumptions", "omissions"]
    cites: str = Field(max_length=200)
    """A field of the analysis (`numbers.sales_3m`, `assumptions[2]`, `red_flags[0]`, `calculation.sales_yoy`)
    or a number written in it. A finding that cites neither is discarded as noise."""
    finding: str = Field(max_length=400)
    effect: Literal["note", "uncertain", "reject"]
    """What the skeptic asks for: a note, UNCERTAIN, or REJECTED. Code applies it only as a downgrade."""


class VerifierJudgment(_Answer):
    findings: list[VerifierFinding] = Field(default_factory=list, max_length=10)
    fatal_assumption: str | None = Field(default=None, max_length=400)
    """The assumption that, if wrong, kills the deal (semantic; code's sensitivity result stands beside it)."""


class WordedLine(_Answer):
    candidate_id: str = Field(max_length=200)
    text: str = Field(max_length=300)


class BriefWording(_Answer):
    lines: list[WordedLine] = Field(default_factory=list)
