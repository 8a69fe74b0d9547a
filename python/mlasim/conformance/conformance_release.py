"""Which mlasim engine profile reproduces an installed vLLM release, and the release-specific
facts the vLLM side needs: the MLA metadata builder's decode threshold and require_uniform as that
release computes them, and which scheduler options it has.

The releases and the lines each rule comes from are in tools/conformance/README.md ("Releases").
"""
from __future__ import annotations

import ast
from pathlib import Path

# (first release, last release) -> mlasim engine profile. Releases are compared as version tuples.
RELEASE_PROFILES: list[tuple[tuple[int, ...], tuple[int, ...], str]] = [
    ((0, 8, 0), (0, 8, 99), "vllm-2025-early"),
    ((0, 11, 0), (0, 11, 0), "vllm-0.11"),
    # 0.11.1-0.11.2: vllm-0.12's reorder and rules except the chunked-off skip of 0.11.0
    # (0.11.1 scheduler.py:502-508); no profile reproduces them.
    ((0, 12, 0), (0, 13, 99), "vllm-0.12"),
    ((0, 14, 0), (0, 18, 99), "vllm-3region"),
    ((0, 33, 0), (0, 33, 99), "vllm-0.33"),
]

# mlasim backend name -> vLLM module and metadata builder class (vllm/v1/attention/backends/mla/).
BACKENDS = {
    "flashmla": ("flashmla", "FlashMLAMetadataBuilder"),
    "flashattn-mla": ("flashattn_mla", "FlashAttnMLAMetadataBuilder"),
    "flashinfer-mla": ("flashinfer_mla", "FlashInferMLAMetadataBuilder"),
    "cutlass-mla": ("cutlass_mla", "CutlassMLAMetadataBuilder"),
    "triton-mla": ("triton_mla", "TritonMLAMetadataBuilder"),
    "rocm-aiter-mla": ("rocm_aiter_mla", "AiterMLAMetadataBuilder"),
    "tokenspeed-mla": ("tokenspeed_mla", "TokenspeedMLAMetadataBuilder"),
}


def version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for p in version.split("+")[0].split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(p):
            break
    return tuple(parts)


def profile_of(version: str) -> str | None:
    """The mlasim profile that reproduces vLLM `version`, or None when none does."""
    v = version_tuple(version)
    for first, last, profile in RELEASE_PROFILES:
        if first <= v[: len(first)] <= last:
            return profile
    return None


class Release:
    """An installed vLLM: its version, the profile reproducing it and its builder facts."""

    def __init__(self) -> None:
        """The vLLM importable here, found without importing it (vLLM reads its environment on
        import, before the model runner is chosen)."""
        import importlib.metadata
        import importlib.util

        self.version = importlib.metadata.version("vllm")
        self.root = Path(importlib.util.find_spec("vllm").origin).parent
        self.profile = profile_of(self.version)
        self._cache: dict[str, tuple[int, str] | None] = {}

    @property
    def default_runner(self) -> str:
        """"v2" where model runner V2 is the default on CUDA (config/vllm.py falls back to V1 only
        when VLLM_USE_V2_MODEL_RUNNER is 0; 0.33.0 ~731-767), else "v1" (V2 experimental or absent)."""
        cfg = self.root / "config/vllm.py"
        return "v2" if cfg.exists() and "VLLM_USE_V2_MODEL_RUNNER is False" in cfg.read_text() else "v1"

    def has_scheduler_option(self, name: str) -> bool:
        return name in (self.root / "config/scheduler.py").read_text() if (self.root / "config/scheduler.py").exists() else False

    @property
    def refuses_request_priority(self) -> str:
        """vLLM's message and line where its V1 input processor refuses a request priority (0.8:
        v1/engine/processor.py "V1 does not support priority yet."), else ""."""
        path = self.root / "v1/engine/processor.py"
        if not path.exists():
            return ""
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "V1 does not support priority yet." in line:
                return f"V1 does not support priority yet. (v1/engine/processor.py:{n})"
        return ""

    @property
    def calls_init_reorder_threshold(self) -> bool:
        """Whether the MLA builder raises T for speculation (`_init_reorder_batch_threshold`, from
        0.11.1); 0.11.0's MLACommonMetadataBuilder keeps the class value and passes no
        require_uniform (mla/common.py:683)."""
        return self.profile not in ("vllm-0.11", "vllm-2025-early")

    def backend_class_values(self, backend: str) -> tuple[int, str] | None:
        """(reorder_batch_threshold, query_len_support) of the backend's metadata builder class,
        read from the release's source (several modules do not import without a GPU); a class that
        sets neither inherits MLACommonMetadataBuilder's (threshold 1, SINGLE_ONLY). None when the
        release has no such backend."""
        if backend not in self._cache:
            module, cls_name = BACKENDS[backend]
            path = self.root / "v1/attention/backends/mla" / f"{module}.py"
            if not path.exists():
                self._cache[backend] = None
                return None
            values = {"reorder_batch_threshold": 1, "query_len_support": "SINGLE_ONLY"}
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.ClassDef) and node.name == cls_name:
                    for stmt in node.body:
                        target = stmt.target if isinstance(stmt, ast.AnnAssign) else (stmt.targets[0] if isinstance(stmt, ast.Assign) else None)
                        if isinstance(target, ast.Name) and target.id in values and stmt.value is not None:
                            v = stmt.value
                            values[target.id] = v.value if isinstance(v, ast.Constant) else v.attr
            support = str(values["query_len_support"]).lower().replace("single_only", "single")
            self._cache[backend] = (int(values["reorder_batch_threshold"]), support)
        return self._cache[backend]

    def threshold(self, engine: dict, k: int) -> tuple[int, bool]:
        """The decode threshold and require_uniform this release's MLA builder uses for the
        trace's backend (0.11.1+: MLACommonMetadataBuilder.__init__ -> _init_reorder_batch_threshold,
        T = max(T, 1 + k) unless SINGLE_ONLY, require_uniform = support != VARLEN); a threshold or
        support the scenario sets replaces the class's."""
        facts = self.backend_class_values(engine["attention_backend"])
        t, support = facts if facts is not None else (1, "single")
        if engine["query_len_support_given"]:
            support = engine["query_len_support"]
        if not self.calls_init_reorder_threshold:
            return (engine["decode_threshold"] if engine["decode_threshold_given"] else t), False
        if engine["decode_threshold_given"]:
            t = engine["decode_threshold"]
        elif support != "single" and k > 0:
            t = max(t, 1 + k)
        return t, support != "varlen"
