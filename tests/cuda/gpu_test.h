// A minimal registry for GPU tests: GPU_TEST(name) { ...; return true; } registers a test that
// gpu_main.cu runs when a device is usable. Each test prints its own failures.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace mlasim::gpu_test {

struct TestCase {
  std::string name;
  std::function<bool()> fn;
};

std::vector<TestCase>& registry();

struct Registrar {
  Registrar(const char* name, std::function<bool()> fn) { registry().push_back({name, std::move(fn)}); }
};

}  // namespace mlasim::gpu_test

#define MLASIM_GPU_CONCAT2(a, b) a##b
#define MLASIM_GPU_CONCAT(a, b) MLASIM_GPU_CONCAT2(a, b)
#define GPU_TEST(name)                                                                                  \
  static bool name();                                                                                   \
  static ::mlasim::gpu_test::Registrar MLASIM_GPU_CONCAT(mlasim_gpu_registrar_, name)(#name, name); \
  static bool name()
