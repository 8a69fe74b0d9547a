// Catch2 entry point for the CPU tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
