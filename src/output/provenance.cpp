#include "output/provenance.hpp"

#include "build_info.hpp"
#include "output/sha256.hpp"
#include "scenario/settings_hash.hpp"
#include "version.hpp"

#include <ctime>

namespace skyfabric::output {

namespace {

std::string& recorded_command_line() {
    static std::string text;
    return text;
}

// POSIX shell quoting where an argument needs it, so that the line can be pasted back.
std::string quoted(const std::string& argument) {
    if (!argument.empty() && argument.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                        "_-+=.,:/@%^") == std::string::npos)
        return argument;
    std::string out = "'";
    for (const char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

void record_command_line(int argc, const char* const* argv) {
    std::string line;
    for (int i = 0; i < argc; ++i) line += (i ? " " : "") + quoted(argv[i]);
    recorded_command_line() = line;
}

Provenance provenance_of(const std::string& scenario_yaml) {
    return {skyfabric::version, build_info::git_commit, build_info::git_dirty, recorded_command_line(),
            sha256_hex(scenario_yaml), scenario_yaml, {}};
}

Provenance provenance_of(const scenario::Scenario& scenario) {
    Provenance p = provenance_of(scenario.yaml_text);
    p.settings_sha256 = scenario::settings_sha256(scenario);
    return p;
}

std::string build_description() {
    return std::string(skyfabric::version) + " (commit " + std::string(build_info::git_commit).substr(0, 12) +
           (build_info::git_dirty ? ", dirty)" : ")");
}

nlohmann::json provenance_json(const Provenance& p) {
    nlohmann::json j = {{"skyfabric_version", p.version}, {"git_commit", p.git_commit},
                        {"git_dirty", p.git_dirty},       {"command_line", p.command_line},
                        {"scenario_sha256", p.scenario_sha256}, {"scenario_yaml", p.scenario_yaml}};
    if (!p.settings_sha256.empty()) j["settings_sha256"] = p.settings_sha256;
    return j;
}

void write_provenance_attributes(Hdf5File& file, const Provenance& p) {
    file.set_attribute("skyfabric_version", p.version);
    file.set_attribute("git_commit", p.git_commit);
    file.set_attribute_bool("git_dirty", p.git_dirty);
    file.set_attribute("command_line", p.command_line);
    file.set_attribute("scenario_sha256", p.scenario_sha256);
    file.set_attribute("scenario_yaml", p.scenario_yaml);
    if (!p.settings_sha256.empty()) file.set_attribute("settings_sha256", p.settings_sha256);
    // CF conventions' global attributes: netCDF tools (xarray, ncdump, Panoply) read them.
    file.set_attribute("Conventions", std::string("CF-1.8"));
    file.set_attribute("source", "skyfabric " + build_description());
    file.set_attribute("history", utc_now_iso8601() + "Z: " + p.command_line);
}

std::string utc_now_iso8601() {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    return stamp;
}

}  // namespace skyfabric::output
