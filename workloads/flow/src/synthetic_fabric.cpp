#include <skyfabric/workloads/synthetic_fabric.hpp>

#include <skyfabric/workloads/csv_text.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <skyfabric/workloads/input_text.hpp>
#include <skyfabric/workloads/nearest_word.hpp>
#include <skyfabric/workloads/network.hpp>

namespace skyfabric::workloads {

namespace {

constexpr double speed_of_light_m_s = 299792458.0;

using csv::split;
using csv::to_integer;
using csv::to_number_in;
using csv::trim;

const std::string bw_range = csv::range_text(min_fabric_bw_gbps, max_fabric_bw_gbps) + " Gbit/s";
const std::string latency_range = csv::range_text(0.0, max_fabric_latency_ns) + " ns";

// " (did you mean 'x'?)" when a candidate is close, then the full list.
std::string suggestion(std::string_view got, const std::vector<std::string>& candidates) {
    const std::string near = nearest_word(got, candidates, TypoBound::candidate);
    std::string out;
    if (!near.empty()) out += " (did you mean '" + near + "'?)";
    out += "; expected one of ";
    for (std::size_t i = 0; i < candidates.size(); ++i) out += (i ? ", " : "") + candidates[i];
    return out;
}

std::vector<std::string> keys_for(FabricKind kind) {
    switch (kind) {
        case FabricKind::torus2d: return {"x", "y", "bw_gbps", "latency_ns"};
        case FabricKind::edge_list: return {};
        case FabricKind::switch_star: return {"p", "leaf", "bw_gbps", "uplink_gbps", "latency_ns"};
        default: return {"p", "bw_gbps", "latency_ns"};
    }
}

// Shortest text that parses back to exactly v.
std::string format_number(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc{} ? std::string(buf, end) : std::to_string(v);
}

// For people: 15 significant digits, so 500e-9 s reads back as 500 ns.
std::string format_readable(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

links::Link make_link(std::int32_t a, std::int32_t b, double capacity_bps, double latency_s) {
    links::Link l;
    l.source = std::min(a, b);
    l.target = std::max(a, b);
    l.capacity_bps = capacity_bps;
    l.latency_s = latency_s;
    l.distance_m = latency_s * speed_of_light_m_s;
    return l;
}

void sort_links(links::Topology& t) {
    std::sort(t.links.begin(), t.links.end(), [](const links::Link& a, const links::Link& b) {
        return a.source != b.source ? a.source < b.source : a.target < b.target;
    });
}

// Names an edge list's text in errors: the name the caller gave, else the file.
const std::string& csv_source(const FabricSpec& spec) { return spec.csv_name.empty() ? spec.file_path : spec.csv_name; }

}  // namespace

FabricKind parse_fabric_kind(std::string_view name) {
    const std::string_view n = trim(name);
    if (const auto k = fabric_kind_names.value(n)) return *k;
    throw FabricSpecError("topology: unknown fabric kind " + quoted_input(n) + suggestion(n, fabric_kind_names.names()));
}

FabricSpec parse_fabric_spec(std::string_view text) {
    const std::string_view spec = trim(text);
    const auto colon = spec.find(':');
    const std::string_view kind_name = trim(spec.substr(0, colon));
    if (kind_name.empty())
        throw FabricSpecError("topology " + quoted_input(spec) +
                              ": expected KIND:key=value,… with KIND one of ring, switch, torus2d, "
                              "fully_connected, file");
    FabricSpec out;
    out.kind = parse_fabric_kind(kind_name);
    const std::string kind = to_string(out.kind);
    const std::string_view rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);

    if (out.kind == FabricKind::edge_list) {
        const std::string_view path = trim(rest);
        if (path.empty()) throw FabricSpecError("file: expected a path to an edge-list CSV after 'file:'");
        out.file_path = std::string(path);
        out.csv_name = out.file_path;
        return out;
    }

    const auto allowed = keys_for(out.kind);
    std::set<std::string, std::less<>> given;
    if (!trim(rest).empty()) {
        for (std::string_view item : split(rest, ',')) {
            item = trim(item);
            if (item.empty()) continue;
            const auto eq = item.find('=');
            const std::string key(trim(item.substr(0, eq)));
            if (eq == std::string_view::npos)
                throw FabricSpecError(kind + ": " + quoted_input(item) + ": expected key=value");
            const std::string_view value = trim(item.substr(eq + 1));
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
                throw FabricSpecError(kind + ": unknown key " + quoted_input(key) + suggestion(key, allowed));
            if (!given.insert(key).second) throw FabricSpecError(kind + ": " + key + ": given twice");
            if (key == "bw_gbps" || key == "uplink_gbps") {
                const auto v = to_number_in(value, min_fabric_bw_gbps, max_fabric_bw_gbps);
                if (!v)
                    throw FabricSpecError(kind + ": " + key + ": expected a finite number in " + bw_range + ", got " +
                                          quoted_input(value));
                (key == "bw_gbps" ? out.bandwidth_bps : out.uplink_bps) = *v * 1e9;
            } else if (key == "latency_ns") {
                const auto v = to_number_in(value, 0.0, max_fabric_latency_ns);
                if (!v)
                    throw FabricSpecError(kind + ": latency_ns: expected a finite number in " + latency_range + ", got " +
                                          quoted_input(value));
                out.latency_s = *v * 1e-9;
            } else {
                const auto v = to_integer(value);
                const std::int64_t minimum = key == "p" ? 2 : 1;
                if (!v || *v < minimum)
                    throw FabricSpecError(kind + ": " + key + ": expected an integer >= " + std::to_string(minimum) +
                                          ", got " + quoted_input(value));
                (key == "p" ? out.p : key == "x" ? out.x : key == "leaf" ? out.leaf : out.y) = static_cast<std::int32_t>(*v);
            }
        }
    }
    for (const char* required : {"p", "x", "y"}) {
        if (std::find(allowed.begin(), allowed.end(), required) != allowed.end() && !given.count(required))
            throw FabricSpecError(kind + ": " + required + ": missing (e.g. '" +
                                  (out.kind == FabricKind::torus2d ? "torus2d:x=8,y=8" : kind + ":p=16") +
                                  ",bw_gbps=400,latency_ns=500')");
    }
    return out;
}

links::Topology parse_edge_list_csv(std::string_view text, std::string_view name_view) {
    const std::string name = name_view.empty() ? std::string("edge list") : std::string(name_view);
    links::Topology t;
    std::int32_t declared_nodes = -1;
    int col_source = -1, col_target = -1, col_bw = -1, col_latency = -1;
    std::size_t columns = 0;
    bool have_header = false;
    std::set<std::pair<std::int32_t, std::int32_t>> seen;
    std::int32_t max_id = -1;
    std::size_t line_no = 0;
    for (std::string_view line : split(csv::without_bom(text), '\n')) {
        ++line_no;
        const std::string line_at = name + ":" + std::to_string(line_no) + ":";
        const std::string where = line_at + " ";
        if (trim(line).empty()) continue;
        if (trim(line).front() == '#') {
            std::string_view c = trim(trim(line).substr(1));
            if (c.substr(0, 11) == "node_count=") {
                const auto v = to_integer(c.substr(11));
                if (!v || *v < 0) throw FabricSpecError(where + "node_count: expected an integer >= 0, got " +
                                                        quoted_input(trim(c.substr(11))));
                declared_nodes = static_cast<std::int32_t>(*v);
            }
            continue;
        }
        const auto cells = split(line, ',');
        const auto cell_column = csv::cell_columns(cells);
        // name:line:column: for the cell in column col
        const auto at = [&](std::size_t col) { return line_at + std::to_string(cell_column[col]) + ": "; };
        if (!have_header) {
            const std::vector<std::string> wanted{"source", "target", "bw_gbps", "latency_ns"};
            // A first line naming none of the columns is not an edge list (file:/etc/shadow): the
            // message must not echo what the file holds.
            if (std::none_of(cells.begin(), cells.end(), [&](std::string_view c) {
                    return std::find(wanted.begin(), wanted.end(), std::string(trim(c))) != wanted.end();
                }))
                throw FabricSpecError(where + "not an edge list: its first line is not the header source,target,bw_gbps,latency_ns");
            for (std::size_t i = 0; i < cells.size(); ++i) {
                const std::string cell(trim(cells[i]));
                int* slot = cell == "source"       ? &col_source
                            : cell == "target"     ? &col_target
                            : cell == "bw_gbps"    ? &col_bw
                            : cell == "latency_ns" ? &col_latency
                                                   : nullptr;
                if (!slot) throw FabricSpecError(at(i) + "header: unknown column " + quoted_input(cell) + suggestion(cell, wanted));
                if (*slot >= 0) throw FabricSpecError(at(i) + "header: column '" + cell + "' given twice");
                *slot = static_cast<int>(i);
            }
            for (std::size_t i = 0; i < wanted.size(); ++i) {
                const int slot = i == 0 ? col_source : i == 1 ? col_target : i == 2 ? col_bw : col_latency;
                if (slot < 0)
                    throw FabricSpecError(where + "header: missing column '" + wanted[i] +
                                          "' (expected source,target,bw_gbps,latency_ns)");
            }
            columns = cells.size();
            have_header = true;
            continue;
        }
        if (cells.size() != columns)
            throw FabricSpecError(where + "expected " + std::to_string(columns) + " comma-separated values, got " +
                                  std::to_string(cells.size()));
        const auto cell = [&](int col) { return cells[static_cast<std::size_t>(col)]; };
        const auto refuse = [&](int col, const char* key, const std::string& expected) {
            throw FabricSpecError(at(static_cast<std::size_t>(col)) + "key '" + key + "': expected " + expected + ", got " +
                                  quoted_input(trim(cell(col))));
        };
        auto node = [&](int col, const char* key) {
            const auto v = to_integer(cell(col));
            if (!v || *v < 0) refuse(col, key, "a node id (integer >= 0)");
            return static_cast<std::int32_t>(*v);
        };
        const std::int32_t a = node(col_source, "source");
        const std::int32_t b = node(col_target, "target");
        if (a == b)
            throw FabricSpecError(at(static_cast<std::size_t>(col_target)) +
                                  "key 'target': a link needs two different nodes, got " + std::to_string(a) + " twice");
        const auto bw = to_number_in(cell(col_bw), min_fabric_bw_gbps, max_fabric_bw_gbps);
        if (!bw) refuse(col_bw, "bw_gbps", "a finite number in " + bw_range);
        const auto lat = to_number_in(cell(col_latency), 0.0, max_fabric_latency_ns);
        if (!lat) refuse(col_latency, "latency_ns", "a finite number in " + latency_range);
        if (!seen.insert({std::min(a, b), std::max(a, b)}).second)
            throw FabricSpecError(where + "link " + std::to_string(std::min(a, b)) + "-" + std::to_string(std::max(a, b)) +
                                  " listed twice");
        t.links.push_back(make_link(a, b, *bw * 1e9, *lat * 1e-9));
        max_id = std::max({max_id, a, b});
    }
    if (!have_header)
        throw FabricSpecError(name + ": expected a header line 'source,target,bw_gbps,latency_ns' and one link per line");
    if (declared_nodes >= 0 && declared_nodes <= max_id)
        throw FabricSpecError(name + ": node_count=" + std::to_string(declared_nodes) + " but node id " +
                              std::to_string(max_id) + " is used");
    t.node_count = declared_nodes >= 0 ? declared_nodes : max_id + 1;
    if (t.node_count < 2) throw FabricSpecError(name + ": expected at least one link between two nodes");
    sort_links(t);
    return t;
}

std::string edge_list_csv(const links::Topology& topology) {
    std::string out = "# node_count=" + std::to_string(topology.node_count) + "\nsource,target,bw_gbps,latency_ns\n";
    for (const auto& l : topology.links) {
        out += std::to_string(l.source) + "," + std::to_string(l.target) + "," + format_number(l.capacity_bps / 1e9) +
               "," + format_number(l.latency_s * 1e9) + "\n";
    }
    return out;
}

void check_fabric_spec(const FabricSpec& spec) {
    const std::string kind = to_string(spec.kind);
    if (spec.kind == FabricKind::edge_list) {
        (void)parse_edge_list_csv(spec.csv_text, csv_source(spec));
        return;
    }
    const double bw_gbps = spec.bandwidth_bps / 1e9, latency_ns = spec.latency_s * 1e9;
    if (!(bw_gbps >= min_fabric_bw_gbps && bw_gbps <= max_fabric_bw_gbps))
        throw FabricSpecError(kind + ": bw_gbps: expected a finite number in " + bw_range + ", got " + format_readable(bw_gbps));
    if (!(latency_ns >= 0.0 && latency_ns <= max_fabric_latency_ns))
        throw FabricSpecError(kind + ": latency_ns: expected a finite number in " + latency_range + ", got " +
                              format_readable(latency_ns));
    if (spec.kind == FabricKind::torus2d) {
        if (spec.x < 1) throw FabricSpecError("torus2d: x: expected an integer >= 1, got " + std::to_string(spec.x));
        if (spec.y < 1) throw FabricSpecError("torus2d: y: expected an integer >= 1, got " + std::to_string(spec.y));
        if (static_cast<std::int64_t>(spec.x) * spec.y < 2)
            throw FabricSpecError("torus2d: x, y: expected at least two nodes (x·y >= 2)");
        if (static_cast<std::int64_t>(spec.x) * spec.y > std::numeric_limits<std::int32_t>::max())
            throw FabricSpecError("torus2d: x, y: x·y is too large for node ids");
    } else if (spec.p < 2) {
        throw FabricSpecError(kind + ": p: expected an integer >= 2, got " + std::to_string(spec.p));
    }
    if (spec.kind != FabricKind::switch_star && (spec.leaf != 0 || spec.uplink_bps != 0.0))
        throw FabricSpecError(kind + ": leaf, uplink_gbps: a two-level switch's keys (switch:p=…,leaf=…)");
    if (spec.kind == FabricKind::switch_star) {
        if (spec.leaf < 0 || (spec.leaf > 0 && spec.leaf >= spec.p))
            throw FabricSpecError("switch: leaf: expected an integer in [1, p) ranks per leaf switch (leave it out for one switch), got " +
                                  std::to_string(spec.leaf));
        const double up_gbps = spec.uplink_bps / 1e9;
        if (spec.uplink_bps != 0.0 && !(up_gbps >= min_fabric_bw_gbps && up_gbps <= max_fabric_bw_gbps))
            throw FabricSpecError("switch: uplink_gbps: expected a finite number in " + bw_range + ", got " + format_readable(up_gbps));
        if (spec.uplink_bps != 0.0 && spec.leaf == 0) throw FabricSpecError("switch: uplink_gbps: needs leaf (a two-level switch)");
    }
}

std::int32_t fabric_ranks(const FabricSpec& spec) {
    if (spec.kind == FabricKind::edge_list)
        return parse_edge_list_csv(spec.csv_text, csv_source(spec)).node_count;
    check_fabric_spec(spec);
    return spec.kind == FabricKind::torus2d ? spec.x * spec.y : spec.p;
}

std::int64_t fabric_link_count(const FabricSpec& spec) {
    // Around a cycle of n nodes: n links, but one for n = 2 (both neighbours are the same node)
    // and none for n = 1.
    auto cycle = [](std::int64_t n) -> std::int64_t { return n < 2 ? 0 : n == 2 ? 1 : n; };
    const std::int64_t p = spec.p, x = spec.x, y = spec.y;
    switch (spec.kind) {
        case FabricKind::ring: return cycle(p);
        case FabricKind::switch_star: return std::max<std::int64_t>(p, 0) + (spec.leaf > 0 ? (p + spec.leaf - 1) / spec.leaf : 0);
        case FabricKind::fully_connected: return p < 2 ? 0 : p * (p - 1) / 2;
        case FabricKind::torus2d: return x < 1 || y < 1 ? 0 : y * cycle(x) + x * cycle(y);
        case FabricKind::edge_list:
            return static_cast<std::int64_t>(parse_edge_list_csv(spec.csv_text, csv_source(spec)).links.size());
    }
    return 0;
}

namespace {

// A two-level switch's leaf-to-spine link: given, or non-blocking (leaf × a rank's link).
double uplink_bps(const FabricSpec& spec) { return spec.uplink_bps > 0.0 ? spec.uplink_bps : spec.leaf * spec.bandwidth_bps; }

std::string describe(const FabricSpec& spec) {
    if (spec.kind == FabricKind::edge_list) return "file:" + (spec.file_path.empty() ? spec.csv_name : spec.file_path);
    const std::string counts = spec.kind == FabricKind::torus2d
                                   ? "torus2d:x=" + std::to_string(spec.x) + ",y=" + std::to_string(spec.y)
                                   : to_string(spec.kind) + ":p=" + std::to_string(spec.p);
    const std::string levels = spec.kind == FabricKind::switch_star && spec.leaf > 0
                                   ? ",leaf=" + std::to_string(spec.leaf) + ",uplink_gbps=" + format_readable(uplink_bps(spec) / 1e9)
                                   : "";
    return counts + levels + ",bw_gbps=" + format_readable(spec.bandwidth_bps / 1e9) +
           ",latency_ns=" + format_readable(spec.latency_s * 1e9);
}

}  // namespace

std::string fabric_description(const FabricSpec& spec) {
    check_fabric_spec(spec);
    return describe(spec);
}

Fabric make_fabric(const FabricSpec& spec) {
    if (spec.kind != FabricKind::edge_list) check_fabric_spec(spec);  // an edge list is checked as it is parsed below
    Fabric f;
    f.spec = spec;
    f.spec.csv_text.clear();
    f.description = describe(spec);
    links::Topology& t = f.topology;
    const double B = spec.bandwidth_bps;
    const double a = spec.latency_s;
    auto add = [&](std::int32_t u, std::int32_t v) {
        if (u != v) t.links.push_back(make_link(u, v, B, a));
    };
    switch (spec.kind) {
        case FabricKind::ring:
            t.node_count = spec.p;
            for (std::int32_t i = 0; i < spec.p; ++i) add(i, (i + 1) % spec.p);
            f.ranks = spec.p;
            f.placement = identity_placement(f.ranks);
            break;
        case FabricKind::switch_star:
            if (spec.leaf > 0) {
                // Two levels: each rank to its leaf switch, each leaf to the one spine.
                const std::int32_t leaves = (spec.p + spec.leaf - 1) / spec.leaf, spine = spec.p + leaves;
                t.node_count = spine + 1;
                for (std::int32_t i = 0; i < spec.p; ++i) add(i, spec.p + i / spec.leaf);
                for (std::int32_t l = 0; l < leaves; ++l) t.links.push_back(make_link(spec.p + l, spine, uplink_bps(spec), a));
            } else {
                t.node_count = spec.p + 1;
                for (std::int32_t i = 0; i < spec.p; ++i) add(i, spec.p);
            }
            f.ranks = spec.p;
            f.placement = identity_placement(f.ranks);
            break;
        case FabricKind::fully_connected:
            t.node_count = spec.p;
            t.links.reserve(static_cast<std::size_t>(spec.p) * static_cast<std::size_t>(spec.p - 1) / 2);
            for (std::int32_t i = 0; i < spec.p; ++i)
                for (std::int32_t j = i + 1; j < spec.p; ++j) add(i, j);
            f.ranks = spec.p;
            f.placement = identity_placement(f.ranks);
            break;
        case FabricKind::torus2d: {
            const std::int32_t X = spec.x, Y = spec.y;
            t.node_count = X * Y;
            for (std::int32_t r = 0; r < Y; ++r)
                for (std::int32_t c = 0; c < X; ++c) {
                    const std::int32_t v = r * X + c;
                    add(v, r * X + (c + 1) % X);
                    add(v, ((r + 1) % Y) * X + c);
                }
            f.ranks = t.node_count;
            f.dims = {X, Y};
            // Boustrophedon: row 0 left to right, row 1 right to left, … Every consecutive
            // pair is one hop; the closing pair (last rank → rank 0) is one hop when Y is
            // even and two when Y is odd (both wrap-arounds).
            if (Y == 1 || X == 1) {
                f.placement = identity_placement(f.ranks);
            } else {
                for (std::int32_t r = 0; r < Y; ++r)
                    for (std::int32_t k = 0; k < X; ++k) f.placement.push_back(r * X + (r % 2 == 0 ? k : X - 1 - k));
            }
            break;
        }
        case FabricKind::edge_list: {
            t = parse_edge_list_csv(spec.csv_text, csv_source(spec));
            f.ranks = t.node_count;
            f.placement = ring_placement(build_network(t), f.ranks);
            break;
        }
    }
    sort_links(t);
    // A dimension two wide links the same pair twice (a ring of 2, a torus 2 across): keep one.
    // Copies are equal in every field, so which one stays does not matter.
    t.links.erase(std::unique(t.links.begin(), t.links.end(),
                              [](const links::Link& l, const links::Link& m) {
                                  return l.source == m.source && l.target == m.target;
                              }),
                  t.links.end());
    t.time_s = 0.0;
    return f;
}

std::vector<CollectiveTableRow> fabric_collective_table(const Fabric& fabric, CollectiveOp op, Algorithm algorithm,
                                                        std::span<const double> sizes_bytes, const FlowOptions& flow,
                                                        const ScheduleOptions& schedule, const FlowContext& context) {
    ScheduleOptions options = schedule;
    if (options.dims.empty()) options.dims = fabric.dims;
    const Placement placement(fabric.placement.begin(), fabric.placement.begin() + fabric.ranks);
    return collective_table(fabric.topology, placement, op, algorithm, sizes_bytes, flow, options, context);
}

}  // namespace skyfabric::workloads
