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

// One problem on the device for the length of a drain: its arrays copied in once, each solve
// copying the active flags in and the rates out.
class DeviceProblem {
public:
    explicit DeviceProblem(const FlowProblem& p)
        : nl_(p.link_count()), nf_(p.flow_count()), capacity_(p.capacity_Bps), fo_(p.flow_offsets), fl_(p.flow_links),
          lo_(static_cast<std::size_t>(nl_) + 1), lf_(p.flow_links.size()), live_flows_(p.flow_links.size()),
          live_(static_cast<std::size_t>(nl_)), incidences_(p.flow_links.size()), active_(static_cast<std::size_t>(nf_)),
          rate_(static_cast<std::size_t>(nf_)), remaining_(static_cast<std::size_t>(nl_)),
          count_(static_cast<std::size_t>(nl_)), saturated_(static_cast<std::size_t>(nl_)),
          frozen_(static_cast<std::size_t>(nf_)), counter_(1) {
        build_index();
    }

    void rates(const unsigned char* active, double* rate) {
        check_cuda(cudaMemcpy(active_.data, active, static_cast<std::size_t>(nf_), cudaMemcpyHostToDevice), "copy in");
        if (incidences_ > 0)
            check_cuda(cudaMemcpy(live_flows_.data, lf_.data, incidences_ * sizeof(int), cudaMemcpyDeviceToDevice),
                       "copy");
        const Device d{nl_, nf_, capacity_.data, fo_.data, fl_.data, lo_.data, live_flows_.data, live_.data, active_.data,
                       rate_.data, remaining_.data, count_.data, saturated_.data, frozen_.data, counter_.data};
        const int flow_blocks = blocks_for(nf_);
        const int link_blocks = blocks_for(static_cast<long long>(nl_) * warp);
        set_counter(0);
        if (nl_ > 0) start_links<<<link_blocks, block>>>(d);
        if (nf_ > 0) start_flows<<<flow_blocks, block>>>(d);
        int unfrozen = read_counter();
        while (unfrozen > 0) {
            set_counter(0);
            flow_shares<<<flow_blocks, block>>>(d);
            links_saturated<<<link_blocks, block>>>(d);
            flows_freeze<<<flow_blocks, block>>>(d);
            links_take<<<link_blocks, block>>>(d);
            unfrozen -= read_counter();  // waits for the round
        }
        if (nf_ > 0) flows_finish<<<flow_blocks, block>>>(d);
        check_cuda(cudaGetLastError(), "kernel launch");
        check_cuda(cudaDeviceSynchronize(), "kernel");
        if (nf_ > 0)
            check_cuda(cudaMemcpy(rate, rate_.data, static_cast<std::size_t>(nf_) * sizeof(double), cudaMemcpyDeviceToHost),
                       "copy out");
    }

private:
    // lo_ and lf_: the crossings (link, flow) sorted by link, stably.
    void build_index() {
        const int crossings = static_cast<int>(incidences_);
        DeviceArray<int> flow_of(incidences_), sorted_links(incidences_);
        if (crossings > 0) {
            crossing_flows<<<blocks_for(nf_), block>>>(nf_, fo_.data, flow_of.data);
            int bits = 1;
            while (bits < 31 && (1 << bits) < nl_) ++bits;
            std::size_t temp_bytes = 0;
            check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, fl_.data, sorted_links.data, flow_of.data,
                                                       lf_.data, crossings, 0, bits),
                       "sort size");
            DeviceArray<unsigned char> temp(temp_bytes);
            check_cuda(cub::DeviceRadixSort::SortPairs(temp.data, temp_bytes, fl_.data, sorted_links.data, flow_of.data,
                                                       lf_.data, crossings, 0, bits),
                       "sort");
        }
        link_starts<<<blocks_for(static_cast<long long>(nl_) + 1), block>>>(nl_, crossings, sorted_links.data, lo_.data);
        check_cuda(cudaGetLastError(), "kernel launch");
        check_cuda(cudaDeviceSynchronize(), "index");
    }
    void set_counter(int v) { check_cuda(cudaMemcpy(counter_.data, &v, sizeof v, cudaMemcpyHostToDevice), "copy in"); }
    int read_counter() {
        int v = 0;
        check_cuda(cudaMemcpy(&v, counter_.data, sizeof v, cudaMemcpyDeviceToHost), "copy out");
        return v;
    }
    int nl_, nf_;
    DeviceArray<double> capacity_;
    DeviceArray<int> fo_, fl_;
    DeviceArray<int> lo_, lf_;  // the link → flow CSR
    DeviceArray<int> live_flows_, live_;  // a solve's copy of lf_, kept to the unfrozen; per link its length
    std::size_t incidences_;              // lf_'s length
    DeviceArray<unsigned char> active_;
    DeviceArray<double> rate_, remaining_;
    DeviceArray<int> count_;
    DeviceArray<unsigned char> saturated_, frozen_;
    DeviceArray<int> counter_;
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
