#pragma once
// The one producer of an orbital run's topologies (RunState): produce() advances the physics one
// sample and gives its topology, which joins a queue; the consumer (a formation's live training, or
// a constellation's or serving run's drain into the topology timeline) pulls them in order, and the
// power look-ahead (RunState::compute_done_s) asks for samples to be produced before it pulls them.
// With capacity 0 the consumer's own pull or look-ahead produces; with capacity > 0 a thread of its
// own produces, up to `capacity` topologies ahead of the pulls (further when a look-ahead asks).
// Who calls produce() is the only difference: the same topologies reach the consumer in the same
// order, and the end (the run's end, a stop, a failure) is seen at the same pull or look-ahead.

#include <skyfabric/links/topology.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace skyfabric::simulation {

class TopologyProducer {
public:
    // Advances the physics one sample and, when `next` is given, copies its topology there; false at
    // the end (the run's end, a stop). What it throws ends production too.
    using Produce = std::function<bool(links::Topology* next)>;
    // Called once, in the consumer's thread, when a pull or a look-ahead first finds production
    // ended, with what produce() threw (null: it returned false). It may throw.
    using OnEnd = std::function<void(std::exception_ptr thrown)>;
    using Delivered = std::function<void(const links::Topology&)>;

    TopologyProducer(Produce produce, std::size_t capacity, OnEnd on_end);
    ~TopologyProducer();  // stop()
    TopologyProducer(const TopologyProducer&) = delete;
    TopologyProducer& operator=(const TopologyProducer&) = delete;

    // Each topology as it is pulled, in order (the topology timeline): one thread pulls.
    void subscribe(Delivered delivered) { delivered_ = std::move(delivered); }

    // The next topology; false once production ended and every topology produced was pulled.
    bool pull(links::Topology& next);
    // Until `count` samples are produced, pulled or not (the power look-ahead); false when production
    // ended first. Thread-safe (a constellation's replays ask from several threads).
    bool reach(std::size_t count);
    // Whether a pull or a look-ahead has seen production end: then the run's state may be read.
    bool ended() const;
    std::size_t produced() const { return produced_.load(std::memory_order_acquire); }

    // The consumers are done: the thread stops where it is, and what it threw that no consumer saw is
    // thrown here (producing inline, the rest of the run would meet it). Then the rest of the run is
    // produced here, in this thread, delivered to no one; what that throws propagates.
    void run_out();
    // The thread stops where it is; nothing is thrown (an exception unwinding the consumer).
    void stop();

private:
    // Produces one sample (the lock released meanwhile): queued, or production closed.
    void produce_one(std::unique_lock<std::mutex>& lock, bool keep);
    // The consumer waits for production: the thread's, or (capacity 0) its own.
    void progress(std::unique_lock<std::mutex>& lock);
    void see_end(std::unique_lock<std::mutex>& lock);
    void thread_loop();

    Produce produce_;
    std::size_t capacity_;
    OnEnd on_end_;
    Delivered delivered_;
    mutable std::mutex mutex_;
    std::condition_variable ready_, room_;
    std::deque<links::Topology> queue_;
    std::atomic<std::size_t> produced_{0};
    std::size_t wanted_ = 0;  // samples a look-ahead asked for: the thread produces past its capacity to them
    bool producing_ = false;  // produce() is running (in the thread or in a consumer)
    bool closed_ = false;     // produce() returned false or threw
    bool end_seen_ = false;   // a consumer saw the close (on_end called)
    bool stopping_ = false;   // the thread must stop
    std::exception_ptr thrown_;
    std::thread thread_;  // started by the first pull or look-ahead that waits
};

}  // namespace skyfabric::simulation
