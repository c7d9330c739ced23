// Catch2's main, compiled once and shared by every test binary that does not
// need its own (link strata_catch_main).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
