// One max-min problem spread over the GPU: maxmin_spread.hpp's steps as kernels, a thread per
// flow for the steps over flows and a warp per link for the steps over links (segmented
// reductions: an AND for saturation, a sum for the share counts, the subtractions in rising flow
// index by one lane after a ballot, as the CPU takes them). The same host/device functions as the
// CPU's SpreadMaxMin and maxmin_rates, compiled with -fmad=false: the same bits. The drain's event
// loop (drain_flows_by) runs on the host, each solve on the device. The link → flow index is built
// on the device: the crossings sorted by link with a stable radix sort keep each link's flows in
// rising index, LinkFlows::build's order.

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <skyfabric/workloads/maxmin_core.hpp>
#include <skyfabric/workloads/maxmin_spread.hpp>

#include "flow_solver_cuda.hpp"
#include <skyfabric/workloads/cuda_support.cuh>

namespace skyfabric::workloads::detail {

namespace {

constexpr int block = 256;
constexpr int warp = 32;
constexpr unsigned full_mask = 0xffffffffu;

struct Device {
    int nl, nf;
    const double* capacity;
    const int *fo, *fl, *lo;
    int *lf, *live;  // each link's live flows (a copy of the index, kept to the unfrozen), their count
    const unsigned char* active;
    double *rate, *remaining;
    int* count;
    unsigned char *saturated, *frozen;
    int* counter;  // flows taking part (start), then flows frozen in a round
};

int blocks_for(long long threads) { return static_cast<int>((threads + block - 1) / block); }

__global__ void start_links(Device d) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int l = static_cast<int>(t / warp), lane = static_cast<int>(t % warp);
    if (l >= d.nl) return;
    int count = 0;
    for (int k = d.lo[l] + lane; k < d.lo[l + 1]; k += warp) count += core::share_weight(d.lf[k], d.active, d.fo, nullptr);
    for (int s = warp / 2; s > 0; s /= 2) count += __shfl_down_sync(full_mask, count, s);
    if (lane == 0) {
        d.remaining[l] = core::start_capacity(d.capacity[l]);
        d.count[l] = count;
        d.live[l] = d.lo[l + 1] - d.lo[l];
    }
}

__global__ void start_flows(Device d) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= d.nf) return;
    if (core::spread_start_flow(f, d.active, d.fo, d.rate, d.frozen)) atomicAdd(d.counter, 1);
}

__global__ void flow_shares(Device d) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < d.nf) core::spread_flow_share(f, d.fo, d.fl, d.remaining, d.count, d.rate, d.frozen);
}

__global__ void links_saturated(Device d) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int l = static_cast<int>(t / warp), lane = static_cast<int>(t % warp);
    if (l >= d.nl) return;  // a whole warp leaves together (blocks are whole warps)
    if (d.count[l] <= 0) {
        if (lane == 0) d.saturated[l] = 0;
        return;
    }
    const double share = core::link_share(d.remaining, d.count, l);
    bool keeps = false;
    for (int k = d.lo[l] + lane; k < d.lo[l] + d.live[l] && !keeps; k += warp)
        keeps = core::keeps_link_unsaturated(share, d.lf[k], d.rate, d.frozen);
    const bool any = __any_sync(full_mask, keeps);
    if (lane == 0) d.saturated[l] = any ? 0 : 1;
}

__global__ void flows_freeze(Device d) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= d.nf) return;
    if (core::spread_flow_freezes(f, d.fo, d.fl, d.saturated, d.frozen)) atomicAdd(d.counter, 1);
}

__global__ void links_take(Device d) {
    const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int l = static_cast<int>(t / warp), lane = static_cast<int>(t % warp);
    if (l >= d.nl) return;
    const int begin = d.lo[l], end = begin + d.live[l];
    double remaining = d.remaining[l];
    int count = d.count[l];
    int kept = begin;
    for (int base = begin; base < end; base += warp) {
        const int k = base + lane;
        const int f = k < end ? d.lf[k] : 0;
        const unsigned char state = k < end ? d.frozen[f] : core::frozen_before;
        const double r = state == core::newly_frozen ? d.rate[f] : 0.0;
        unsigned taken = __ballot_sync(full_mask, state == core::newly_frozen);
        const unsigned keep = __ballot_sync(full_mask, state == core::unfrozen);
        // The newly frozen flows' rates subtracted in the list's order (rising flow index), as the
        // CPU does, each passed to lane 0; the unfrozen stay, in order (every lane has read its
        // entry before any writes).
        for (; taken != 0; taken &= taken - 1) {
            const double rf = __shfl_sync(full_mask, r, __ffs(taken) - 1);
            if (lane == 0) core::take_from_link(remaining, count, rf, 1);
        }
        if (state == core::unfrozen) d.lf[kept + __popc(keep & ((1u << lane) - 1u))] = f;
        kept += __popc(keep);
        __syncwarp();
    }
    if (lane == 0) {
        d.remaining[l] = remaining;
        d.count[l] = count;
        d.live[l] = kept - begin;
    }
}

// Index building: crossing k's flow, then each link's first place among the sorted crossings.
__global__ void crossing_flows(int nf, const int* fo, int* flow_of) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= nf) return;
    for (int k = fo[f]; k < fo[f + 1]; ++k) flow_of[k] = f;
}
__global__ void link_starts(int nl, int crossings, const int* sorted_links, int* lo) {
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l > nl) return;
    int a = 0, b = crossings;  // the first place whose link is l or later
    while (a < b) {
        const int m = a + (b - a) / 2;
        if (sorted_links[m] < l) a = m + 1;
        else b = m;
    }
    lo[l] = a;
}

__global__ void flows_finish(Device d) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < d.nf) core::spread_finish_flow(f, d.active, d.fo, d.rate);
}

// A device buffer that grows and is kept: a drain's dozen arrays would otherwise cost a
// cudaMalloc and a (synchronising) cudaFree each, every phase.
template <typename T>
struct Buffer {
    T* data = nullptr;
    std::size_t capacity = 0;
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() {
        if (data) cudaFree(data);
    }
    T* hold(std::size_t n) {
        if (n > capacity) {
            if (data) cudaFree(data);
            data = nullptr;
            capacity = 0;
            check_cuda(cudaMalloc(&data, n * sizeof(T)), "cudaMalloc");
            capacity = n;
        }
        return data;
    }
    T* hold(const std::vector<T>& host) {
        hold(host.size());
        if (!host.empty())
            check_cuda(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "copy in");
        return data;
    }
};

// Every array of a spread solve, kept per host thread (one DeviceProblem at a time on a thread).
struct Scratch {
    Buffer<double> capacity, rate, remaining;
    Buffer<int> fo, fl, lo, lf, live_flows, live, count, counter, flow_of, sorted_links;
    Buffer<unsigned char> active, saturated, frozen, sort_temp;
};

// One problem on the device for the length of a drain: its arrays copied in once and its index
// built there, each solve copying the active flags in and the rates out.
class DeviceProblem {
public:
    explicit DeviceProblem(const FlowProblem& p) : nl_(p.link_count()), nf_(p.flow_count()), crossings_(static_cast<int>(p.flow_links.size())) {
        thread_local Scratch scratch;
        s_ = &scratch;
        const auto nl = static_cast<std::size_t>(nl_), nf = static_cast<std::size_t>(nf_);
        const auto nc = static_cast<std::size_t>(crossings_);
        d_ = Device{nl_, nf_, s_->capacity.hold(p.capacity_Bps), s_->fo.hold(p.flow_offsets), s_->fl.hold(p.flow_links),
                    s_->lo.hold(nl + 1), s_->live_flows.hold(nc), s_->live.hold(nl), s_->active.hold(nf),
                    s_->rate.hold(nf), s_->remaining.hold(nl), s_->count.hold(nl), s_->saturated.hold(nl),
                    s_->frozen.hold(nf), s_->counter.hold(1)};
        s_->lf.hold(nc);
        build_index();
    }

    void rates(const unsigned char* active, double* rate) {
        check_cuda(cudaMemcpy(s_->active.data, active, static_cast<std::size_t>(nf_), cudaMemcpyHostToDevice), "copy in");
        if (crossings_ > 0)  // each solve starts from the whole index
            check_cuda(cudaMemcpy(d_.lf, s_->lf.data, static_cast<std::size_t>(crossings_) * sizeof(int),
                                  cudaMemcpyDeviceToDevice),
                       "copy");
        const int flow_blocks = blocks_for(nf_);
        const int link_blocks = blocks_for(static_cast<long long>(nl_) * warp);
        set_counter(0);
        if (nl_ > 0) start_links<<<link_blocks, block>>>(d_);
        if (nf_ > 0) start_flows<<<flow_blocks, block>>>(d_);
        int unfrozen = read_counter();
        while (unfrozen > 0) {
            set_counter(0);
            flow_shares<<<flow_blocks, block>>>(d_);
            links_saturated<<<link_blocks, block>>>(d_);
            flows_freeze<<<flow_blocks, block>>>(d_);
            links_take<<<link_blocks, block>>>(d_);
            unfrozen -= read_counter();  // waits for the round
        }
        if (nf_ > 0) flows_finish<<<flow_blocks, block>>>(d_);
        check_cuda(cudaGetLastError(), "kernel launch");
        check_cuda(cudaDeviceSynchronize(), "kernel");
        if (nf_ > 0)
            check_cuda(cudaMemcpy(rate, d_.rate, static_cast<std::size_t>(nf_) * sizeof(double), cudaMemcpyDeviceToHost),
                       "copy out");
    }

private:
    // The index (s_->lf and d_.lo): the crossings (link, flow) sorted by link, stably.
    void build_index() {
        const auto nc = static_cast<std::size_t>(crossings_);
        int* sorted_links = s_->sorted_links.hold(nc);
        if (crossings_ > 0) {
            int* flow_of = s_->flow_of.hold(nc);
            crossing_flows<<<blocks_for(nf_), block>>>(nf_, d_.fo, flow_of);
            int bits = 1;
            while (bits < 31 && (1 << bits) < nl_) ++bits;
            std::size_t temp_bytes = 0;
            check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, d_.fl, sorted_links, flow_of, s_->lf.data,
                                                       crossings_, 0, bits),
                       "sort size");
            unsigned char* temp = s_->sort_temp.hold(std::max<std::size_t>(temp_bytes, 1));
            check_cuda(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, d_.fl, sorted_links, flow_of, s_->lf.data,
                                                       crossings_, 0, bits),
                       "sort");
        }
        link_starts<<<blocks_for(static_cast<long long>(nl_) + 1), block>>>(nl_, crossings_, sorted_links, s_->lo.data);
        check_cuda(cudaGetLastError(), "kernel launch");
        check_cuda(cudaDeviceSynchronize(), "index");
    }
    void set_counter(int v) { check_cuda(cudaMemcpy(d_.counter, &v, sizeof v, cudaMemcpyHostToDevice), "copy in"); }
    int read_counter() {
        int v = 0;
        check_cuda(cudaMemcpy(&v, d_.counter, sizeof v, cudaMemcpyDeviceToHost), "copy out");
        return v;
    }
    int nl_, nf_, crossings_;
    Scratch* s_ = nullptr;
    Device d_{};
};

}  // namespace

std::vector<double> cuda_spread_rates(const FlowProblem& problem) {
    const auto nf = static_cast<std::size_t>(problem.flow_count());
    std::vector<unsigned char> active(nf);
    for (std::size_t f = 0; f < nf; ++f) active[f] = problem.flow_bytes[f] > 0.0;
    std::vector<double> rate(nf);
    DeviceProblem device(problem);
    device.rates(active.data(), rate.data());
    return rate;
}

void cuda_spread_drain(const FlowProblem& problem, DrainResult& out) {
    const auto nf = static_cast<std::size_t>(problem.flow_count());
    std::vector<double> rate(nf), left(nf);
    std::vector<unsigned char> active(nf);
    std::vector<int> order(nf);
    out.finish_s.resize(nf);
    DeviceProblem device(problem);
    const auto rates = [&](const unsigned char* on, double* r) { device.rates(on, r); };
    out.makespan_s = core::drain_flows_by(rates, problem.flow_count(), problem.flow_offsets.data(),
                                          problem.flow_bytes.data(), problem.flow_latency_s.data(), out.finish_s.data(),
                                          rate.data(), left.data(), active.data(), order.data());
}

}  // namespace skyfabric::workloads::detail
