// The backend under test for `run` and `check`: the CPU reference (float) or, in builds with CUDA,
// the CUDA backend from its module (cuda_module.h), loaded only when `--device cuda` asks for it.
#pragma once

#include <memory>
#include <string>

#include "attention/backend.h"
#include "attention/faults.h"
#include "model/mla_weights.h"
#include "config/scenario.h"

namespace mlasim::cli {

// "" when `device` can run this scenario with these faults, else why not.
std::string backend_support_error(const std::string& device, const Scenario& scenario, const FaultSet& faults);
// The backend for `device` ("cpu": float CPU reference, bf16 cache for bf16 scenarios; "cuda").
// Call backend_support_error first.
std::unique_ptr<Backend> make_backend(const std::string& device, const MlaWeights& weights, const Scenario& scenario,
                                      const FaultSet& faults);

}  // namespace mlasim::cli
