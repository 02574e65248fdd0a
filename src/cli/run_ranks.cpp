#include "cli/run_ranks.hpp"

#include "sweep/sweep_mpi.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace skyfabric::cli {

namespace {

constexpr int tag_trials = 21, tag_algorithms = 22;

// Values as bytes, for the same program on every rank (no byte-order or layout conversion).
struct Encoder {
    std::string bytes;
    template <class T>
    void operator()(const T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        bytes.append(reinterpret_cast<const char*>(&value), sizeof(T));
    }
    template <class T>
    void operator()(const std::vector<T>& values) {
        static_assert(std::is_trivially_copyable_v<T>);
        (*this)(static_cast<std::uint64_t>(values.size()));
        bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    }
    void operator()(const std::string& text) { (*this)(std::vector<char>(text.begin(), text.end())); }
};

struct Decoder {
    const std::string& bytes;
    std::size_t at = 0;
    void take(void* out, std::size_t n) {
        if (n > bytes.size() - at) throw std::runtime_error("MPI: a message from another rank ended early");
        if (n) std::memcpy(out, bytes.data() + at, n);
        at += n;
    }
    template <class T>
    void operator()(T& value) {
        static_assert(std::is_trivially_copyable_v<T>);
        take(&value, sizeof(T));
    }
    template <class T>
    void operator()(std::vector<T>& values) {
        std::uint64_t n = 0;
        (*this)(n);
        if (n > (bytes.size() - at) / std::max<std::size_t>(1, sizeof(T))) throw std::runtime_error("MPI: a message from another rank ended early");
        values.resize(n);
        take(values.data(), n * sizeof(T));
    }
    void operator()(std::string& text) {
        std::vector<char> chars;
        (*this)(chars);
        text.assign(chars.begin(), chars.end());
    }
    bool done() const { return at == bytes.size(); }
};

// Every field of a result, written or read in this one order.
template <class Io, class Result>
void each_field(Io& io, Result& r) {
    // A field added to ClusterTrainingResult, TrainingResult or its summary must be listed here (the
    // sizes below then change with it).
    static_assert(sizeof(workloads::ClusterTrainingResult) == 480, "a new ClusterTrainingResult field: send it in each_field");
    static_assert(sizeof(workloads::TrainingResult) == 304, "a new TrainingResult field: send it in each_field");
    io(r.algorithm), io(r.steps), io(r.start_s), io(r.end_s), io(r.step_time_mean_s), io(r.compute_per_step_s);
    io(r.all_to_all_per_step_s), io(r.tokens_per_s), io(r.mfu), io(r.idle_fraction), io(r.outer_sync_mean_s);
    io(r.outer_wait_mean_s), io(r.compute_throttled_s), io(r.straggler_s), io(r.outer_rounds), io(r.intra_cluster_bytes);
    io(r.gateway_bytes), io(r.bytes_outside_own_clusters), io(r.truncated), io(r.rounds);
    io(r.training.steps), io(r.training.collectives), io(r.training.links), io(r.training.link_epochs), io(r.training.summary);
}

// Every rank's `mine`, by rank, on every rank: each sends rank 0 its part, rank 0 sends each the whole.
std::vector<std::string> exchange(sweep::Messenger& mpi, int tag, std::string mine) {
    const auto size = static_cast<std::size_t>(mpi.size());
    std::vector<std::string> parts(size);
    if (mpi.rank() == 0) {
        parts[0] = std::move(mine);
        for (std::size_t k = 1; k < size; ++k) parts[k] = mpi.receive(static_cast<int>(k), tag);
        Encoder whole;
        for (const auto& p : parts) whole(p);
        for (std::size_t k = 1; k < size; ++k) mpi.send(static_cast<int>(k), tag, whole.bytes);
        return parts;
    }
    mpi.send(0, tag, mine);
    const std::string whole = mpi.receive(0, tag);
    Decoder in{whole};
    for (auto& p : parts) in(p);
    return parts;
}

}  // namespace

bool run_shared_among_ranks() { return sweep::launched_under_mpi() && std::getenv("SKYFABRIC_PARENT_PID") == nullptr; }

std::string encode_algorithm_results(std::span<const workloads::ClusterTrainingResult> results) {
    Encoder out;
    out(static_cast<std::uint64_t>(results.size()));
    for (const auto& r : results) {
        if (r.training.routes || r.training.tours)
            throw std::logic_error("MPI: a training record that keeps its routes cannot be sent to another rank");
        each_field(out, r);
    }
    return std::move(out.bytes);
}

std::vector<workloads::ClusterTrainingResult> decode_algorithm_results(const std::string& bytes) {
    Decoder in{bytes};
    std::uint64_t n = 0;
    in(n);
    if (n > bytes.size()) throw std::runtime_error("MPI: a message from another rank ended early");
    std::vector<workloads::ClusterTrainingResult> results(n);
    for (auto& r : results) each_field(in, r);
    if (!in.done()) throw std::runtime_error("MPI: a message from another rank is longer than its results");
    return results;
}

simulation::RunRanks run_ranks(sweep::Messenger& mpi) {
    simulation::RunRanks ranks;
    ranks.trials.part = mpi.rank();
    ranks.trials.parts = mpi.size();
    const auto rank = static_cast<std::size_t>(mpi.rank()), size = static_cast<std::size_t>(mpi.size());
    ranks.trials.gather = [&mpi, rank, size](std::span<workloads::TrialRow> rows, bool stopped) {
        Encoder mine;
        mine(static_cast<std::uint8_t>(stopped));
        for (std::size_t t = rank; t < rows.size(); t += size) mine(rows[t]);
        const auto parts = exchange(mpi, tag_trials, std::move(mine.bytes));
        bool any_stopped = false;
        for (std::size_t k = 0; k < size; ++k) {
            Decoder in{parts[k]};
            std::uint8_t s = 0;
            in(s);
            any_stopped = any_stopped || s != 0;
            for (std::size_t t = k; t < rows.size(); t += size) in(rows[t]);
        }
        return any_stopped;
    };
    ranks.gather_algorithms = [&mpi, rank, size](std::vector<workloads::ClusterTrainingResult>& results) {
        std::vector<workloads::ClusterTrainingResult> mine;
        for (std::size_t i = rank; i < results.size(); i += size) mine.push_back(std::move(results[i]));
        const auto parts = exchange(mpi, tag_algorithms, encode_algorithm_results(mine));
        for (std::size_t k = 0; k < size; ++k) {
            auto theirs = decode_algorithm_results(parts[k]);
            for (std::size_t j = 0; j < theirs.size() && k + j * size < results.size(); ++j)
                results[k + j * size] = std::move(theirs[j]);
        }
    };
    return ranks;
}

}  // namespace skyfabric::cli
