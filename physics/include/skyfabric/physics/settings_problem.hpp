#pragma once
// What is wrong with a settings struct, said once beside the struct in the library that owns it.
// Each library's `check(settings)` returns its problems; the library's entry points throw them
// (throw_problems) and the scenario loader reports each at the scenario key it read the field
// from (file:line:column, exit 2), so a constraint is written in one place and no run starts
// with settings its library would refuse later. Here, in the lowest library, for every library.
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace skyfabric::physics {

struct SettingsProblem {
    // The field as the struct names it, dotted into nested structs ("moe.expert_parallel");
    // the loader's table per section maps it to the scenario key.
    std::string key;
    // Said of the field, as the loader prints it after the scenario key ("must not exceed ...").
    std::string message;
};

using SettingsProblems = std::vector<SettingsProblem>;

// A number for a message, three significant digits ("1.2e+07" past a million): the loader's
// own figures read the same.
inline std::string format_setting(double x) {
    std::ostringstream out;
    out.precision(3);
    out << x;
    return out.str();
}

// Throws std::invalid_argument("what: key: message") for the first problem, if any: for a
// library entry point given settings that no loader has checked (a test, a tool).
inline void throw_problems(std::string_view what, const SettingsProblems& problems) {
    if (problems.empty()) return;
    const SettingsProblem& p = problems.front();
    throw std::invalid_argument(std::string(what) + ": " + p.key + ": " + p.message);
}

}  // namespace skyfabric::physics
