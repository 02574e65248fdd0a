#include "output/oem.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace skyfabric::output {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
}

}  // namespace

std::string utc_after(const std::string& epoch_utc, double seconds) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, consumed = 0;
    double s = 0.0;
    if (std::sscanf(epoch_utc.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &s, &consumed) != 6 ||
        mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || !(s >= 0.0 && s < 61.0))
        throw std::invalid_argument("OEM: epoch '" + epoch_utc + "' is not ISO-8601 UTC");
    // Whole microseconds from the epoch's midnight: no 59.9999995 printed as 60.
    const auto us = static_cast<std::int64_t>(std::llround(((h * 60.0 + mi) * 60.0 + s + seconds) * 1e6));
    constexpr std::int64_t us_per_day = 86'400'000'000;
    std::int64_t day = us / us_per_day, rest = us % us_per_day;
    if (rest < 0) rest += us_per_day, --day;
    std::int64_t year = 0;
    unsigned month = 0, dom = 0;
    civil_from_days(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) + day, year, month, dom);
    char text[48];
    std::snprintf(text, sizeof text, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%06lld", static_cast<long long>(year), month, dom,
                  static_cast<long long>(rest / 3'600'000'000), static_cast<long long>(rest / 60'000'000 % 60),
                  static_cast<long long>(rest / 1'000'000 % 60), static_cast<long long>(rest % 1'000'000));
    return text;
}

void write_oem(std::ostream& out, const OemInput& in) {
    const auto samples = in.time_s.size();
    const auto n = static_cast<std::size_t>(in.satellite_count);
    if (in.position_m.size() != samples * n * 3 || in.velocity_m_s.size() != samples * n * 3)
        throw std::invalid_argument("OEM: positions and velocities must be [samples x satellites x 3]");
    if (samples == 0) throw std::invalid_argument("OEM: no samples");
    std::vector<std::int64_t> which = in.satellites;
    if (which.empty())
        for (std::int64_t i = 0; i < in.satellite_count; ++i) which.push_back(i);
    std::vector<std::string> stamps(samples);
    for (std::size_t k = 0; k < samples; ++k) stamps[k] = utc_after(in.epoch_utc, in.time_s[k]);

    out << "CCSDS_OEM_VERS = 2.0\n";
    for (const auto& c : in.comments) out << "COMMENT " << c << "\n";
    out << "CREATION_DATE = " << in.creation_utc << "\n"
        << "ORIGINATOR = SKYFABRIC\n";
    char line[256];
    for (const std::int64_t sat : which) {
        if (sat < 0 || sat >= in.satellite_count) throw std::invalid_argument("OEM: no satellite " + std::to_string(sat));
        out << "\nMETA_START\n"
            << "OBJECT_NAME = " << in.object_prefix << "-" << sat << "\n"
            << "OBJECT_ID = " << in.object_prefix << "-" << sat << "\n"
            << "CENTER_NAME = EARTH\n"
            << "REF_FRAME = TOD\n"
            << "TIME_SYSTEM = UTC\n"
            << "START_TIME = " << stamps.front() << "\n"
            << "STOP_TIME = " << stamps.back() << "\n"
            << "META_STOP\n"
            << "COMMENT Mean equator and equinox of the epoch's date, labelled TOD (nutation, <= ~20 arcsec, not "
               "modelled); km, km/s\n";
        const auto s = static_cast<std::size_t>(sat);
        for (std::size_t k = 0; k < samples; ++k) {
            const double* p = &in.position_m[(k * n + s) * 3];
            const double* v = &in.velocity_m_s[(k * n + s) * 3];
            // 0.1 um and 0.1 nm/s: far finer than anything the model resolves.
            std::snprintf(line, sizeof line, "%s %.10f %.10f %.10f %.13f %.13f %.13f\n", stamps[k].c_str(), p[0] / 1e3,
                          p[1] / 1e3, p[2] / 1e3, v[0] / 1e3, v[1] / 1e3, v[2] / 1e3);
            out << line;
        }
    }
}

}  // namespace skyfabric::output
