"""Rules the document cannot state, taught to the fuzzer (SCHEMATHESIS_HOOKS, set by scripts/fuzz.ts).

JSON Schema cannot compare two fields or a value with today. Left alone, the fuzzer's schema-valid cases break
those rules at random (a calling window 09:00-00:00, send gaps with min > max, an expiry in the past) and stop
at the 422 that names the rule. Each hook below mends one such relation in a positive case, so the case goes on
to the success path; negative cases are left as generated. Rules that depend on stored state, configuration or
meaning (SQL, CSV columns, configured integrations, a stored refresher) are not mended: scripts/fuzz.ts lists
the findings they cause. Every rule mended here has its own integration tests of the refusal.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import schemathesis
from schemathesis.generation.modes import GenerationMode

DAY = dt.timedelta(days=1)
SUMMARY_MAX_DAYS = 366  # domain/cards.ts
FIRST_DAY = dt.date(1900, 1, 1)  # domain/timestamps.ts


def is_positive(case: Any) -> bool:
    """Whether the case is meant to be valid (a case without metadata counts as valid)."""
    meta = getattr(case, "meta", None)
    return meta is None or meta.generation.mode != GenerationMode.NEGATIVE


def positive_body(case: Any) -> dict | None:
    """The case's JSON object body when the case is meant to be valid; None otherwise."""
    return case.body if is_positive(case) and isinstance(case.body, dict) else None


def minutes(hhmm: str) -> int:
    hours, mins = hhmm.split(":")
    return int(hours) * 60 + int(mins)


def ordered_window(start: str, end: str) -> tuple[str, str]:
    """start before end: swapped when reversed, widened to the day's edge when equal."""
    if minutes(start) < minutes(end):
        return start, end
    if minutes(start) > minutes(end):
        return end, start
    return ("00:00", start) if start != "00:00" else ("00:00", "23:59")


@schemathesis.hook("map_case")
def fresh_idempotency_key(context: Any, case: Any) -> Any:
    """An Idempotency-Key names one request: a positive case reusing another case's key is 422, so each gets its own."""
    headers = case.headers
    if is_positive(case) and headers and "Idempotency-Key" in headers:
        headers["Idempotency-Key"] = str(uuid.uuid4())
    return case


@schemathesis.hook("map_case").apply_to(operation_id="createCampaignCampaign")
def campaign_calling_window(context: Any, case: Any) -> Any:
    body = positive_body(case)
    window = body.get("calling_window") if body else None
    if isinstance(window, dict) and isinstance(window.get("start"), str) and isinstance(window.get("end"), str):
        window["start"], window["end"] = ordered_window(window["start"], window["end"])
    return case


@schemathesis.hook("map_case").apply_to(operation_id=["createOutreachMailbox", "patchOutreachMailbox"])
def mailbox_window_and_gap(context: Any, case: Any) -> Any:
    body = positive_body(case)
    if not body:
        return case
    gap = body.get("send_gap")
    if isinstance(gap, dict) and isinstance(gap.get("min_seconds"), int) and isinstance(gap.get("max_seconds"), int):
        gap["min_seconds"], gap["max_seconds"] = sorted((gap["min_seconds"], gap["max_seconds"]))
    start, end = body.get("window_start"), body.get("window_end")
    # A PATCH naming one side is compared with the stored other side (09:00-17:00 by default): name both.
    if isinstance(start, str) or isinstance(end, str):
        start = start if isinstance(start, str) else "00:00"
        end = end if isinstance(end, str) else "23:59"
        body["window_start"], body["window_end"] = ordered_window(start, end)
    return case


def range_low_to_high(value: str) -> str:
    if "-" not in value:
        return value
    low, high = value.split("-", 1)
    return value if int(low) <= int(high) else f"{high}-{low}"


@schemathesis.hook("map_case").apply_to(operation_id=["createIntelligenceIcpProfile", "patchIntelligenceIcpProfile"])
def icp_criteria(context: Any, case: Any) -> Any:
    """Ranges low to high, countries and industries named as the service knows them (a code, an account
    industry); the weight rule is in the document itself."""
    body = positive_body(case)
    criteria = body.get("criteria") if body else None
    if not isinstance(criteria, list):
        return case
    for criterion in criteria:
        if not isinstance(criterion, dict) or not isinstance(criterion.get("values"), list):
            continue
        kind = criterion.get("type")
        if kind in ("employees", "revenue"):
            criterion["values"] = [range_low_to_high(v) for v in criterion["values"]]
        elif kind == "country":
            criterion["values"] = ["DE" for _ in criterion["values"]]
        elif kind == "industry":
            criterion["values"] = ["software" for _ in criterion["values"]]
    return case


@schemathesis.hook("map_case").apply_to(operation_id=["getCardEventsSummary", "getCardShareLinkEventsSummary"])
def summary_days(context: Any, case: Any) -> Any:
    """from <= to, at most 366 days; `to` defaults to today and `from` to 29 days before `to`."""
    if not is_positive(case) or not isinstance(case.query, dict):
        return case
    try:
        start = dt.date.fromisoformat(case.query["from"]) if "from" in case.query else None
        end = dt.date.fromisoformat(case.query["to"]) if "to" in case.query else None
    except (TypeError, ValueError):
        return case
    if start is None:
        return case
    end_or_today = end or dt.datetime.now(dt.timezone.utc).date()
    if start > end_or_today:
        start = end_or_today
    if (end_or_today - start).days + 1 > SUMMARY_MAX_DAYS:
        # not before the first day the API takes (api/schemas/dates.ts)
        start = max(end_or_today - (SUMMARY_MAX_DAYS - 1) * DAY, FIRST_DAY)
    case.query["from"] = start.isoformat()
    return case


@schemathesis.hook("map_case").apply_to(operation_id=["createOrganizationPat", "createUserPat", "createCardShareLink"])
def expiry_ahead(context: Any, case: Any) -> Any:
    """An expiry instant in the future (the document cannot name today)."""
    body = positive_body(case)
    if body and isinstance(body.get("expires_at"), str):
        ahead = dt.datetime.now(dt.timezone.utc) + 30 * DAY
        body["expires_at"] = ahead.strftime("%Y-%m-%dT%H:%M:%SZ")
    return case


@schemathesis.hook("map_case").apply_to(operation_id=["createAgentVersion", "updateAgentVersion"])
def unique_tool_names(context: Any, case: Any) -> Any:
    """Each tool of a version named once (the names are how the model calls them)."""
    body = positive_body(case)
    config = body.get("config") if body else None
    tools = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(tools, list):
        return case
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        name = tool["name"]
        if name in seen:
            suffix = f"_{index}"
            name = name[: 64 - len(suffix)] + suffix
            tool["name"] = name
        seen.add(name)
    return case


@schemathesis.hook("map_case").apply_to(operation_id="listAgents")
def metadata_filter_json(context: Any, case: Any) -> Any:
    """The metadata filter is a JSON object, encoded in one query value."""
    if not is_positive(case) or not isinstance(case.query, dict) or "metadata" not in case.query:
        return case
    try:
        valid = isinstance(json.loads(case.query["metadata"]), dict)
    except (TypeError, ValueError):
        valid = False
    if not valid:
        case.query["metadata"] = json.dumps({"team": str(case.query["metadata"])[:100]})
    return case
