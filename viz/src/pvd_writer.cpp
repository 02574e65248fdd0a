#include <skyfabric/viz/pvd_writer.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <system_error>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLPolyDataWriter.h>

namespace skyfabric::viz {
namespace {

// Writes poly as directory/file through a temporary name and rename(2), so no reader ever sees
// half a frame.
void write_vtp_atomically(vtkPolyData* poly, const std::filesystem::path& directory, const std::string& file) {
    const std::filesystem::path final_path = directory / file;
    const std::filesystem::path temp_path = directory / ("." + file + ".tmp");
    vtkNew<vtkXMLPolyDataWriter> writer;
    writer->SetFileName(temp_path.c_str());
    writer->SetInputData(poly);
    writer->SetDataModeToAppended();
    writer->EncodeAppendedDataOff();
    writer->SetCompressorTypeToZLib();
    writer->SetHeaderTypeToUInt64();
    if (writer->Write() != 1 || writer->GetErrorCode() != 0) {
        std::error_code ignored;
        std::filesystem::remove(temp_path, ignored);
        throw std::runtime_error("skyfabric::viz: cannot write VTK frame " + final_path.string());
    }
    std::error_code ec;
    std::filesystem::rename(temp_path, final_path, ec);
    if (ec) {
        throw std::runtime_error("skyfabric::viz: cannot rename " + temp_path.string() + " to " +
                                 final_path.string() + ": " + ec.message());
    }
}

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

vtkNew<vtkDoubleArray> point_array(const char* name, std::span<const double> values,
                                   std::size_t count) {
    vtkNew<vtkDoubleArray> array;
    array->SetName(name);
    array->SetNumberOfComponents(1);
    array->SetNumberOfTuples(static_cast<vtkIdType>(count));
    for (std::size_t i = 0; i < count; ++i) {
        array->SetValue(static_cast<vtkIdType>(i), values.empty() ? 0.0 : values[i]);
    }
    return array;
}

vtkNew<vtkIntArray> int_array(const char* name, std::size_t count, int fill) {
    vtkNew<vtkIntArray> array;
    array->SetName(name);
    array->SetNumberOfTuples(static_cast<vtkIdType>(count));
    array->FillValue(fill);
    return array;
}

// A cell-data array over verts (NaN: not a link) followed by lines.
vtkNew<vtkDoubleArray> link_array(const char* name, std::size_t satellite_count,
                                  std::size_t link_count) {
    vtkNew<vtkDoubleArray> array;
    array->SetName(name);
    array->SetNumberOfComponents(1);
    array->SetNumberOfTuples(static_cast<vtkIdType>(satellite_count + link_count));
    for (std::size_t i = 0; i < satellite_count; ++i) {
        array->SetValue(static_cast<vtkIdType>(i), kNaN);
    }
    return array;
}

// ParaView's own name for a dataset's time, so a single .vtp opened alone still knows it.
void add_time_value(vtkPolyData* poly, double time_s) {
    vtkNew<vtkDoubleArray> time_value;
    time_value->SetName("TimeValue");
    time_value->SetNumberOfTuples(1);
    time_value->SetValue(0, time_s);
    poly->GetFieldData()->AddArray(time_value);
}

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
    const std::size_t link_count = links.topology ? links.topology->links.size() : 0;
    check_length(links.utilisation, link_count, "utilisation");

    // Points and one vertex cell per satellite.
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    points->SetNumberOfPoints(static_cast<vtkIdType>(n));
    vtkNew<vtkCellArray> verts;
    verts->AllocateExact(static_cast<vtkIdType>(n), static_cast<vtkIdType>(n));
    for (std::size_t i = 0; i < n; ++i) {
        const Eigen::Vector3d& p = frame.positions_m[i];
        if (!p.allFinite()) {
            throw std::invalid_argument("skyfabric::viz: position of satellite " +
                                        std::to_string(i) + " is not finite at t = " +
                                        format_double(frame.time_s) + " s");
        }
        points->SetPoint(static_cast<vtkIdType>(i), p.x(), p.y(), p.z());
        const vtkIdType id = static_cast<vtkIdType>(i);
        verts->InsertNextCell(1, &id);
    }

    auto ids = int_array("id", n, 0);
    auto status = int_array("status", n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        ids->SetValue(static_cast<vtkIdType>(i), static_cast<int>(i));
        status->SetValue(static_cast<vtkIdType>(i),
                         frame.status.empty() ? static_cast<int>(SatelliteStatus::ok)
                                              : static_cast<int>(frame.status[i]));
    }

    // Lines: one per link, cell data after the vertex cells.
    vtkNew<vtkCellArray> lines;
    auto capacity = link_array("capacity_bps", n, link_count);
    auto margin = link_array("margin_db", n, link_count);
    auto utilisation = link_array("utilisation", n, link_count);
    auto distance = link_array("distance_m", n, link_count);
    vtkNew<vtkIntArray> source;
    source->SetName("link_source");
    source->SetNumberOfTuples(static_cast<vtkIdType>(n + link_count));
    vtkNew<vtkIntArray> target;
    target->SetName("link_target");
    target->SetNumberOfTuples(static_cast<vtkIdType>(n + link_count));
    // 1 on a link a radiation fault (terminal outage) holds down; set after the run (rewrite_after_run).
    vtkNew<vtkIntArray> fault_down;
    fault_down->SetName("fault_down");
    fault_down->SetNumberOfTuples(static_cast<vtkIdType>(n + link_count));
    fault_down->FillValue(0);
    for (std::size_t i = 0; i < n; ++i) {
        source->SetValue(static_cast<vtkIdType>(i), -1);
        target->SetValue(static_cast<vtkIdType>(i), -1);
    }
    // 0 intra-cluster, 1 gateway; only for a constellation (one cluster writes what it always did).
    check_length(links.cluster_of, n, "cluster_of");
    auto link_class = int_array("link_class", n + link_count, -1);
    if (link_count > 0) {
        lines->AllocateExact(static_cast<vtkIdType>(link_count),
                             static_cast<vtkIdType>(2 * link_count));
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
            const std::array<vtkIdType, 2> ends{link.source, link.target};
            lines->InsertNextCell(2, ends.data());
            const auto cell = static_cast<vtkIdType>(n + k);
            capacity->SetValue(cell, link.capacity_bps);
            margin->SetValue(cell, link.margin_db);
            utilisation->SetValue(cell, links.utilisation.empty() ? 0.0 : links.utilisation[k]);
            distance->SetValue(cell, link.distance_m);
            source->SetValue(cell, link.source);
            target->SetValue(cell, link.target);
            if (!links.cluster_of.empty())
                link_class->SetValue(cell, links.cluster_of[link.source] != links.cluster_of[link.target] ? 1 : 0);
        }
    }

    vtkNew<vtkPolyData> poly;
    poly->SetPoints(points);
    poly->SetVerts(verts);
    poly->SetLines(lines);

    vtkPointData* pd = poly->GetPointData();
    pd->AddArray(ids);
    pd->AddArray(status);
    pd->AddArray(point_array("dose_rad", frame.dose_rad, n));
    pd->AddArray(point_array("delta_v_m_s", frame.delta_v_m_s, n));
    pd->AddArray(point_array("nearest_neighbour_m", frame.nearest_neighbour_m, n));
    pd->SetActiveScalars("status");

    vtkCellData* cd = poly->GetCellData();
    cd->AddArray(capacity);
    cd->AddArray(margin);
    cd->AddArray(utilisation);
    cd->AddArray(distance);
    cd->AddArray(source);
    cd->AddArray(target);
    cd->AddArray(fault_down);
    if (!links.cluster_of.empty()) cd->AddArray(link_class);
    cd->SetActiveScalars("capacity_bps");

    add_time_value(poly, frame.time_s);

    const std::string file = next_file();
    write_vtp_atomically(poly, directory_, file);
    add_entry(frame.time_s, file);
}

std::string PvdSeriesWriter::next_file() const {
    std::array<char, 16> index{};
    std::snprintf(index.data(), index.size(), "_%06zu", entries_.size());
    return basename_ + index.data() + ".vtp";
}

void PvdSeriesWriter::add_entry(double time_s, std::string file) {
    entries_.push_back(Entry{time_s, std::move(file)});
    try {
        write_pvd();
    } catch (...) {
        entries_.pop_back();
        throw;
    }
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

    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    points->SetNumberOfPoints(static_cast<vtkIdType>(n));
    vtkNew<vtkCellArray> verts;
    auto cluster = int_array("cluster", n, 0);
    auto satellites = int_array("satellites", n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const Eigen::Vector3d& p = frame.centroids_m[i];
        if (!p.allFinite())
            throw std::invalid_argument("skyfabric::viz: centroid of cluster " + std::to_string(i) +
                                        " is not finite at t = " + format_double(frame.time_s) + " s");
        const auto id = static_cast<vtkIdType>(i);
        points->SetPoint(id, p.x(), p.y(), p.z());
        verts->InsertNextCell(1, &id);
        cluster->SetValue(id, static_cast<int>(i));
        satellites->SetValue(id, frame.satellites.empty() ? 0 : frame.satellites[i]);
    }

    // Cell data over the cluster vertices (not pairs: -1 / NaN) then the pairs' lines.
    auto links = int_array("gateway_links", n + m, -1);
    auto source = int_array("link_source", n + m, -1);
    auto target = int_array("link_target", n + m, -1);
    auto capacity = link_array("capacity_bps", n, m);
    auto latency = link_array("latency_s", n, m);
    vtkNew<vtkCellArray> lines;
    for (std::size_t k = 0; k < m; ++k) {
        const ClusterPair& p = frame.pairs[k];
        if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= n || static_cast<std::size_t>(p.b) >= n)
            throw std::invalid_argument("skyfabric::viz: cluster pair (" + std::to_string(p.a) + ", " +
                                        std::to_string(p.b) + ") outside 0.." + std::to_string(n));
        const std::array<vtkIdType, 2> ends{p.a, p.b};
        lines->InsertNextCell(2, ends.data());
        const auto cell = static_cast<vtkIdType>(n + k);
        links->SetValue(cell, p.gateway_links);
        source->SetValue(cell, p.a);
        target->SetValue(cell, p.b);
        capacity->SetValue(cell, p.capacity_bps);
        latency->SetValue(cell, p.latency_s);
    }

    vtkNew<vtkPolyData> poly;
    poly->SetPoints(points);
    poly->SetVerts(verts);
    poly->SetLines(lines);
    poly->GetPointData()->AddArray(cluster);
    poly->GetPointData()->AddArray(satellites);
    poly->GetPointData()->SetActiveScalars("cluster");
    vtkCellData* cd = poly->GetCellData();
    cd->AddArray(links);
    cd->AddArray(capacity);
    cd->AddArray(latency);
    cd->AddArray(source);
    cd->AddArray(target);
    cd->SetActiveScalars("capacity_bps");
    add_time_value(poly, frame.time_s);

    const std::string file = next_file();
    write_vtp_atomically(poly, directory_, file);
    add_entry(frame.time_s, file);
}

void PvdSeriesWriter::rewrite_after_run(std::size_t i, const AfterRun& update) {
    if (i >= entries_.size()) {
        throw std::invalid_argument("skyfabric::viz: no frame " + std::to_string(i) + " to rewrite (" +
                                    std::to_string(entries_.size()) + " written)");
    }
    const std::filesystem::path path = directory_ / entries_[i].file;
    vtkNew<vtkXMLPolyDataReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    vtkPolyData* poly = reader->GetOutput();
    auto* array = poly ? vtkIntArray::SafeDownCast(poly->GetPointData()->GetArray("status")) : nullptr;
    if (reader->GetErrorCode() != 0 || array == nullptr)
        throw std::runtime_error("skyfabric::viz: cannot read the status of VTK frame " + path.string());
    const auto& status = update.status;
    check_length(status, static_cast<std::size_t>(array->GetNumberOfTuples()), "status");
    for (std::size_t k = 0; k < status.size(); ++k) array->SetValue(static_cast<vtkIdType>(k), status[k]);
    if (!update.links_down.empty() || !update.utilisation.empty()) {
        vtkCellData* cd = poly->GetCellData();
        auto* down = vtkIntArray::SafeDownCast(cd->GetArray("fault_down"));
        auto* used = vtkDoubleArray::SafeDownCast(cd->GetArray("utilisation"));
        auto* source = vtkIntArray::SafeDownCast(cd->GetArray("link_source"));
        auto* target = vtkIntArray::SafeDownCast(cd->GetArray("link_target"));
        if (down == nullptr || used == nullptr || source == nullptr || target == nullptr)
            throw std::runtime_error("skyfabric::viz: VTK frame " + path.string() + " has no link arrays to update");
        const auto by_link = [](const LinkValue& v, const std::pair<std::int32_t, std::int32_t>& l) {
            return std::pair{v.source, v.target} < l;
        };
        for (vtkIdType c = 0; c < down->GetNumberOfTuples(); ++c) {
            if (source->GetValue(c) < 0) continue;  // a satellite's vertex cell
            const std::pair<std::int32_t, std::int32_t> link{source->GetValue(c), target->GetValue(c)};
            if (std::find(update.links_down.begin(), update.links_down.end(), link) != update.links_down.end())
                down->SetValue(c, 1);
            const auto it = std::lower_bound(update.utilisation.begin(), update.utilisation.end(), link, by_link);
            if (it != update.utilisation.end() && it->source == link.first && it->target == link.second)
                used->SetValue(c, it->value);
        }
    }
    write_vtp_atomically(poly, directory_, entries_[i].file);
}

void PvdSeriesWriter::write_pvd() const {
    const std::filesystem::path final_path = pvd_path();
    const std::filesystem::path temp_path = directory_ / ("." + basename_ + ".pvd.tmp");
    {
        std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
        if (!out) {
            throw std::runtime_error("skyfabric::viz: cannot write " + temp_path.string());
        }
        out << "<?xml version=\"1.0\"?>\n"
               "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
               "  <Collection>\n";
        for (const Entry& e : entries_) {
            out << "    <DataSet timestep=\"" << format_double(e.time_s)
                << "\" group=\"\" part=\"0\" file=\"" << xml_escape(e.file) << "\"/>\n";
        }
        out << "  </Collection>\n</VTKFile>\n";
        out.flush();
        if (!out) {
            throw std::runtime_error("skyfabric::viz: cannot write " + temp_path.string());
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp_path, final_path, ec);
    if (ec) {
        throw std::runtime_error("skyfabric::viz: cannot rename " + temp_path.string() + " to " +
                                 final_path.string() + ": " + ec.message());
    }
}

}  // namespace skyfabric::viz
