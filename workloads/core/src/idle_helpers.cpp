#include <skyfabric/workloads/idle_helpers.hpp>

#include <algorithm>

namespace skyfabric::workloads {

std::size_t IdleHelpers::work_on(Job& job) {
    std::size_t did = 0;
    for (std::size_t i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < job.n; ++did) {
        try {
            (*job.body)(i);
        } catch (...) {
            const std::lock_guard lock(mutex_);
            if (!job.error) job.error = std::current_exception();
        }
    }
    return did;
}

IdleHelpers::Job* IdleHelpers::job_with_items() const {
    for (Job* job : jobs_)
        if (job->next.load(std::memory_order_relaxed) < job->n) return job;
    return nullptr;
}

void IdleHelpers::run(std::size_t n, const std::function<void(std::size_t)>& body) {
    if (n == 0) return;
    if (!any_idle() || n == 1) {
        for (std::size_t i = 0; i < n; ++i) body(i);
        return;
    }
    shared_runs_.fetch_add(1, std::memory_order_relaxed);
    Job job;
    job.n = n;
    job.body = &body;
    {
        const std::lock_guard lock(mutex_);
        jobs_.push_back(&job);
    }
    changed_.notify_all();
    const std::size_t did = work_on(job);
    std::unique_lock lock(mutex_);
    job.done += did;
    // Every item taken is done, and no helper still holds the job, before it leaves this frame.
    changed_.wait(lock, [&] { return job.done == n && job.users == 0; });
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
    lock.unlock();
    if (job.error) std::rethrow_exception(job.error);
}

void IdleHelpers::serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
        idle_.fetch_add(1, std::memory_order_relaxed);
        changed_.wait(lock, [&] { return closed_ || job_with_items() != nullptr; });
        idle_.fetch_sub(1, std::memory_order_relaxed);
        Job* job = job_with_items();
        if (!job) return;  // closed, and nothing left to help with
        ++job->users;
        lock.unlock();
        const std::size_t did = work_on(*job);
        lock.lock();
        job->done += did;
        --job->users;
        changed_.notify_all();
    }
}

void IdleHelpers::close() {
    {
        const std::lock_guard lock(mutex_);
        closed_ = true;
    }
    changed_.notify_all();
}

HelperThreads::HelperThreads(IdleHelpers& helpers, std::int32_t threads) : helpers_(helpers) {
    if (threads == 0) threads = static_cast<std::int32_t>(std::max(1u, std::thread::hardware_concurrency()));
    for (std::int32_t t = 1; t < threads; ++t) threads_.emplace_back([this] { helpers_.serve(); });
}

HelperThreads::~HelperThreads() {
    helpers_.close();
    for (auto& t : threads_) t.join();
}

}  // namespace skyfabric::workloads
