#pragma once
// The one range check of every number `skyfabric link-budget` reads (no CLI11 here, so the fuzz
// target reads the options as the command does): finite and within [min, max]. NaN, infinities and
// values whose budget overflows (a 1e300 m distance, 1e300 W) are refused, exit 2.
#include <string>

namespace skyfabric::cli {

struct NumberRange {
    double min;
    double max;
    const char* unit;
};

inline constexpr NumberRange distance_m_range{1e-3, 1e13, "m"};  // a millimetre to ~67 AU
inline constexpr NumberRange aperture_m_range{1e-4, 100.0, "m"};
inline constexpr NumberRange power_w_range{1e-12, 1e6, "W"};
inline constexpr NumberRange wavelength_nm_range{400.0, 11000.0, "nm"};
inline constexpr NumberRange efficiency_range{0.01, 1.0, ""};
inline constexpr NumberRange losses_db_range{0.0, 100.0, "dB"};
inline constexpr NumberRange grid_ghz_range{12.5, 1000.0, "GHz"};
inline constexpr NumberRange rate_gbps_range{1e-3, 1e5, "Gbit/s"};
inline constexpr NumberRange margin_db_range{0.0, 50.0, "dB"};
inline constexpr NumberRange pointing_urad_range{0.0, 1e6, "urad"};

// "[0.001, 1e+13] m"
std::string range_text(const NumberRange& r);

// "" when text is a finite number within r, else "expected a finite number in RANGE, got 'TEXT'".
std::string number_error(const std::string& text, const NumberRange& r);

// One --distances entry, "100", "200m", "5000km", in metres; throws scenario::ScenarioError.
double parse_distance_m(const std::string& item);

}  // namespace skyfabric::cli
