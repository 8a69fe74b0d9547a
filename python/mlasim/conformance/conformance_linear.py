"""The decode/prefill split of linear-attention (KDA) layers as vLLM 0.33 builds it, for the
conformance replay: vLLM's own GDNAttentionMetadataBuilder.build (v1/attention/backends/gdn_attn.py,
the builder of Kimi-Linear's and GLM-5-Next's KDA layers) run on the CPU over the step's rows in the
runner's order. What the builder reads is filled as each model runner fills it:
- CommonAttentionMetadata.is_prefilling: V1 nct < num_prompt_tokens (gpu_model_runner.py ~2324-2330);
  V2 nct < prefill_len, less a prompt tail of one new token over context
  (worker/gpu/model_runner.py ~1334-1366, model_states/mamba_hybrid.py ~263-267), prefill_len being
  the length of the prefill_token_ids the request was last added with (a resumed request is re-added
  with all its tokens, core/sched/scheduler.py ~1642-1652);
- num_decode_draft_tokens_cpu, with speculation: V1 gpu_model_runner.py ~2199-2235, V2
  model_states/mamba_hybrid.py ~275-302.
The builder's pinned host copies are turned off (no GPU here); nothing else of it is replaced."""
from __future__ import annotations

from typing import Any

FIELDS = ("num_spec_decodes", "num_spec_decode_tokens", "num_decodes", "num_decode_tokens", "num_prefills",
          "num_prefill_tokens")


def has_linear_attention(trace) -> bool:
    """A Mamba group in the trace's KV cache: the state of linear-attention layers."""
    return any(g["kind"] == "mamba" for g in trace.sched.get("kv_cache_groups", []))


class LinearSplit:
    def __init__(self, kv_cache_config, vllm_config, runner: str, k: int):
        import torch
        import vllm.utils.torch_utils as torch_utils
        import vllm.v1.attention.backends.utils as backend_utils
        from vllm.v1.attention.backends.gdn_attn import GDNAttentionMetadataBuilder
        from vllm.v1.attention.backends.utils import CommonAttentionMetadata
        from vllm.v1.kv_cache_interface import MambaSpec

        torch_utils.PIN_MEMORY = backend_utils.PIN_MEMORY = False
        specs = []
        for g in kv_cache_config.kv_cache_groups:
            s = g.kv_cache_spec
            specs += list(s.kv_cache_specs.values()) if hasattr(s, "kv_cache_specs") else [s]
        spec = next(s for s in specs if isinstance(s, MambaSpec))
        self.meta_cls = CommonAttentionMetadata
        self.torch, self.runner, self.k, self.block_size = torch, runner, k, spec.block_size
        self.builder = GDNAttentionMetadataBuilder(spec, ["linear_attn"], vllm_config, torch.device("cpu"))
        self.prefill_len: dict[str, int] = {}

    def split(self, rows: list[str], so, batch) -> dict[str, int]:
        torch = self.torch
        for nr in so.scheduled_new_reqs:
            ids = nr.prefill_token_ids if getattr(nr, "prefill_token_ids", None) is not None else nr.prompt_token_ids
            self.prefill_len[nr.req_id] = len(ids)
        if not rows:
            return dict.fromkeys(FIELDS, 0)
        q = [so.num_scheduled_tokens[r] for r in rows]
        nct = [batch.nct(r) for r in rows]
        prompt = [batch.prompt_len(r) for r in rows]
        drafts = [len(so.scheduled_spec_decode_tokens.get(r) or ()) for r in rows]
        listed = [r in so.scheduled_spec_decode_tokens for r in rows]
        if self.runner == "v1":
            is_prefilling = [c < p for c, p in zip(nct, prompt)]
        else:
            runs_as_decode = [x - d == 1 and c > 0 for x, d, c in zip(q, drafts, nct)]
            is_prefilling = [c < self.prefill_len[r] and not a for r, c, a in zip(rows, nct, runs_as_decode)]
        num_decode_draft_tokens = None
        if self.k > 0:
            if self.runner == "v1":
                nddt = [d if lst and x == d + 1 else -1 for x, d, lst in zip(q, drafts, listed)]
                nddt = [0 if v < 0 and c >= p and x == 1 else v for v, c, p, x in zip(nddt, nct, prompt, q)]
            else:
                nddt = [d if not pf and 0 < x <= self.k + 1 else -1 for x, d, pf in zip(q, drafts, is_prefilling)]
            num_decode_draft_tokens = torch.tensor(nddt, dtype=torch.int32)
        qsl = [0]
        for x in q:
            qsl.append(qsl[-1] + x)
        seq = [a + b for a, b in zip(q, nct)]
        width = max(-(-s // self.block_size) for s in seq) + self.k + 2  # the spec blocks too
        m = self.meta_cls(
            query_start_loc=torch.tensor(qsl, dtype=torch.int32), query_start_loc_cpu=torch.tensor(qsl, dtype=torch.int32),
            seq_lens=torch.tensor(seq, dtype=torch.int32), num_reqs=len(rows), num_actual_tokens=qsl[-1],
            max_query_len=max(q), max_seq_len=max(seq), block_table_tensor=torch.zeros((len(rows), width), dtype=torch.int32),
            slot_mapping=torch.zeros(qsl[-1], dtype=torch.int64), is_prefilling=torch.tensor(is_prefilling),
            seq_lens_cpu_upper_bound=torch.tensor(seq, dtype=torch.int32))
        accepted = torch.ones(len(rows), dtype=torch.int32) if self.k > 0 else None
        md = self.builder.build(0, m, num_accepted_tokens=accepted, num_decode_draft_tokens_cpu=num_decode_draft_tokens)
        return {f: int(getattr(md, f)) for f in FIELDS}


def make(trace, sched, vllm_config, runner: str) -> LinearSplit | None:
    if not has_linear_attention(trace):
        return None
    return LinearSplit(sched.kv_cache_config, vllm_config, runner, trace.sched["num_speculative_tokens"])


def record(linear: LinearSplit | None, rec: dict[str, Any], rows: list[str], so, batch) -> None:
    if linear is not None:
        rec["linear_attention"] = linear.split(rows, so, batch)
