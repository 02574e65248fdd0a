#include "sweep/sweep_mpi.hpp"

#include "sweep/process_pool.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>

namespace skyfabric::sweep {

bool launched_under_mpi() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
        if (std::getenv(v)) return true;
    }
    return false;
}

namespace {

constexpr int tag_request = 1, tag_assign = 2, tag_result = 3, tag_done = 4;

// A worker's points: asked of rank 0 one at a time; -1 means there are no more.
class AskRoot : public PointSource {
public:
    explicit AskRoot(Messenger& mpi) : mpi_(mpi) {}
    bool exhausted() const override { return no_more_; }
    std::optional<std::size_t> next() override {
        mpi_.send(0, tag_request, {});
        const long long assign = std::stoll(mpi_.receive(0, tag_assign));
        if (assign < 0) {
            no_more_ = true;
            return std::nullopt;
        }
        return static_cast<std::size_t>(assign);
    }

private:
    Messenger& mpi_;
    bool no_more_ = false;
};

}  // namespace

void run_mpi_root(const Plan& plan, const std::vector<std::size_t>& todo, Gatherer& gather, int jobs, Messenger& mpi) {
    Pool pool(plan, jobs);
    TodoList points(todo);
    int workers_done = 0;
    PoolLoop loop = gather.loop_for(pool);
    loop.serve = [&] {
        bool busy = false;
        while (auto message = mpi.try_receive()) {
            busy = true;
            if (message->tag == tag_request) {
                long long assign = -1;
                if (!stopping() && !points.exhausted()) assign = static_cast<long long>(*points.next());
                mpi.send(message->source, tag_assign, std::to_string(assign));
            } else if (message->tag == tag_result) {
                gather.add(Row::from_json(nlohmann::json::parse(message->bytes)), pool.running());
            } else if (message->tag == tag_done) {
                ++workers_done;
            }
        }
        return busy;
    };
    loop.others_finished = [&] { return workers_done == mpi.size() - 1; };
    run_points(pool, points, loop);
}

void run_mpi_worker(const Plan& plan, int jobs, Messenger& mpi) {
    Pool pool(plan, jobs);
    AskRoot points(mpi);
    run_points(pool, points, {.deliver = [&](Row r) { mpi.send(0, tag_result, r.to_json().dump()); }});
    mpi.send(0, tag_done, {});
}

}  // namespace skyfabric::sweep
