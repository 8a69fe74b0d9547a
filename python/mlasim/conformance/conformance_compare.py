"""The comparison of an `mlasim run --json` record with conformance_vllm.replay_vllm's: the first
difference, field by field in a fixed order, and both sides printed step by step (--show)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any


@dataclasses.dataclass
class Outcome:
    name: str
    category: str | None  # None: identical
    detail: str = ""
    size: tuple = ()  # (requests, prompt tokens, output tokens): the smallest of a category is shown
    path: Path | None = None  # the scenario replayed
    linear_steps: int = 0  # steps whose linear-attention (KDA) split was compared


def _short(v: Any, limit: int = 160) -> str:
    s = json.dumps(v, separators=(",", ":")) if not isinstance(v, str) else v
    return s if len(s) <= limit else s[: limit - 3] + "..."


FIELDS = (
    "num_scheduled_tokens",
    "num_scheduled_tokens.order",
    "new",
    "resumed",
    "preempted",
    "scheduled_spec_decode_tokens",
    "new_block_ids",
    "new_block_ids_by_group",
    "num_free_blocks",
    "routing.order",
    "routing.split",
    "routing.num_mqa_mha",
    "routing.linear_attention",
    "routing.threshold",
    "finished",
    "final.token_ids",
    "final.status",
    "final.num_preemptions",
    "final.stop_reason",
)


def compare(m: dict[str, Any], v: dict[str, Any], route: bool, ignore: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The first difference as (category, detail), or None; fields in `ignore` are skipped."""
    ms, vs = m["steps"], v["steps"]
    for i in range(min(len(ms), len(vs))):
        a, b = ms[i], vs[i]
        where = f"step {a['step']}"
        if a["step"] != b["step"]:
            return "step_index", f"{i}th step: mlasim step {a['step']} vs vllm step {b['step']}"
        checks = [
            ("num_scheduled_tokens", a["num_scheduled_tokens"], b["num_scheduled_tokens"]),
            ("num_scheduled_tokens.order", list(a["num_scheduled_tokens"]), list(b["num_scheduled_tokens"])),
            ("new", a["new"], b["new"]),
            ("resumed", a["resumed"], b["resumed"]),
            ("preempted", sorted(a["preempted"]), b["preempted"]),
            ("scheduled_spec_decode_tokens", a["scheduled_spec_decode_tokens"], b["scheduled_spec_decode_tokens"]),
            ("new_block_ids", a["new_block_ids"], b["new_block_ids"]),
            # Several KV cache groups: every group's blocks (absent with one group on both sides).
            ("new_block_ids_by_group", a.get("new_block_ids_by_group"), b.get("new_block_ids_by_group")),
            ("num_free_blocks", a["num_free_blocks"], b["num_free_blocks"]),
        ]
        if route:
            checks += [
                ("routing.order", [r["id"] for r in a["rows"]], b["order"]),
                (
                    "routing.split",
                    [a["num_decodes"], a["num_prefills"], a["num_decode_tokens"], a["num_prefill_tokens"]],
                    b["split"],
                ),
                ("routing.num_mqa_mha", [a["num_mqa_tokens"], a["num_mha_tokens"]], [b["num_mqa_tokens"], b["num_mha_tokens"]]),
                # Linear-attention (KDA) layers: their builder's split (absent on both sides without them).
                ("routing.linear_attention", a.get("linear_attention"), b.get("linear_attention")),
            ]
        checks.append(("finished", sorted(a["finished"]), b["finished"]))
        for field, x, y in checks:
            if field in ignore:
                continue
            if x != y:
                if field == "num_scheduled_tokens" and dict(x) == dict(y):
                    continue
                return field, f"{where} {field}: mlasim {_short(x)} vs vllm {_short(y)}"
    if len(ms) != len(vs):
        return "num_steps", f"mlasim {len(ms)} steps vs vllm {len(vs)} steps"
    for a, b in zip(m["requests"], v["requests"]):
        for field in ("token_ids", "status", "num_preemptions", "stop_reason"):
            if "final." + field in ignore:
                continue
            if a.get(field) != b.get(field):
                return f"final.{field}", f"request {a['id']} {field}: mlasim {_short(a.get(field))} vs vllm {_short(b.get(field))}"
    return None


def show_steps(m: dict[str, Any], v: dict[str, Any], route: bool) -> None:
    """Both records side by side, one line per step and side (--show)."""

    def line(rec: dict[str, Any], mlasim: bool) -> str:
        parts = [_short(rec["num_scheduled_tokens"], 400)]
        for key in ("new", "resumed", "preempted", "finished"):
            if rec[key]:
                parts.append(f"{key}={_short(rec[key])}")
        if rec["scheduled_spec_decode_tokens"]:
            parts.append(f"drafts={_short(rec['scheduled_spec_decode_tokens'])}")
        if rec["new_block_ids"]:
            parts.append(f"blocks={_short(rec['new_block_ids'])}")
        parts.append(f"free={rec['num_free_blocks']}")
        if route:
            if mlasim:
                order = [r["id"] for r in rec["rows"]]
                sp = [rec["num_decodes"], rec["num_prefills"], rec["num_decode_tokens"], rec["num_prefill_tokens"]]
            else:
                order, sp = rec["order"], rec["split"]
            parts.append(f"rows={_short(order)} split={_short(sp)}")
        return " ".join(parts)

    for i in range(max(len(m["steps"]), len(v["steps"]))):
        for label, recs, is_m in (("mlasim", m["steps"], True), ("vllm  ", v["steps"], False)):
            if i < len(recs):
                print(f"  step {recs[i]['step']:3d} {label} {line(recs[i], is_m)}")
    for a, b in zip(m["requests"], v["requests"]):
        for label, r in (("mlasim", a), ("vllm  ", b)):
            print(f"  {r['id']} {label} {r['status']} preemptions={r['num_preemptions']} tokens={_short(r['token_ids'], 400)}")
