// Catch2's main, for builds without Debian's prebuilt libCatch2WithMain (the
// cross builds: that archive is x86 only). tests/test_env.cpp sets the tests'
// environment in both cases.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
