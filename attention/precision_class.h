// The precision class of a backend's logits: which tolerance applies when they are compared with
// the fp64 golden (verify/logits_compare.h). Typed, so a misspelt class cannot fall back
// to another one silently.
#pragma once

#include <optional>
#include <string_view>

namespace mlasim {

enum class PrecisionClass { kFp64, kFp32, kBf16, kFp8, kFp8DsMla, kFp8Bf16 };

inline const char* to_string(PrecisionClass p) {
  switch (p) {
    case PrecisionClass::kFp64: return "fp64";
    case PrecisionClass::kFp32: return "fp32";
    case PrecisionClass::kBf16: return "bf16";
    case PrecisionClass::kFp8: return "fp8";
    case PrecisionClass::kFp8DsMla: return "fp8_ds_mla";
    case PrecisionClass::kFp8Bf16: return "fp8_bf16";
  }
  return "unknown";
}

// "fp64" | "fp32" | "bf16" | "fp8" | "fp8_ds_mla" | "fp8_bf16"; nullopt for anything else.
inline std::optional<PrecisionClass> parse_precision_class(std::string_view s) {
  for (PrecisionClass p : {PrecisionClass::kFp64, PrecisionClass::kFp32, PrecisionClass::kBf16, PrecisionClass::kFp8,
                           PrecisionClass::kFp8DsMla, PrecisionClass::kFp8Bf16})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

}  // namespace mlasim
