#pragma once
// ParaView output of a formation run: one VTK XML PolyData file (.vtp) per output instant
// and a ParaView collection (.pvd) indexing them with their times.
//
//   <directory>/<basename>_000000.vtp, _000001.vtp, ...   (appended raw binary, uncompressed)
//   <directory>/<basename>.pvd                            (valid after every frame)
//
// Each .vtp holds
//   points      satellite positions [m] in the frame the caller chose (LVLH or ECI)
//   verts       one vertex cell per satellite (cells 0 .. N-1)
//   lines       one line cell per link (cells N .. N+L-1), source -> target
//   point data  id (int), status (int, SatelliteStatus), dose_rad, delta_v_m_s,
//               nearest_neighbour_m (double); for a constellation cluster_of (int) and
//               position_cluster_lvlh_m (3 doubles: each satellite in its own cluster chief's
//               LVLH frame, which scripts/render --cluster N draws)
//   cell data   capacity_bps, margin_db, utilisation, distance_m (double; NaN on the
//               vertex cells, which are not links), link_source, link_target (int; -1 on
//               vertex cells), and for a constellation link_class (int; 0 intra-cluster,
//               1 gateway, -1 on vertex cells)
//   field data  TimeValue (double, the instant's time_s); status_names (string, the name of
//               each status value in value order: links::satellite_status_names)
//
// A constellation's zoomed-out series (write_cluster_frame) holds instead
//   points      each cluster's centroid [m], verts one per cluster, lines one per pair of
//               clusters joined by at least one gateway link
//   point data  cluster, satellites (int)
//   cell data   gateway_links (int), capacity_bps (sum, per direction), latency_s (mean)
//               (NaN / -1 on the vertex cells), link_source, link_target (the clusters)
//
// Each frame is written once, through a temporary and rename(2). The .pvd gets one line per
// frame (its closing tags rewritten after it), so a run that stops part way still opens in
// ParaView with every frame written so far. The files are VTK XML format 1.0 written without
// the VTK library (viz/src/pvd_writer.cpp); tests read them back with VTK's own reader.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <skyfabric/links/satellite_status.hpp>
#include <skyfabric/links/topology.hpp>

namespace skyfabric::viz {

using SatelliteStatus = links::SatelliteStatus;  // also workloads::SatelliteCondition

// One output instant of the formation. Spans are borrowed for the duration of the call.
struct SatelliteFrame {
    double time_s = 0.0;
    std::span<const Eigen::Vector3d> positions_m;   // frame chosen by the caller (LVLH or ECI)
    std::span<const std::int32_t> status;           // SatelliteStatus values; empty => all ok
    std::span<const double> dose_rad;               // each: empty => zeros, else one per satellite
    std::span<const double> delta_v_m_s;
    std::span<const double> nearest_neighbour_m;
    // A constellation: each satellite's position in its own cluster chief's LVLH frame; empty => none.
    std::span<const Eigen::Vector3d> cluster_lvlh_m;
};

// The links at the same instant, drawn as lines between satellites.
struct LinkFrameData {
    const skyfabric::links::Topology* topology = nullptr;  // null => no lines
    std::span<const double> utilisation;                   // per link; empty => zeros
    std::span<const std::int32_t> cluster_of;  // each satellite's cluster; empty => one cluster, no link_class
};

// The gateway links between one pair of clusters a < b at an instant.
struct ClusterPair {
    std::int32_t a = 0;
    std::int32_t b = 0;
    std::int32_t gateway_links = 0;
    double capacity_bps = 0.0;  // sum over the links, per direction
    double latency_s = 0.0;     // mean over the links
};

// The links of `topology` whose ends lie in different clusters, grouped by cluster pair,
// sorted by (a, b). std::invalid_argument for a link end outside cluster_of.
std::vector<ClusterPair> cluster_pairs(const skyfabric::links::Topology& topology,
                                       std::span<const std::int32_t> cluster_of);

// One instant of a constellation, zoomed out: each cluster a point.
struct ClusterFrame {
    double time_s = 0.0;
    std::span<const Eigen::Vector3d> centroids_m;  // same frame as the satellite series
    std::span<const std::int32_t> satellites;      // per cluster
    std::span<const ClusterPair> pairs;
};

// Writes a time series of formation frames as .vtp files plus a .pvd index.
// Errors: std::invalid_argument for inconsistent input (array lengths, link endpoints out
// of range, non-finite time or position); std::runtime_error naming the path when a
// file cannot be written.
class PvdSeriesWriter {
public:
    PvdSeriesWriter(std::filesystem::path directory, std::string basename);

    // Writes <basename>_NNNNNN.vtp (NNNNNN = frames_written()), then rewrites the .pvd.
    void write_frame(const SatelliteFrame& frame, const LinkFrameData& links);
    // The same for a constellation's cluster frame (a series of its own).
    void write_cluster_frame(const ClusterFrame& frame);

    // What is known of frame i only after the run: the satellites' status (radiation faults are
    // drawn on the whole dose-rate history, then played), the links a fault held down, and each
    // link's utilisation by the training (which runs behind the frames it pulls).
    struct LinkValue {
        std::int32_t source = 0;  // source < target
        std::int32_t target = 0;
        double value = 0.0;
    };
    struct AfterRun {
        std::span<const std::int32_t> status;  // empty: left as written; else one per satellite
        std::span<const std::pair<std::int32_t, std::int32_t>> links_down;  // fault_down = 1
        std::span<const LinkValue> utilisation;  // sorted by (source, target); links not listed: 0
    };
    // Writes that into frame i (< frames_written()) in place: only the values of the status,
    // fault_down and utilisation arrays change, never a size. std::invalid_argument for a bad
    // index or length, or a cluster frame (which has no status).
    void rewrite_after_run(std::size_t i, const AfterRun& update);

    std::size_t frames_written() const { return entries_.size(); }
    double frame_time_s(std::size_t i) const { return entries_.at(i).time_s; }
    const std::filesystem::path& directory() const { return directory_; }
    std::filesystem::path pvd_path() const;

private:
    // Where the arrays rewrite_after_run changes lie in a frame's file (byte positions; 0: none).
    struct Patchable {
        std::size_t satellites = 0, cells = 0;
        std::size_t status_at = 0, fault_down_at = 0, utilisation_at = 0, source_at = 0, target_at = 0;
    };
    struct Entry {
        double time_s;
        std::string file;  // relative to directory_
        Patchable patch;
    };
    void write_pvd();  // the empty collection
    std::string next_file() const;  // <basename>_NNNNNN.vtp for the next frame
    void add_entry(double time_s, std::string file, const Patchable& patch);

    std::filesystem::path directory_;
    std::string basename_;
    std::vector<Entry> entries_;
    std::size_t pvd_entries_end_ = 0;  // where the .pvd's closing tags start
};

}  // namespace skyfabric::viz
