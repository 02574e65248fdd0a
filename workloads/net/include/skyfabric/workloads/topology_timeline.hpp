#pragma once
// The fabric over time: what every consumer of a run's topologies reads. A TopologySource gives
// topologies in time order (the live physics, a stored series or a timeline); a TopologyTimeline
// keeps a run's topologies as keyframes, so that the coupled Monte Carlo, cluster training and
// serving replay the same fabric from any time (damaged_fabric.hpp, cluster_training.hpp).
// Pure: no I/O.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include <skyfabric/links/topology.hpp>
#include <skyfabric/workloads/network.hpp>

namespace skyfabric::workloads {

// Gives the next topology in time order; returns false when there are no more.
using TopologySource = std::function<bool(links::Topology& next)>;
TopologySource topology_source(std::span<const links::Topology> series);  // series must outlive it

// A topology with its network, as the clocks that replay a timeline share them: a constellation's
// algorithms start a clock for every outer sync (NoLoCo's pairs by the thousand), and each copied
// and built the whole fabric where it now takes two pointers.
struct SharedFrame {
    std::shared_ptr<const links::Topology> topology;
    std::shared_ptr<const Network> network;
};
using FrameSource = std::function<bool(SharedFrame& next)>;
FrameSource frame_source(TopologySource source);  // each topology pulled and its network built

class TopologyTimeline {
public:
    // The topology valid from topology.time_s on (times non-decreasing). Kept as a new keyframe
    // only when its links (endpoints, capacity) differ from the last keyframe's; between
    // keyframes only light-time latencies move (sub-microsecond over a formation). Keyframes are
    // stored as the links that changed since the previous one (a light time is recorded again
    // when it drifts more than 10 %), with a full copy every `snapshot_every` keyframes or when
    // the change is as large as a copy: memory follows the link churn, not links × samples
    // (suncatcher-81's day: 3.4 MB where full keyframes took 36 MB; docs/faults.md).
    explicit TopologyTimeline(std::int32_t snapshot_every = 32);
    void append(const links::Topology& topology);
    std::size_t keyframe_count() const { return frames_.size(); }
    std::int64_t topology_count() const { return appended_; }
    // The keyframe valid at t (the first one before its start).
    std::size_t keyframe_index_at(double t) const;
    // Keyframe k rebuilt from its copy and the changes since (links sorted by (source, target);
    // a link's latency is within 10 % of the keyframe's: it is recorded again when it drifts more).
    // The last few keyframes rebuilt are kept (thread-safe): asked again, one is copied; a later one
    // applies only the changes since the nearest kept before it (the same links, merged in the same
    // order). A constellation's replays start clocks all over the run, each with a rebuild.
    links::Topology keyframe(std::size_t k) const;
    // Keyframe k as keyframe(k) gives it, and its network (build_network), shared.
    SharedFrame shared_keyframe(std::size_t k) const;
    // The same keyframe k from keyframe j < k as keyframe(j) gave it: only the changes after j are
    // applied when no full copy lies between them (one merge where keyframe(k) may do 31), else
    // keyframe(k). For replays that walk forward in time.
    links::Topology keyframe_from(std::size_t k, const links::Topology& earlier, std::size_t j) const;
    // The keyframes from the one valid at from_s on, one per pull (the timeline must outlive it):
    // a training replayed over the stored run, from any time.
    TopologySource source_from(double from_s) const;
    // The same keyframes with their networks, each built once while kept among the recent ones and
    // shared by every clock that asks.
    FrameSource frames_from(double from_s) const;
    // When keyframe k gives way to the next (+inf for the last).
    double keyframe_end_s(std::size_t k) const;
    std::size_t memory_bytes() const;

private:
    struct Frame {
        double time_s = 0.0;
        bool snapshot = false;
        std::size_t begin = 0, end = 0;  // into links_ (the copy, or the links added or changed)
        std::size_t removed_begin = 0, removed_end = 0;  // into removed_
    };
    std::int32_t snapshot_every_ = 32;
    std::int32_t node_count_ = 0;
    std::vector<Frame> frames_;
    // What a step needs of a link, 24 bytes where links::Link is 56: the rest is rebuilt empty.
    struct StoredLink {
        std::int32_t source = 0, target = 0;
        double capacity_bps = 0.0;
        float latency_s = 0.0f;
    };
    std::vector<StoredLink> links_;
    static StoredLink stored(const links::Link& l);
    // Keyframes first..k's changes applied in turn to t (keyframe first − 1); t takes k's time.
    void apply_changes(links::Topology& t, std::size_t first, std::size_t k) const;
    static links::Link rebuilt(const StoredLink& s);
    std::vector<std::pair<std::int32_t, std::int32_t>> removed_;
    static constexpr std::size_t recent_keep = 8;
    struct Kept {
        std::size_t k = 0;
        std::shared_ptr<const links::Topology> topology;
        std::shared_ptr<const Network> network;  // null until asked for
    };
    struct Recent {  // behind a pointer, so that the timeline moves
        std::mutex mutex;
        std::vector<Kept> kept;  // most recent first
    };
    std::shared_ptr<const links::Topology> kept_keyframe(std::size_t k) const;
    std::unique_ptr<Recent> recent_ = std::make_unique<Recent>();
    links::Topology last_;  // the last keyframe, whole: what the next topology is compared with
    std::vector<double> stored_latency_s_;  // per link of last_: the latency its rebuild holds
    std::int64_t appended_ = 0;
};

}  // namespace skyfabric::workloads
