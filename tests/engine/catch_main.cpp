// Catch2 main for the engine tests (no OpenCL, unlike tests/catch_main.cpp's users).
#define CATCH_CONFIG_MAIN
#include <catch.hpp>
