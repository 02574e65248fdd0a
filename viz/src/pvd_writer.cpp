#include <skyfabric/viz/pvd_writer.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace skyfabric::viz {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Shortest decimal text that reads back to the same double.
std::string format_double(double value) {
    std::array<char, 32> buffer{};
    auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    if (ec != std::errc{}) {
        throw std::runtime_error("skyfabric::viz: cannot format a time value");
    }
    return std::string(buffer.data(), end);
}

std::string xml_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

template <typename T>
void check_length(std::span<const T> values, std::size_t expected, const char* name) {
    if (!values.empty() && values.size() != expected) {
        throw std::invalid_argument(std::string("skyfabric::viz: ") + name + " has " +
                                    std::to_string(values.size()) + " values, expected " +
                                    std::to_string(expected) + " (or none)");
    }
}

[[noreturn]] void throw_io(const std::string& what, const std::filesystem::path& path, int error) {
    throw std::runtime_error("skyfabric::viz: cannot " + what + " " + path.string() + ": " + std::strerror(error));
}

void write_all(int fd, const char* data, std::size_t size, off_t at, const std::filesystem::path& path) {
    while (size > 0) {
        const ssize_t n = ::pwrite(fd, data, size, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw_io("write", path, n < 0 ? errno : ENOSPC);
        data += n;
        at += n;
        size -= static_cast<std::size_t>(n);
    }
}

void read_all(int fd, char* data, std::size_t size, off_t at, const std::filesystem::path& path) {
    while (size > 0) {
        const ssize_t n = ::pread(fd, data, size, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw_io("read", path, n < 0 ? errno : EIO);
        data += n;
        at += n;
        size -= static_cast<std::size_t>(n);
    }
}

// A file descriptor closed at the end of the scope.
struct File {
    int fd;
    File(const std::filesystem::path& path, int flags) : fd(::open(path.c_str(), flags | O_CLOEXEC, 0644)) {
        if (fd < 0) throw_io("open", path, errno);
    }
    ~File() { ::close(fd); }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
};

// Writes bytes as directory/file through a temporary name and rename(2), so no reader ever sees
// half a frame.
void write_file_atomically(const std::string& bytes, const std::filesystem::path& directory, const std::string& file) {
    const std::filesystem::path final_path = directory / file;
    const std::filesystem::path temp_path = directory / ("." + file + ".tmp");
    try {
        const File out(temp_path, O_WRONLY | O_CREAT | O_TRUNC);
        write_all(out.fd, bytes.data(), bytes.size(), 0, temp_path);
    } catch (...) {
        ::unlink(temp_path.c_str());
        throw;
    }
    if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp_path.c_str());
        throw_io("rename " + temp_path.string() + " to", final_path, error);
    }
}

// One VTK XML PolyData file (format 1.0, the version VTK 9 writes) with every array in the appended
// section as raw little-endian bytes, each block preceded by its byte count as UInt64. Written by hand
// rather than through vtkXMLPolyDataWriter: one buffer and one write per frame instead of a write and a
// seek per block, no compression (these frames compress ~1.3:1 and zlib was most of their cost), and
// the byte position of every array is known, so what is learnt after the run is patched in place.
class VtpBuilder {
public:
    enum class Section { field, point, cell, points, verts, lines, strips, polys };

    // Appends one array; returns the position of its first value within the appended data.
    template <class T>
    std::size_t add(Section section, const char* name, const std::vector<T>& values, int components = 1) {
        static_assert(std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>);
        const char* type = std::is_same_v<T, double> ? "Float64" : std::is_same_v<T, std::int32_t> ? "Int32" : "Int64";
        std::string& xml = xml_[static_cast<std::size_t>(section)];
        xml += "        <DataArray type=\"";
        xml += type;
        xml += "\" Name=\"";
        xml += name;
        xml += '"';
        if (components != 1) xml += " NumberOfComponents=\"" + std::to_string(components) + '"';
        if (section == Section::field) xml += " NumberOfTuples=\"" + std::to_string(values.size()) + '"';
        xml += " format=\"appended\" offset=\"" + std::to_string(data_.size()) + "\"/>\n";
        const std::uint64_t bytes = values.size() * sizeof(T);
        data_.append(reinterpret_cast<const char*>(&bytes), sizeof bytes);
        const std::size_t at = data_.size();
        data_.append(reinterpret_cast<const char*>(values.data()), bytes);
        return at;
    }
    // A string array, inline in ASCII as VTK's own writer puts one: each string's character codes,
    // each string ended by a 0 (string arrays have no appended raw form to patch anyway).
    void add_strings(Section section, const char* name, const std::vector<std::string>& values) {
        std::string& xml = xml_[static_cast<std::size_t>(section)];
        xml += "        <Array type=\"String\" Name=\"";
        xml += name;
        xml += "\" NumberOfTuples=\"" + std::to_string(values.size()) + "\" format=\"ascii\">\n         ";
        for (const std::string& v : values) {
            for (const char c : v) xml += ' ' + std::to_string(static_cast<unsigned char>(c));
            xml += " 0";
        }
        xml += "\n        </Array>\n";
    }
    void set_scalars(Section section, const char* name) { scalars_[static_cast<std::size_t>(section)] = name; }

    // The whole file; `data_start` receives the file position of the appended data's first byte.
    std::string finish(std::size_t points, std::size_t verts, std::size_t lines, std::size_t& data_start) const {
        std::string out =
            "<?xml version=\"1.0\"?>\n"
            "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
            "  <PolyData>\n";
        const auto block = [&](Section s, const char* tag) {
            const auto i = static_cast<std::size_t>(s);
            out += std::string("      <") + tag;
            if (!scalars_[i].empty()) out += " Scalars=\"" + scalars_[i] + '"';
            out += ">\n" + xml_[i] + "      </" + tag + ">\n";
        };
        if (!xml_[0].empty()) out += "    <FieldData>\n" + xml_[0] + "    </FieldData>\n";
        out += "    <Piece NumberOfPoints=\"" + std::to_string(points) + "\" NumberOfVerts=\"" + std::to_string(verts) +
               "\" NumberOfLines=\"" + std::to_string(lines) + "\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n";
        block(Section::point, "PointData");
        block(Section::cell, "CellData");
        block(Section::points, "Points");
        block(Section::verts, "Verts");
        block(Section::lines, "Lines");
        block(Section::strips, "Strips");
        block(Section::polys, "Polys");
        out += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
        data_start = out.size();
        out += data_;
        out += "\n  </AppendedData>\n</VTKFile>\n";
        return out;
    }

private:
    std::array<std::string, 8> xml_;
    std::array<std::string, 8> scalars_;
    std::string data_;
};

using Section = VtpBuilder::Section;

// Cell connectivity of `count` cells of `size` points each: the file stores each cell's end offset.
void add_cells(VtpBuilder& vtp, Section section, std::vector<std::int64_t> connectivity, std::size_t size) {
    std::vector<std::int64_t> offsets(size > 0 ? connectivity.size() / size : 0);
    for (std::size_t c = 0; c < offsets.size(); ++c) offsets[c] = static_cast<std::int64_t>((c + 1) * size);
    vtp.add(section, "connectivity", connectivity);
    vtp.add(section, "offsets", offsets);
}

// Every cell section a PolyData piece has; strips and polys are empty.
void add_topology(VtpBuilder& vtp, std::size_t vertices, const std::vector<std::int64_t>& line_ends) {
    std::vector<std::int64_t> verts(vertices);
    for (std::size_t i = 0; i < vertices; ++i) verts[i] = static_cast<std::int64_t>(i);
    add_cells(vtp, Section::verts, std::move(verts), 1);
    add_cells(vtp, Section::lines, line_ends, 2);
    add_cells(vtp, Section::strips, {}, 1);
    add_cells(vtp, Section::polys, {}, 1);
}

std::vector<double> values_or_zeros(std::span<const double> values, std::size_t count) {
    return values.empty() ? std::vector<double>(count, 0.0) : std::vector<double>(values.begin(), values.end());
}

// ParaView's own name for a dataset's time, so a single .vtp opened alone still knows it.
void add_time_value(VtpBuilder& vtp, double time_s) { vtp.add(Section::field, "TimeValue", std::vector<double>{time_s}); }

}  // namespace

PvdSeriesWriter::PvdSeriesWriter(std::filesystem::path directory, std::string basename)
    : directory_(std::move(directory)), basename_(std::move(basename)) {
    if (basename_.empty() || basename_.find('/') != std::string::npos) {
        throw std::invalid_argument("skyfabric::viz: PvdSeriesWriter basename must be a plain "
                                    "file name, got '" + basename_ + "'");
    }
    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    if (ec || !std::filesystem::is_directory(directory_)) {
        throw std::runtime_error("skyfabric::viz: cannot create directory " + directory_.string() +
                                 (ec ? ": " + ec.message() : std::string()));
    }
    write_pvd();  // an empty collection from the start: a run stopped before its first frame still opens
}

std::filesystem::path PvdSeriesWriter::pvd_path() const {
    return directory_ / (basename_ + ".pvd");
}

void PvdSeriesWriter::write_frame(const SatelliteFrame& frame, const LinkFrameData& links) {
    const std::size_t n = frame.positions_m.size();
    if (!std::isfinite(frame.time_s)) {
        throw std::invalid_argument("skyfabric::viz: frame time_s is not finite");
    }
    check_length(frame.status, n, "status");
    check_length(frame.dose_rad, n, "dose_rad");
    check_length(frame.delta_v_m_s, n, "delta_v_m_s");
    check_length(frame.nearest_neighbour_m, n, "nearest_neighbour_m");
    check_length(frame.cluster_lvlh_m, n, "cluster_lvlh_m");
    const std::size_t link_count = links.topology ? links.topology->links.size() : 0;
    check_length(links.utilisation, link_count, "utilisation");
    check_length(links.cluster_of, n, "cluster_of");

    std::vector<double> points(3 * n);
    std::vector<std::int32_t> ids(n), status(n, static_cast<std::int32_t>(SatelliteStatus::ok));
    for (std::size_t i = 0; i < n; ++i) {
        const Eigen::Vector3d& p = frame.positions_m[i];
        if (!p.allFinite()) {
            throw std::invalid_argument("skyfabric::viz: position of satellite " +
                                        std::to_string(i) + " is not finite at t = " +
                                        format_double(frame.time_s) + " s");
        }
        points[3 * i] = p.x();
        points[3 * i + 1] = p.y();
        points[3 * i + 2] = p.z();
        ids[i] = static_cast<std::int32_t>(i);
        if (!frame.status.empty()) status[i] = frame.status[i];
    }

    // Cell data: the vertex cells first (NaN / -1: not links), then one line per link.
    const std::size_t cells = n + link_count;
    std::vector<double> capacity(cells, kNaN), margin(cells, kNaN), utilisation(cells, kNaN), distance(cells, kNaN);
    std::vector<std::int32_t> source(cells, -1), target(cells, -1), link_class(cells, -1);
    // 1 on a link a radiation fault (terminal outage) holds down; set after the run (rewrite_after_run).
    std::vector<std::int32_t> fault_down(cells, 0);
    std::vector<std::int64_t> line_ends(2 * link_count);
    for (std::size_t k = 0; k < link_count; ++k) {
        const links::Link& link = links.topology->links[k];
        if (link.source < 0 || link.target < 0 || static_cast<std::size_t>(link.source) >= n ||
            static_cast<std::size_t>(link.target) >= n) {
            throw std::invalid_argument(
                "skyfabric::viz: link " + std::to_string(k) + " (" +
                std::to_string(link.source) + ", " + std::to_string(link.target) +
                ") names a satellite outside 0.." + std::to_string(n) + " at t = " +
                format_double(frame.time_s) + " s");
        }
        line_ends[2 * k] = link.source;
        line_ends[2 * k + 1] = link.target;
        const std::size_t cell = n + k;
        capacity[cell] = link.capacity_bps;
        margin[cell] = link.margin_db;
        utilisation[cell] = links.utilisation.empty() ? 0.0 : links.utilisation[k];
        distance[cell] = link.distance_m;
        source[cell] = link.source;
        target[cell] = link.target;
        // 0 intra-cluster, 1 gateway; only for a constellation (one cluster writes what it always did).
        if (!links.cluster_of.empty())
            link_class[cell] = links.cluster_of[link.source] != links.cluster_of[link.target] ? 1 : 0;
    }

    VtpBuilder vtp;
    add_time_value(vtp, frame.time_s);
    Patchable patch;
    patch.satellites = n;
    patch.cells = cells;
    vtp.add(Section::point, "id", ids);
    patch.status_at = vtp.add(Section::point, "status", status);
    // The status values' names, value by value: the renderer names the colours from the file.
    std::vector<std::string> status_names;
    for (std::size_t v = 0; v < links::satellite_status_names.size(); ++v)
        status_names.emplace_back(links::satellite_status_names.name(static_cast<SatelliteStatus>(v)));
    vtp.add_strings(Section::field, "status_names", status_names);
    vtp.add(Section::point, "dose_rad", values_or_zeros(frame.dose_rad, n));
    vtp.add(Section::point, "delta_v_m_s", values_or_zeros(frame.delta_v_m_s, n));
    vtp.add(Section::point, "nearest_neighbour_m", values_or_zeros(frame.nearest_neighbour_m, n));
    // A constellation: each satellite's cluster (scripts/render --cluster N draws one).
    if (!links.cluster_of.empty())
        vtp.add(Section::point, "cluster_of", std::vector<std::int32_t>(links.cluster_of.begin(), links.cluster_of.end()));
    if (!frame.cluster_lvlh_m.empty()) {
        std::vector<double> own(3 * n);
        for (std::size_t i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k) own[3 * i + static_cast<std::size_t>(k)] = frame.cluster_lvlh_m[i][k];
        vtp.add(Section::point, "position_cluster_lvlh_m", own, 3);
    }
    vtp.set_scalars(Section::point, "status");
    vtp.add(Section::cell, "capacity_bps", capacity);
    vtp.add(Section::cell, "margin_db", margin);
    patch.utilisation_at = vtp.add(Section::cell, "utilisation", utilisation);
    vtp.add(Section::cell, "distance_m", distance);
    patch.source_at = vtp.add(Section::cell, "link_source", source);
    patch.target_at = vtp.add(Section::cell, "link_target", target);
    patch.fault_down_at = vtp.add(Section::cell, "fault_down", fault_down);
    if (!links.cluster_of.empty()) vtp.add(Section::cell, "link_class", link_class);
    vtp.set_scalars(Section::cell, "capacity_bps");
    vtp.add(Section::points, "Points", points, 3);
    add_topology(vtp, n, line_ends);

    std::size_t data_start = 0;
    const std::string bytes = vtp.finish(n, n, link_count, data_start);
    for (auto* at : {&patch.status_at, &patch.utilisation_at, &patch.source_at, &patch.target_at, &patch.fault_down_at})
        *at += data_start;
    const std::string file = next_file();
    write_file_atomically(bytes, directory_, file);
    add_entry(frame.time_s, file, patch);
}

std::string PvdSeriesWriter::next_file() const {
    std::array<char, 16> index{};
    std::snprintf(index.data(), index.size(), "_%06zu", entries_.size());
    return basename_ + index.data() + ".vtp";
}

namespace {
constexpr std::string_view pvd_tail = "  </Collection>\n</VTKFile>\n";
}

// The new entry overwrites the closing tags at the end of the .pvd and puts them back after it:
// the index stays valid after every frame at the cost of one line, not a rewrite of the whole list.
void PvdSeriesWriter::add_entry(double time_s, std::string file, const Patchable& patch) {
    const std::string line =
        "    <DataSet timestep=\"" + format_double(time_s) + "\" group=\"\" part=\"0\" file=\"" + xml_escape(file) + "\"/>\n";
    const std::string bytes = line + std::string(pvd_tail);
    const std::filesystem::path path = pvd_path();
    const File out(path, O_WRONLY);
    write_all(out.fd, bytes.data(), bytes.size(), static_cast<off_t>(pvd_entries_end_), path);
    pvd_entries_end_ += line.size();
    entries_.push_back(Entry{time_s, std::move(file), patch});
}

std::vector<ClusterPair> cluster_pairs(const links::Topology& topology, std::span<const std::int32_t> cluster_of) {
    std::vector<ClusterPair> pairs;
    for (const links::Link& link : topology.links) {
        if (link.source < 0 || link.target < 0 || static_cast<std::size_t>(link.source) >= cluster_of.size() ||
            static_cast<std::size_t>(link.target) >= cluster_of.size())
            throw std::invalid_argument("skyfabric::viz: link (" + std::to_string(link.source) + ", " +
                                        std::to_string(link.target) + ") names a satellite with no cluster");
        const std::int32_t a = std::min(cluster_of[link.source], cluster_of[link.target]);
        const std::int32_t b = std::max(cluster_of[link.source], cluster_of[link.target]);
        if (a == b) continue;
        auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair{a, b},
                                   [](const ClusterPair& p, const auto& k) { return std::pair{p.a, p.b} < k; });
        if (it == pairs.end() || it->a != a || it->b != b) it = pairs.insert(it, ClusterPair{a, b});
        ++it->gateway_links;
        it->capacity_bps += link.capacity_bps;
        it->latency_s += link.latency_s;  // a sum until the division below
    }
    for (auto& p : pairs) p.latency_s /= p.gateway_links;
    return pairs;
}

void PvdSeriesWriter::write_cluster_frame(const ClusterFrame& frame) {
    const std::size_t n = frame.centroids_m.size();
    const std::size_t m = frame.pairs.size();
    if (!std::isfinite(frame.time_s)) throw std::invalid_argument("skyfabric::viz: frame time_s is not finite");
    check_length(frame.satellites, n, "satellites");

    std::vector<double> points(3 * n);
    std::vector<std::int32_t> cluster(n), satellites(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const Eigen::Vector3d& p = frame.centroids_m[i];
        if (!p.allFinite())
            throw std::invalid_argument("skyfabric::viz: centroid of cluster " + std::to_string(i) +
                                        " is not finite at t = " + format_double(frame.time_s) + " s");
        points[3 * i] = p.x();
        points[3 * i + 1] = p.y();
        points[3 * i + 2] = p.z();
        cluster[i] = static_cast<std::int32_t>(i);
        if (!frame.satellites.empty()) satellites[i] = frame.satellites[i];
    }

    // Cell data over the cluster vertices (not pairs: -1 / NaN) then the pairs' lines.
    std::vector<std::int32_t> links(n + m, -1), source(n + m, -1), target(n + m, -1);
    std::vector<double> capacity(n + m, kNaN), latency(n + m, kNaN);
    std::vector<std::int64_t> line_ends(2 * m);
    for (std::size_t k = 0; k < m; ++k) {
        const ClusterPair& p = frame.pairs[k];
        if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= n || static_cast<std::size_t>(p.b) >= n)
            throw std::invalid_argument("skyfabric::viz: cluster pair (" + std::to_string(p.a) + ", " +
                                        std::to_string(p.b) + ") outside 0.." + std::to_string(n));
        line_ends[2 * k] = p.a;
        line_ends[2 * k + 1] = p.b;
        const std::size_t cell = n + k;
        links[cell] = p.gateway_links;
        source[cell] = p.a;
        target[cell] = p.b;
        capacity[cell] = p.capacity_bps;
        latency[cell] = p.latency_s;
    }

    VtpBuilder vtp;
    add_time_value(vtp, frame.time_s);
    vtp.add(Section::point, "cluster", cluster);
    vtp.add(Section::point, "satellites", satellites);
    vtp.set_scalars(Section::point, "cluster");
    vtp.add(Section::cell, "gateway_links", links);
    vtp.add(Section::cell, "capacity_bps", capacity);
    vtp.add(Section::cell, "latency_s", latency);
    vtp.add(Section::cell, "link_source", source);
    vtp.add(Section::cell, "link_target", target);
    vtp.set_scalars(Section::cell, "capacity_bps");
    vtp.add(Section::points, "Points", points, 3);
    add_topology(vtp, n, line_ends);

    std::size_t data_start = 0;
    const std::string bytes = vtp.finish(n, n, m, data_start);
    const std::string file = next_file();
    write_file_atomically(bytes, directory_, file);
    add_entry(frame.time_s, file, Patchable{});
}

void PvdSeriesWriter::rewrite_after_run(std::size_t i, const AfterRun& update) {
    if (i >= entries_.size()) {
        throw std::invalid_argument("skyfabric::viz: no frame " + std::to_string(i) + " to rewrite (" +
                                    std::to_string(entries_.size()) + " written)");
    }
    const Patchable& at = entries_[i].patch;
    const std::filesystem::path path = directory_ / entries_[i].file;
    if (at.status_at == 0) throw std::invalid_argument("skyfabric::viz: frame " + path.string() + " has no satellite status");
    check_length(update.status, at.satellites, "status");
    const File file(path, O_RDWR);
    if (!update.status.empty())
        write_all(file.fd, reinterpret_cast<const char*>(update.status.data()), update.status.size_bytes(),
                  static_cast<off_t>(at.status_at), path);
    if (update.links_down.empty() && update.utilisation.empty()) return;
    // In place: the arrays' sizes never change, only their values.
    std::vector<std::int32_t> source(at.cells), target(at.cells), down(at.cells);
    std::vector<double> used(at.cells);
    const auto read = [&](auto& values, std::size_t offset) {
        read_all(file.fd, reinterpret_cast<char*>(values.data()), values.size() * sizeof values[0],
                 static_cast<off_t>(offset), path);
    };
    read(source, at.source_at);
    read(target, at.target_at);
    read(down, at.fault_down_at);
    read(used, at.utilisation_at);
    const auto by_link = [](const LinkValue& v, const std::pair<std::int32_t, std::int32_t>& l) {
        return std::pair{v.source, v.target} < l;
    };
    for (std::size_t c = 0; c < at.cells; ++c) {
        if (source[c] < 0) continue;  // a satellite's vertex cell
        const std::pair<std::int32_t, std::int32_t> link{source[c], target[c]};
        if (std::find(update.links_down.begin(), update.links_down.end(), link) != update.links_down.end()) down[c] = 1;
        const auto it = std::lower_bound(update.utilisation.begin(), update.utilisation.end(), link, by_link);
        if (it != update.utilisation.end() && it->source == link.first && it->target == link.second) used[c] = it->value;
    }
    write_all(file.fd, reinterpret_cast<const char*>(down.data()), down.size() * sizeof down[0],
              static_cast<off_t>(at.fault_down_at), path);
    write_all(file.fd, reinterpret_cast<const char*>(used.data()), used.size() * sizeof used[0],
              static_cast<off_t>(at.utilisation_at), path);
}

void PvdSeriesWriter::write_pvd() {
    std::string text =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        "  <Collection>\n";
    pvd_entries_end_ = text.size();
    text += pvd_tail;
    write_file_atomically(text, directory_, basename_ + ".pvd");
}

}  // namespace skyfabric::viz
