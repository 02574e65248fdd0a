#include "sweep/sweep_table.hpp"

#include "output/hdf5_file.hpp"
#include "output/output_folder.hpp"
#include "output/provenance.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <unistd.h>

namespace skyfabric::sweep {

namespace fs = std::filesystem;

nlohmann::json Row::to_json() const {
    return {{"index", index}, {"name", name}, {"status", status}, {"error", error}, {"wall_s", wall_s},
            {"summary", summary}};
}

Row Row::from_json(const nlohmann::json& j) {
    Row r;
    r.index = j.at("index").get<std::size_t>();
    r.name = j.at("name").get<std::string>();
    r.status = j.at("status").get<std::string>();
    r.error = j.at("error").get<std::string>();
    r.wall_s = j.at("wall_s").get<double>();
    r.summary = j.at("summary");
    return r;
}

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, double>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (prefix.empty() && it.key() == "complete") continue;
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
    } else if (j.is_boolean()) {
        out[prefix] = j.get<bool>() ? 1.0 : 0.0;
    } else if (j.is_number()) {
        out[prefix] = j.get<double>();
    }
}

std::string number_text(double x) {
    if (std::isnan(x)) return "nan";
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, x);
    return std::string(buffer, r.ptr);
}

std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

bool parse_number(const std::string& s, double& x) {
    if (s.empty()) return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The unit a leaf's name carries (units in names, see docs/scenario-reference.md), or "".
std::string units_of_name(const std::string& leaf) {
    const auto ends_with = [&](const std::string& suffix) {
        return leaf.size() > suffix.size() && leaf.compare(leaf.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    const auto starts_with = [&](const std::string& prefix) { return leaf.rfind(prefix, 0) == 0; };
    // Rates first: "tokens_per_s" is tokens per second, not seconds (the plain "_s" rule below), also
    // inside a name ("tokens_per_s_kept_median").
    if (leaf.find("tokens_per_s") != std::string::npos) return "tokens/s";
    if (ends_with("_bytes_per_token")) return "B/token";
    // Bytes: "gateway_bytes", "kv_bytes_moved", "bytes_retried".
    if (ends_with("_bytes") || starts_with("bytes_") || leaf.find("_bytes_") != std::string::npos || leaf == "bytes")
        return "B";
    // A dose ("dose_max_rad"): the summary's doses are in rad(Si), as result.h5's.
    if (starts_with("dose") && ends_with("_rad")) return "rad(Si)";
    static const std::vector<std::pair<std::string, std::string>> suffixes = {
        {"_rad_per_yr", "rad/yr"}, {"_per_year_m_s", "m/s per year"}, {"_kwh_per_satellite", "kWh"},
        {"_per_day", "1/day"}, {"_per_s", "1/s"}, {"_kg_m2", "kg/m^2"}, {"_B_s", "B/s"}, {"_m_s", "m/s"}, {"_bps", "bit/s"}, {"_gbps", "Gbit/s"},
        {"_mm_al", "mm"},     {"_dbm", "dBm"}, {"_db", "dB"},   {"_urad", "urad"}, {"_ghz", "GHz"}, {"_thz", "THz"},
        {"_nm", "nm"},        {"_km", "km"},   {"_deg", "deg"},  {"_kwh", "kWh"}, {"_w", "W"},      {"_k", "K"},
        {"_h", "h"},          {"_m", "m"},     {"_s", "s"}};
    for (const auto& [suffix, unit] : suffixes) {
        if (ends_with(suffix)) return unit;
    }
    return "";
}

// Components that are a figure's statistic or element, not a quantity of their own: a vector's
// element ("envelope_max_m.0"), a percentile ("ttft_s.p99"), the trials' statistics
// ("lost_s.faults.median", "goodput.mean_ci95.1").
bool statistic_or_element(const std::string& component) {
    static const std::set<std::string> statistics = {"mean", "median", "stddev", "min", "max", "interval", "mean_ci95"};
    if (component.empty() || statistics.count(component)) return true;
    const std::size_t digits = component[0] == 'p' ? 1 : 0;  // p50, p90, p99
    return component.size() > digits &&
           std::all_of(component.begin() + static_cast<std::ptrdiff_t>(digits), component.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The unit of a sweep column (a summary.json path flattened with dots): the unit of the quantity it
// is a statistic or element of ("inference.routings.local.ttft_s.p99": s), whose name may end in
// "_interval" ("radiation.events_per_day_interval.0": 1/day); a figure broken down by cause under a
// quantity with a unit has that unit ("radiation.monte_carlo.lost_s.faults.median": s).
std::string units_of(const std::string& column) {
    std::vector<std::string> components;
    for (std::size_t start = 0;;) {
        const std::size_t dot = column.find('.', start);
        components.push_back(column.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    while (components.size() > 1 && statistic_or_element(components.back())) components.pop_back();
    std::string leaf = components.back();
    const std::string interval = "_interval";
    if (leaf.size() > interval.size() && leaf.compare(leaf.size() - interval.size(), interval.size(), interval) == 0)
        leaf.resize(leaf.size() - interval.size());
    std::string unit = units_of_name(leaf);
    if (unit.empty() && components.size() > 1) unit = units_of_name(components[components.size() - 2]);
    return unit;
}

void write_string_dataset(hid_t file, const std::string& path, const std::vector<std::string>& values) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    const hsize_t dims[1] = {values.size()};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t set = H5Dcreate2(file, path.c_str(), type, space, output::link_create_properties(), H5P_DEFAULT,
                                 H5P_DEFAULT);
    std::vector<const char*> pointers;
    for (const auto& v : values) pointers.push_back(v.c_str());
    const herr_t status =
        set < 0 ? -1 : (values.empty() ? 0 : H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()));
    if (set >= 0) H5Dclose(set);
    H5Sclose(space);
    H5Tclose(type);
    output::check(status, "writing " + path);
}

}  // namespace

std::map<std::string, double> flatten_metrics(const nlohmann::json& summary) {
    std::map<std::string, double> out;
    if (summary.is_object()) flatten(summary, "", out);
    return out;
}

Table make_table(const TableInput& in) {
    std::vector<const Row*> rows;
    for (const auto& r : in.rows) rows.push_back(&r);
    std::sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) { return a->index < b->index; });

    Table t;
    t.columns = {"index", "name", "status", "error", "point_wall_s"};
    std::set<std::string> used(t.columns.begin(), t.columns.end());
    auto add_column = [&](const std::string& c) {
        if (used.insert(c).second) t.columns.push_back(c);
    };
    const std::size_t fixed = t.columns.size();
    for (const auto& a : in.axes) add_column(axis_column(a));
    const std::size_t axes_end = t.columns.size();
    for (const Row* r : rows) {
        for (const auto& d : in.points->at(r->index).derived) add_column(d.path);
    }
    const std::size_t derived_end = t.columns.size();
    std::vector<std::map<std::string, double>> metrics;
    for (const Row* r : rows) {
        metrics.push_back(flatten_metrics(r->summary));
        for (const auto& [name, value] : metrics.back()) add_column(name);
    }

    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Row& r = *rows[k];
        const Point& p = in.points->at(r.index);
        std::vector<std::string> cells{std::to_string(r.index), r.name, r.status, one_line(r.error),
                                       number_text(r.wall_s)};
        for (std::size_t c = fixed; c < t.columns.size(); ++c) {
            const std::string& column = t.columns[c];
            std::string cell;
            if (c < axes_end) {
                for (std::size_t i = 0; i < in.axes.size(); ++i) {
                    if (axis_column(in.axes[i]) == column) cell = p.values[i];
                }
            } else if (c < derived_end) {
                for (const auto& d : p.derived) {
                    if (d.path == column) cell = d.value;
                }
            } else {
                const auto it = metrics[k].find(column);
                if (it != metrics[k].end()) cell = number_text(it->second);
            }
            cells.push_back(cell);
        }
        t.cells.push_back(std::move(cells));
    }
    return t;
}

void write_table(const fs::path& dir, const TableInput& in) {
    const Table t = make_table(in);

    // sweep.csv
    const fs::path csv = dir / "sweep.csv";
    {
        std::ostringstream out;
        for (std::size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << csv_field(t.columns[c]);
        out << "\n";
        for (const auto& row : t.cells) {
            for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
            out << "\n";
        }
        output::write_file_atomically(csv, out.str());
    }

    // sweep.h5: one dataset per column under /table, float64 where every cell is a
    // number (empty cells NaN), UTF-8 strings otherwise.
    output::FileReplacement h5(dir / "sweep.h5");  // its temporary is removed if this throws
    {
        output::Hdf5File file(h5.temporary_for_named_writer());
        output::write_provenance_attributes(file, output::provenance_of(in.scenario_yaml));
        file.set_attribute("rows", static_cast<std::int64_t>(t.cells.size()));
        file.set_attribute_bool("complete", in.complete);
        std::string names;
        for (const auto& c : t.columns) names += (names.empty() ? "" : "\n") + c;
        file.set_attribute("columns", names);
        // The swept keys, newline-separated, in the sweep's axis order: what a gridded view of the
        // table is indexed by (docs/sweeps.md, "sweep.h5 as a grid").
        std::string swept;
        for (const auto& axis : in.axes) swept += (swept.empty() ? "" : "\n") + axis.key;
        file.set_attribute("swept_keys", swept);
        for (std::size_t c = 0; c < t.columns.size(); ++c) {
            const std::string& column = t.columns[c];
            const std::string path = "/table/" + column;
            bool numeric = c != 1 && c != 2 && c != 3;  // name, status, error are text
            std::vector<double> numbers;
            std::vector<std::string> texts;
            for (const auto& row : t.cells) {
                double x = std::nan("");
                if (!row[c].empty() && row[c] != "nan" && !parse_number(row[c], x)) numeric = false;
                numbers.push_back(x);
                texts.push_back(row[c]);
            }
            if (numeric) {
                file.write_array(path, numbers, {numbers.size()}, units_of(column));
            } else {
                write_string_dataset(file.id(), path, texts);
            }
        }
        // netCDF dimensions: every column runs along the points, indexed by /table/index, so
        // xarray.open_dataset(sweep.h5, engine="h5netcdf", group="table") names the axis.
        if (!t.cells.empty() && !t.columns.empty() && t.columns[0] == "index") {
            file.make_coordinate("/table/index");
            file.attach_dimension_to_group("/table", "/table/index");
        }
        file.flush();
    }
    h5.commit();
}

}  // namespace skyfabric::sweep
