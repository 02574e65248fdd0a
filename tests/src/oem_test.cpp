// The OEM writer's epochs: continuous UTC from the run's epoch, by calendar rules checked by hand.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <vector>

#include "output/oem.hpp"

namespace so = skyfabric::output;

TEST(Oem, EpochsFollowTheCalendar) {
    EXPECT_EQ(so::utc_after("2027-03-20T00:00:00Z", 10.0), "2027-03-20T00:00:10.000000");
    // 2028 is a leap year (divisible by 4, not a century); 2100 is not (a century not divisible by 400).
    EXPECT_EQ(so::utc_after("2028-02-28T23:59:59.5Z", 1.0), "2028-02-29T00:00:00.500000");
    EXPECT_EQ(so::utc_after("2100-02-28T23:59:59Z", 1.0), "2100-03-01T00:00:00.000000");
    EXPECT_EQ(so::utc_after("2000-02-28T12:00:00Z", 86400.0), "2000-02-29T12:00:00.000000");
    // A week of seconds; and a value a rounding step under a whole second is printed whole.
    EXPECT_EQ(so::utc_after("2027-12-31T00:00:00Z", 7 * 86400.0), "2028-01-07T00:00:00.000000");
    EXPECT_EQ(so::utc_after("2027-03-20T00:00:00Z", 59.9999999), "2027-03-20T00:01:00.000000");
    EXPECT_THROW(so::utc_after("20th March 2027", 0.0), std::invalid_argument);
}

TEST(Oem, WritesOneSegmentPerSatelliteInKilometres) {
    const std::vector<double> t{0.0, 10.0};
    // 2 samples x 2 satellites x 3.
    const std::vector<double> p{7e6, 0, 0, 7e6, 1e3, 0, 7e6, 7.5e4, 0, 7e6, 7.6e4, 0};
    const std::vector<double> v{0, 7.5e3, 0, 0, 7.5e3, 1, 0, 7.5e3, 0, 0, 7.5e3, 1};
    so::OemInput in;
    in.epoch_utc = "2027-03-20T00:00:00Z";
    in.object_prefix = "test";
    in.creation_utc = "2026-11-26T00:00:00";
    in.time_s = t;
    in.position_m = p;
    in.velocity_m_s = v;
    in.satellite_count = 2;
    in.satellites = {1};
    std::ostringstream out;
    so::write_oem(out, in);
    const std::string text = out.str();
    EXPECT_EQ(text.rfind("CCSDS_OEM_VERS = 2.0\n", 0), 0u);
    EXPECT_EQ(text.find("OBJECT_NAME = test-0"), std::string::npos);
    EXPECT_NE(text.find("OBJECT_NAME = test-1\n"), std::string::npos);
    EXPECT_NE(text.find("2027-03-20T00:00:10.000000 7000.0000000000 76.0000000000 0.0000000000 0.0000000000000 "
                        "7.5000000000000 0.0010000000000\n"),
              std::string::npos)
        << text;
    in.satellites = {2};
    EXPECT_THROW(so::write_oem(out, in), std::invalid_argument);
}
