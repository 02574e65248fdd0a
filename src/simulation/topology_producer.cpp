// The one producer of an orbital run's topologies (topology_producer.hpp).
#include "simulation/topology_producer.hpp"

#include <utility>

namespace skyfabric::simulation {

TopologyProducer::TopologyProducer(Produce produce, std::size_t capacity, OnEnd on_end)
    : produce_(std::move(produce)), capacity_(capacity), on_end_(std::move(on_end)) {}

TopologyProducer::~TopologyProducer() { stop(); }

void TopologyProducer::produce_one(std::unique_lock<std::mutex>& lock, bool keep) {
    producing_ = true;
    lock.unlock();
    links::Topology topology;
    bool more = false;
    std::exception_ptr thrown;
    try {
        more = produce_(keep ? &topology : nullptr);
    } catch (...) {
        thrown = std::current_exception();
    }
    lock.lock();
    producing_ = false;
    if (more) {
        if (keep) queue_.push_back(std::move(topology));
        produced_.store(produced_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    } else {
        closed_ = true;
        thrown_ = thrown;
    }
    ready_.notify_all();
}

void TopologyProducer::progress(std::unique_lock<std::mutex>& lock) {
    if (capacity_ > 0 && !stopping_) {
        if (!thread_.joinable()) thread_ = std::thread([this] { thread_loop(); });
        ready_.wait(lock);
    } else if (producing_) {  // another consumer thread is producing: its sample may be the one wanted
        ready_.wait(lock);
    } else {
        produce_one(lock, true);
    }
}

void TopologyProducer::thread_loop() {
    std::unique_lock lock(mutex_);
    while (true) {
        room_.wait(lock, [&] {
            return stopping_ || closed_ || queue_.size() < capacity_ || produced_.load(std::memory_order_relaxed) < wanted_;
        });
        if (stopping_ || closed_) return;
        produce_one(lock, true);
    }
}

void TopologyProducer::see_end(std::unique_lock<std::mutex>&) {
    if (end_seen_) return;
    end_seen_ = true;
    if (on_end_) on_end_(std::exchange(thrown_, nullptr));
}

bool TopologyProducer::pull(links::Topology& next) {
    std::unique_lock lock(mutex_);
    while (queue_.empty() && !closed_) progress(lock);
    if (queue_.empty()) {
        see_end(lock);
        return false;
    }
    next = std::move(queue_.front());
    queue_.pop_front();
    room_.notify_one();
    lock.unlock();
    if (delivered_) delivered_(next);
    return true;
}

bool TopologyProducer::reach(std::size_t count) {
    if (produced() >= count) return true;
    std::unique_lock lock(mutex_);
    if (count > wanted_) {
        wanted_ = count;
        room_.notify_one();
    }
    while (produced() < count && !closed_) progress(lock);
    if (produced() >= count) return true;
    see_end(lock);
    return false;
}

bool TopologyProducer::ended() const {
    const std::lock_guard lock(mutex_);
    return end_seen_;
}

void TopologyProducer::stop() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    room_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void TopologyProducer::run_out() {
    stop();
    std::unique_lock lock(mutex_);
    while (!closed_) produce_one(lock, false);
    end_seen_ = true;
    if (thrown_) std::rethrow_exception(std::exchange(thrown_, nullptr));
}

}  // namespace skyfabric::simulation
