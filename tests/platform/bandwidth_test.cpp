// The read-bandwidth probe (platform/bandwidth.h) runs and gives a usable
// figure. Small buffers: this checks the plumbing, not the machine, and no
// timing is asserted (a shared or emulated machine can be arbitrarily slow).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "platform/bandwidth.h"

using namespace ember;

TEST_CASE("bandwidth: one thread count gives a positive, finite rate", "[bandwidth]") {
  for (int threads : {1, 2, 3}) {
    INFO(threads << " threads");
    const double gbps = MeasureReadBandwidth(threads, size_t{4} << 20, 2);
    CHECK(std::isfinite(gbps));
    CHECK(gbps > 0);
  }
  // Sizes that are not whole pages, and smaller than a page.
  for (size_t bytes : {size_t{1}, size_t{5000}, (size_t{1} << 20) + 8}) {
    INFO(bytes << " bytes");
    const double gbps = MeasureReadBandwidth(2, bytes, 1);
    CHECK(std::isfinite(gbps));
    CHECK(gbps >= 0);  // a pass too short for the clock reads 0
  }
}

TEST_CASE("bandwidth: the profile has a positive rate per thread count", "[bandwidth]") {
  const std::vector<double> gbps = MeasureReadBandwidthProfile(2, size_t{4} << 20, 2);
  REQUIRE(gbps.size() == 2);
  for (double g : gbps) {
    CHECK(std::isfinite(g));
    CHECK(g > 0);
  }
  CHECK(ProfileBufferBytes() >= (size_t{32} << 20));
}
