#pragma once
// Persistent worker threads for the nonlinear propagator's blocks.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace skyfabric::physics::detail {

// Persistent worker threads: run(count, work) calls work(i) for every i in [0, count) on the workers and
// the calling thread, and returns when all are done (rethrowing the first exception by index).
class WorkerPool {
public:
    explicit WorkerPool(std::size_t workers) {
        for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(); });
    }
    ~WorkerPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& th : threads_) th.join();
    }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    void run(std::size_t count, const std::function<void(std::size_t)>& work) {
        errors_.assign(count, nullptr);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            work_ = &work;
            count_ = count;
            next_.store(0);
            finished_ = 0;
            ++generation_;
        }
        wake_.notify_all();
        drain();
        {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [&] { return finished_ == threads_.size(); });
            work_ = nullptr;
        }
        for (auto& e : errors_) {
            if (e) std::rethrow_exception(e);
        }
    }

private:
    void drain() {
        for (std::size_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
            try {
                (*work_)(i);
            } catch (...) {
                errors_[i] = std::current_exception();
            }
        }
    }
    void loop() {
        std::uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
            }
            drain();
            {
                std::lock_guard<std::mutex> lock(mutex_);
                ++finished_;
            }
            done_.notify_all();
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* work_ = nullptr;
    std::size_t count_ = 0;
    std::atomic<std::size_t> next_{0};
    std::size_t finished_ = 0;
    std::uint64_t generation_ = 0;
    bool stop_ = false;
    std::vector<std::exception_ptr> errors_;
};

}  // namespace skyfabric::physics::detail
