// The MPI plugin (libskyfabric_mpi.so): the only code that includes mpi.h. See sweep/messenger.hpp.
#include <mpi.h>

#include "sweep/messenger.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace {

using skyfabric::sweep::Messenger;

class MpiMessenger final : public Messenger {
public:
    MpiMessenger() {
        int provided = 0;
        // FUNNELED: a run has worker threads (trials, physics); only the main thread calls MPI.
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
    }
    ~MpiMessenger() override { MPI_Finalize(); }

    int rank() const override { return rank_; }
    int size() const override { return size_; }

    void send(int destination, int tag, const std::string& bytes) override {
        MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, destination, tag, MPI_COMM_WORLD);
    }

    std::optional<Message> try_receive() override {
        int flag = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status) != MPI_SUCCESS || !flag)
            return std::nullopt;
        return Message{status.MPI_SOURCE, status.MPI_TAG, take(status)};
    }

    std::string receive(int source, int tag) override {
        // Polled with sleeps growing to 5 ms, not MPI_Probe: Open MPI's blocking calls spin, and a
        // rank waiting for another's part of a run (cli/run_ranks.cpp) took the CPU that rank needed
        // wherever ranks share cores.
        MPI_Status status;
        int flag = 0;
        for (long sleep_us = 20; MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &status) == MPI_SUCCESS && !flag;
             sleep_us = std::min(2 * sleep_us, 5000L))
            std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
        return take(status);
    }

    void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
    [[noreturn]] void abort(int status) override {
        MPI_Abort(MPI_COMM_WORLD, status);
        std::abort();  // MPI_Abort does not return; the compiler cannot know it
    }

private:
    // Receives the message `status` describes (probed, so it is there).
    static std::string take(const MPI_Status& status) {
        int length = 0;
        MPI_Get_count(&status, MPI_CHAR, &length);
        std::string bytes(static_cast<std::size_t>(length), '\0');
        MPI_Recv(bytes.data(), length, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return bytes;
    }

    int rank_ = 0;
    int size_ = 1;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) Messenger* skyfabric_start_mpi() { return new MpiMessenger(); }
