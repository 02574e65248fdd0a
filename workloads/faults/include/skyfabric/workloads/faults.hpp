#pragma once
// Radiation faults on the accelerators and what they cost a training job.
//
//  1. Device: per-chip dose-per-event figures (Trillium v6e in a 67 MeV proton beam,
//     docs/references.md "Radiation") turn a dose rate into event rates per fault kind:
//         λ_k(t) = n_k · Ḋ(t) / D_k      (n_k chips or hosts per satellite, D_k rad per event)
//     which is the cross-section view λ = n σ Φ with σ = 1/(7.9e6 · D) cm² and
//     Φ = 7.9e6 · Ḋ protons/cm²/s (the paper's conversion, physics/radiation.hpp).
//  2. Events: a non-homogeneous Poisson process per (satellite, kind) on the piecewise-linear
//     rate through the dose-rate samples, drawn by thinning (Lewis & Shedler 1979) with
//     Philox counters keyed by the scenario seed (physics/random.hpp): the draw for candidate
//     c of stream (trial, satellite) is a pure function, so any backend that walks the
//     same loop (core::sample_satellite_faults, host+device: the CPU loop and the CUDA
//     kernel, one GPU thread per stream) draws the same events.
//  3. Recovery: simulate_training_with_faults() plays the events against a job that takes
//     steps, writes a checkpoint every τ of useful compute (cost δ), rolls back and restarts
//     (R) on HBM UECC and crashes, recomputes steps with detected SDC, counts silent ones,
//     reboots crashed satellites, and waits for them, shrinks the ring or swaps in hot spares;
//     with a FabricModel the trial's link outages and rebooting satellites damage the fabric the
//     steps run on. Goodput = useful time / elapsed.
//  4. Monte Carlo over trials (events drawn in batches, on the GPU when present; trials played
//     on CPU threads): mean and 95 % intervals of goodput and failures per day.
// Files: fault_rates.cpp (1), fault_sampling.cpp (2), recovery.cpp (3), monte_carlo.cpp (4).
// Pure: no I/O. SI units; doses in rad(Si).

#include <skyfabric/links/satellite_status.hpp>
#include <skyfabric/physics/enum_names.hpp>
#include <skyfabric/physics/random.hpp>
#include <skyfabric/physics/settings_problem.hpp>
#include <skyfabric/workloads/backend.hpp>
#include <skyfabric/workloads/training.hpp>

#include <array>
#include <stdexcept>
#include <atomic>
#include <limits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace skyfabric::workloads {

enum class FaultKind : std::uint8_t {
    sdc = 0,          // silent data corruption in logic/SRAM
    hbm_uecc = 1,     // HBM uncorrectable ECC error
    chip_crash = 2,   // functional interrupt of an accelerator (SEFI)
    host_crash = 3,   // host CPU or RAM upset that takes the satellite's host down
    link_outage = 4,  // optical terminal loss (optional, not dose-driven)
};
inline constexpr auto fault_kind_names = physics::enum_names<FaultKind>({
    {FaultKind::sdc, "sdc"},
    {FaultKind::hbm_uecc, "hbm_uecc"},
    {FaultKind::chip_crash, "chip_crash"},
    {FaultKind::host_crash, "host_crash"},
    {FaultKind::link_outage, "link_outage"},
});
inline constexpr int fault_kind_count = static_cast<int>(fault_kind_names.size());
inline const char* fault_kind_name(FaultKind kind) { return fault_kind_names.name(kind); }

// True for the kinds that abort the step and roll back to the last checkpoint.
inline bool fault_interrupts(FaultKind k) {
    return k == FaultKind::hbm_uecc || k == FaultKind::chip_crash || k == FaultKind::host_crash;
}
// True for the kinds that take the satellite down for the reboot time.
inline bool fault_crashes(FaultKind k) { return k == FaultKind::chip_crash || k == FaultKind::host_crash; }

// Dose per event, rad(Si), per chip (per host for the host figures).
struct DeviceCrossSections {
    std::string name = "trillium_v6e";
    double sdc_rad_per_event = 17.2;          // 14.4–20 rad per SDC: midpoint
    double hbm_uecc_rad_per_event = 44.0;
    double chip_crash_rad_per_event = 5000.0;  // functional interrupt: 1 per 5 krad
    double host_cpu_rad_per_event = 450.0;
    double host_ram_rad_per_event = 400.0;
    bool operator==(const DeviceCrossSections&) const = default;
};
// Trillium (TPU v6e), docs/references.md "Radiation".
DeviceCrossSections trillium_v6e();
// Named preset ("trillium_v6e", "tpu_v6e"); throws std::invalid_argument otherwise.
DeviceCrossSections device_preset(const std::string& name);

// σ = 1 / (7.9e6 · D) cm² (≈ 1.27e-7 / D, the paper's form) and its inverse.
double cross_section_cm2(double rad_per_event);
double rad_per_event(double cross_section_cm2);

// ---- Operational faults: what clusters on the ground see (docs/faults.md "Operational faults") ----

// What an operational fault does (the play treats it as the radiation kind named):
enum class OperationalEffect : std::uint8_t {
    restart = 0,    // the job rolls back and restarts; no rank lost (a software bug, a watchdog timeout): as hbm_uecc
    reboot = 1,     // a rank's node is lost: rollback, the node out for reboot_s, on_rank_loss applies: as chip_crash
    manual = 2,     // as reboot, and the job waits manual_s for a person before its restart
    link_down = 3,  // one of the rank's links down for link_outage_s (rerouted with a fabric): as link_outage
};
inline constexpr auto operational_effect_names = physics::enum_names<OperationalEffect>({
    {OperationalEffect::restart, "restart"},
    {OperationalEffect::reboot, "reboot"},
    {OperationalEffect::manual, "manual"},
    {OperationalEffect::link_down, "link_down"},
});
// The causes an operational table may hold (a fixed bound, so a trial's counts per cause stay a
// plain array that the MPI gather copies as bytes).
inline constexpr int max_operational_causes = 32;

struct OperationalCause {
    std::string name;
    double rate_per_gpu_s = 0.0;  // events per accelerator-second (the sources count per GPU of the job)
    OperationalEffect effect = OperationalEffect::reboot;
    double manual_s = 0.0;        // manual: how long the job waits for a person before its restart
    bool operator==(const OperationalCause&) const = default;
};

// Failure rates per component-day by cause, with what each does; constant in time. Each rank
// (satellite or node) carries gpus_per_rank accelerators, so its rate is gpus_per_rank Σ_c rate_c
// (× its weight below), on every rank alike unless hot_ranks are set.
struct OperationalFaults {
    std::vector<OperationalCause> causes;
    std::int32_t gpus_per_rank = 1;
    // A few bad nodes: the first hot_ranks ranks carry hot_share of every cause's events between
    // them, the others the rest (0 hot ranks: uniform).
    std::int32_t hot_ranks = 0;
    double hot_share = 0.0;
    // Automatic retry chains after an interrupt: one succeeds with retry_success_probability (the
    // restart R follows); a failed chain costs retry_attempts × retry_interval_s, then
    // manual_recovery_s, before the restart. Drawn with the event (its mark).
    double retry_success_probability = 1.0;
    std::int32_t retry_attempts = 0;
    double retry_interval_s = 0.0;
    double manual_recovery_s = 0.0;
    bool enabled() const { return !causes.empty(); }
    bool operator==(const OperationalFaults&) const = default;
};
// Presets with their sources (docs/references.md "Failures on the ground"): "llama3_405b" (Meta's
// 54-day snapshot on 16,384 H100: 419 unexpected interruptions by cause) and "b200_504" (63 nodes
// of 8 B200, 10 GPU failures in 55 days, three nodes with half of them, retry chains succeeding a
// third of the time). Throws std::invalid_argument for another name.
OperationalFaults operational_preset(const std::string& name);
inline constexpr const char* operational_preset_names[] = {"llama3_405b", "b200_504"};
// Per-rank rate of every cause together (1/s).
double operational_rate_per_rank_s(const OperationalFaults& faults);
// Rate of the causes that interrupt the job (every effect but link_down), per rank, 1/s.
double operational_interrupt_rate_per_rank_s(const OperationalFaults& faults);
// Rank r's share of the ranks' events (1/ranks when uniform).
double operational_rank_weight(const OperationalFaults& faults, std::int32_t rank, std::int32_t ranks);
physics::SettingsProblems check(const OperationalFaults& faults);

struct FaultModel {
    DeviceCrossSections device = trillium_v6e();
    std::int32_t chips_per_satellite = 1;   // accelerators per satellite (tensor_parallel)
    std::int32_t hosts_per_satellite = 1;
    double link_outage_rate_per_s = 0.0;    // per satellite, constant (0 = off)
    // A constellation's gateway terminals: each satellite listed carries one more terminal (its links
    // to the other clusters) that fails at this constant rate, apart from its ISL terminals.
    double gateway_outage_rate_per_s = 0.0;
    std::vector<std::int32_t> gateway_satellites;
    double sdc_detection_probability = 0.9; // detected SDC → step recomputed; else silent
    // Every rate (dose-driven and link outages) multiplied by this: a stress test that makes faults
    // happen in every trial of a short run (scenario radiation.rate_scale).
    double rate_scale = 1.0;
    // Operational faults beside (or instead of) the dose-driven ones: constant-rate streams per
    // satellite, fault_stream_id(trial, satellite, 6); rate_scale does not apply to them.
    OperationalFaults operational;
    bool operator==(const FaultModel&) const = default;
};

// What the fault draw refuses, by field name: a detection probability outside [0, 1], negative
// outage rates, a rate_scale that is negative or not finite.
physics::SettingsProblems check(const FaultModel& model);

// Per-satellite event rates (1/s) at a dose rate: λ_k = n_k Ḋ / D_k; host: n_h Ḋ (1/D_cpu + 1/D_ram).
// link_outage: the constant configured rate.
std::array<double, fault_kind_count> fault_rates_per_s(double dose_rate_rad_s, const FaultModel& model);
// Same from an equivalent 67 MeV proton flux: λ_k = n_k σ_k Φ. Equal to the above at Φ = 7.9e6 Ḋ.
std::array<double, fault_kind_count> fault_rates_from_flux_per_s(double flux_p_cm2_s, const FaultModel& model);

// Dose rate per satellite, sampled at start_s + j·step_s, j < sample_count; row-major
// [sample][satellite] (the T×N layout of /radiation/dose_rate_rad_s). Between samples the
// rate is linear; after the last sample it holds the last value. sample_count 1: constant.
struct DoseRateSeries {
    double start_s = 0.0;
    double step_s = 1.0;
    std::int64_t sample_count = 0;
    std::int32_t satellite_count = 0;
    std::vector<double> dose_rate_rad_s;
};
// Constant dose rate for every satellite.
DoseRateSeries constant_dose_rate(std::int32_t satellite_count, double dose_rate_rad_s);

struct FaultEvent {
    double time_s = 0.0;
    std::int32_t satellite = 0;
    FaultKind kind = FaultKind::sdc;
    bool detected = false;  // SDC only: caught by the step's checks (drawn with the event)
    double mark = 0.0;      // link outage only: a uniform in [0, 1) that picks which of its links
    bool gateway = false;   // link outage only: of the gateway terminal (one of its links to other clusters)
    // An operational fault: its cause in FaultModel::operational.causes (-1: a radiation event), and
    // how long the job waits before its restart beyond the usual recovery (manual intervention, a
    // failed retry chain). Both in the padding: the event stays 32 bytes.
    std::int16_t cause = -1;
    float hold_s = 0.0f;
};
static_assert(sizeof(FaultEvent) == 32, "a batch of trials holds up to max_fault_events_in_memory events");

// Expected event counts ∫_0^T Σ_sat λ_k dt per kind (exact for the piecewise-linear rate); the
// radiation kinds and terminal outages only (the operational ones: expected_operational_counts).
std::array<double, fault_kind_count> expected_fault_counts(const DoseRateSeries& series, const FaultModel& model,
                                                           double duration_s);
// Expected operational events by cause over [0, duration_s) on `satellites` ranks.
std::vector<double> expected_operational_counts(const FaultModel& model, std::int32_t satellites, double duration_s);

// Events over [0, duration_s) for one trial, sorted by (time, satellite, kind). The Philox key
// is derive_seed(seed, faults tag). Per satellite, the dose-driven kinds (sdc, hbm_uecc,
// chip_crash, host_crash) are one thinned stream at the summed rate, stream id
// fault_stream_id(trial, satellite, 0), each event marked with its kind in proportion to the
// kinds' rates (Poisson marking; the mark's uniform also decides SDC detection); link outages
// are a constant-rate stream fault_stream_id(trial, satellite, 4); a gateway satellite's gateway
// terminal outages (kind link_outage, gateway set) another, fault_stream_id(trial, satellite, 5).
std::vector<FaultEvent> sample_fault_events(const DoseRateSeries& series, const FaultModel& model, double duration_s,
                                            std::uint64_t seed, std::uint64_t trial = 0);
// Trials first_trial … first_trial+trials-1, each as sample_fault_events would draw it. On the
// CUDA backend one GPU thread draws one (trial, satellite) stream with the same function
// (core::sample_satellite_faults); times agree with the CPU's to the last bits of the
// logarithm (the GPU's log may differ by an ulp), every other field exactly.
std::vector<std::vector<FaultEvent>> sample_fault_events_batch(const DoseRateSeries& series, const FaultModel& model,
                                                               double duration_s, std::uint64_t seed,
                                                               std::uint64_t first_trial, std::int32_t trials,
                                                               Backend backend = Backend::cpu);

// ---- Recovery and goodput ----

// What the job does when a rank's satellite crashes (chip or host) and reboots:
enum class RankLossPolicy : std::uint8_t {
    wait = 0,    // roll back, wait for the satellite, restart over the same ranks
    shrink = 1,  // roll back, restart at once over the survivors (data-parallel batch shrunk);
                 // the satellite rejoins at the first checkpoint after its reboot
    spare = 2,   // roll back, swap in the earliest-available hot spare if it is up sooner, else wait
};
inline constexpr auto rank_loss_policy_names = physics::enum_names<RankLossPolicy>({
    {RankLossPolicy::wait, "wait"}, {RankLossPolicy::shrink, "shrink"}, {RankLossPolicy::spare, "spare"}});
inline const char* rank_loss_policy_name(RankLossPolicy policy) { return rank_loss_policy_names.name(policy); }

// How a checkpoint is taken: blocking (the job stops for checkpoint_cost_s while it is written) or
// async (the job stops only to snapshot its state to host memory; the write to storage, lasting
// checkpoint_cost_s, overlaps training, and a fault before it completes rolls back to the last
// completed checkpoint).
enum class CheckpointMode : std::uint8_t { blocking = 0, async = 1 };
inline constexpr auto checkpoint_mode_names =
    physics::enum_names<CheckpointMode>({{CheckpointMode::blocking, "blocking"}, {CheckpointMode::async, "async"}});

struct RecoveryConfig {
    double checkpoint_interval_s = 0.0;  // useful compute between checkpoints, τ; 0 = auto
    double mtbf_s = 0.0;                 // interruption MTBF for auto (Daly); see interruption_mtbf_s
    double checkpoint_cost_s = 60.0;     // δ, paid while no training happens
    double restart_s = 300.0;            // R: reload the checkpoint, rejoin the collective
    double reboot_s = 600.0;             // a crashed satellite is unavailable this long
    std::int32_t spare_satellites = 0;   // the highest-numbered satellites start as hot spares
    // Spares kept per group of this many satellites, numbered group after group (a constellation's
    // clusters): each group's last spare_satellites start as spares and replace only its own ranks.
    // 0: one group, every satellite.
    std::int32_t spare_group_size = 0;
    RankLossPolicy on_rank_loss = RankLossPolicy::spare;  // spare with no spares = wait
    double link_outage_s = 60.0;         // a terminal outage keeps its link down this long
    // A failed gateway link (between clusters) is detected this long after it fails; until then the
    // routes still send it their share and it is lost (blackholed): a step whose collectives cross
    // it makes no progress until the failure is detected, then re-sends what was lost over the
    // surviving paths. 0: detected at once (the routes re-weight at the failure).
    double gateway_failover_s = 0.0;
    // Shrink keeps the ranks taking part a multiple of this (a mixture of experts' expert_parallel:
    // its all-to-all groups must be whole); the survivors left over idle until the next checkpoint
    // at which enough ranks are up to fill a group (GoodputResult::ranks_idled).
    std::int32_t rank_multiple = 1;
    CheckpointMode checkpoint_mode = CheckpointMode::blocking;
    // async: each rank copies snapshot_bytes_per_rank to host memory at snapshot_bandwidth_Bps
    // (the ranks in parallel); the job stalls for that copy only (checkpoint_stall_s).
    double snapshot_bytes_per_rank = 0.0;
    double snapshot_bandwidth_Bps = 0.0;
    bool operator==(const RecoveryConfig&) const = default;
};

// What a checkpoint stops the job for: checkpoint_cost_s (blocking) or the snapshot's copy (async).
double checkpoint_stall_s(const RecoveryConfig& config);

// Whether satellite s starts as a hot spare: among the last spare_satellites of its group.
bool starts_as_spare(const RecoveryConfig& config, std::int32_t satellite, std::int32_t satellite_count);
// The satellites that start as ranks: satellite_count less every group's spares.
std::int32_t initial_rank_count(const RecoveryConfig& config, std::int32_t satellite_count);

// What the recovery model refuses, by field name, on `satellite_count` satellites: negative costs
// and times, no checkpoint cost with the auto interval (Daly's needs one), spares that leave no
// working satellite (in a group), groups that do not divide the satellites, a rank_multiple below 1.
// (The auto interval's mtbf_s is set by the caller from the run, not a setting.)
physics::SettingsProblems check(const RecoveryConfig& config, std::int32_t satellite_count);

// τ used: checkpoint_interval_s if > 0, else Daly(δ, mtbf_s) (job.hpp daly_interval_s).
// Throws std::invalid_argument when auto and mtbf_s <= 0.
double resolve_checkpoint_interval_s(const RecoveryConfig& config);

// Mean interrupt rate (UECC + chip crash + host crash) summed over the active satellites
// 0 … active_satellites-1, time-averaged over [0, duration_s); its inverse is the MTBF for Daly.
double interruption_rate_per_s(const DoseRateSeries& series, const FaultModel& model, std::int32_t active_satellites,
                               double duration_s);
double interruption_mtbf_s(const DoseRateSeries& series, const FaultModel& model, std::int32_t active_satellites,
                           double duration_s);
// The same over the satellites that start as ranks: the first initial_rank_count when the spares are
// the highest-numbered; with spare groups (a constellation's clusters), every satellite's rate scaled
// to the ranks' count (a cluster's spares fly beside its ranks and see their dose).
double ranks_interruption_mtbf_s(const DoseRateSeries& series, const FaultModel& model, const RecoveryConfig& recovery,
                                 double duration_s);
// The same at a constant dose rate on every active satellite, e.g. the orbit's long-term average
// (a run's own history depends on which SAA passes it covered): 1 / (active Σ_interrupts λ_k(Ḋ)).
double interruption_mtbf_at_dose_rate_s(double dose_rate_rad_s, const FaultModel& model, std::int32_t active_satellites);

// The step duration at wall time t of a StepDurations (training.hpp).
double step_duration_at_s(const StepDurations& steps, double wall_time_s);

enum class FaultEffect : std::uint8_t {
    none = 0,               // hit an idle/spare satellite's compute, or during a checkpoint/restart (SDC)
    step_recomputed = 1,    // detected SDC: the step is run again
    silent_corruption = 2,  // undetected SDC: the step counts, corrupted
    rollback = 3,           // UECC/crash on an active rank: back to the last checkpoint
    reboot = 4,             // crash of an idle or spare satellite: unavailable for reboot_s
    link_down = 5,          // link outage: its link is down for link_outage_s (with a fabric: rerouted)
    after_end = 6,          // at or after the end of the run
};
inline constexpr auto fault_effect_names = physics::enum_names<FaultEffect>({
    {FaultEffect::none, "none"},
    {FaultEffect::step_recomputed, "step_recomputed"},
    {FaultEffect::silent_corruption, "silent_corruption"},
    {FaultEffect::rollback, "rollback"},
    {FaultEffect::reboot, "reboot"},
    {FaultEffect::link_down, "link_down"},
    {FaultEffect::after_end, "after_end"},
});
inline const char* fault_effect_name(FaultEffect effect) { return fault_effect_names.name(effect); }

// What the job was doing over an interval of its timeline (GoodputResult::timeline).
enum class JobPhase : std::uint8_t {
    step = 0,                    // a training step, completed and kept
    step_corrupted = 1,          // completed with an undetected SDC, kept (counted as corrupted)
    step_recomputed = 2,         // a detected SDC: the step is run again
    step_rolled_back = 3,        // completed, then lost to a rollback before the next checkpoint
    step_interrupted = 4,        // cut short by a UECC or crash on an active rank
    checkpoint = 5,              // checkpoint written
    checkpoint_interrupted = 6,  // checkpoint cut short by an interrupt
    recovery = 7,                // waiting for the satellite or a spare, then restart R
    unfinished = 8,              // step or checkpoint cut by the end of the run
    stalled = 9,                 // the damaged fabric cannot complete a collective: wait for a repair
};
inline constexpr auto job_phase_names = physics::enum_names<JobPhase>({
    {JobPhase::step, "step"},
    {JobPhase::step_corrupted, "step_corrupted"},
    {JobPhase::step_recomputed, "step_recomputed"},
    {JobPhase::step_rolled_back, "step_rolled_back"},
    {JobPhase::step_interrupted, "step_interrupted"},
    {JobPhase::checkpoint, "checkpoint"},
    {JobPhase::checkpoint_interrupted, "checkpoint_interrupted"},
    {JobPhase::recovery, "recovery"},
    {JobPhase::unfinished, "unfinished"},
    {JobPhase::stalled, "stalled"},
});
inline const char* job_phase_name(JobPhase phase) { return job_phase_names.name(phase); }

struct JobInterval {
    double start_s = 0.0;
    double end_s = 0.0;
    JobPhase phase = JobPhase::step;
};

// A rank moved from a satellite that went down to a hot spare, during the recovery at time_s.
struct SpareSwap {
    double time_s = 0.0;
    std::int32_t failed = 0;  // now held in reserve (once it has rebooted)
    std::int32_t spare = 0;   // now a rank
};

// What faults have done to the fabric at an instant of one trial (all lists sorted).
struct FabricDamage {
    std::vector<std::pair<std::int32_t, std::int32_t>> links_down;  // (source < target), terminal outages
    std::vector<std::int32_t> satellites_down;  // rebooting: they neither compute nor forward
    std::vector<std::int32_t> ranks;            // satellites holding the job's ranks
};

// What the play asks of the fabric the job runs on (damaged_fabric.hpp implements it over the
// run's topology timeline). Without one, faults cost only their checkpoint/restart arithmetic.
// Implementations must be safe to call from several threads (the trials run in parallel).
class FabricModel {
public:
    virtual ~FabricModel() = default;
    // Extra time of a step started at t on the damaged fabric over the same step on the undamaged
    // one with the initial ranks (may be < 0: fewer ranks); +inf when the damaged fabric cannot
    // complete the step's collectives (a rank cut off).
    virtual double extra_step_s(double t, const FabricDamage& damage) = 0;
    // The link a terminal outage on `satellite` at t takes down: one of its usable links, picked
    // by mark in [0, 1) — its gateway links (to other clusters) for a gateway terminal's, else its
    // other links. Returns false (and leaves `link`) when it has none.
    virtual bool outage_link(std::int32_t satellite, double t, double mark, bool gateway,
                             std::pair<std::int32_t, std::int32_t>& link) const = 0;
    // The first instant after t at which the undamaged fabric changes (+inf: never).
    virtual double next_change_s(double t) const = 0;
    // What a failed gateway link (between clusters) blackholes until its failure is detected
    // (RecoveryConfig::gateway_failover_s): the bytes a step started at t on the damaged fabric
    // puts on it when it crosses it (0: no step does), and the share of steps that cross it (1
    // when every step syncs; 1/H for a dense local-SGD job, whose outer sync alone crosses).
    struct LinkTraffic {
        double bytes = 0.0;
        double step_share = 1.0;
    };
    virtual LinkTraffic link_traffic(double t, const FabricDamage& damage, std::pair<std::int32_t, std::int32_t> link) = 0;
};

// A link a terminal outage took down, over [start_s, end_s) (end_s may pass the run's end).
struct LinkOutage {
    double start_s = 0.0;
    double end_s = 0.0;
    std::int32_t source = 0;  // source < target
    std::int32_t target = 0;
};

struct OperationalCounts {
    std::array<std::int64_t, max_operational_causes> events{};
    std::array<std::int64_t, max_operational_causes> interruptions{};
    std::array<double, max_operational_causes> lost_s{};
};

struct GoodputResult {
    double elapsed_s = 0.0;
    double useful_s = 0.0;              // compute of completed steps not rolled back
    double goodput = 0.0;               // useful_s / elapsed_s
    double checkpoint_interval_s = 0.0; // τ used
    std::int64_t steps_completed = 0;
    std::int64_t corrupted_steps = 0;   // completed steps with an undetected SDC
    std::int64_t recomputed_steps = 0;
    std::int64_t checkpoints = 0;
    std::int64_t rollbacks = 0;         // interruptions (including ones during a restart)
    std::int64_t replacements = 0;      // ranks moved to a hot spare
    std::int64_t ranks_lost = 0;        // crashes of satellites holding a rank
    std::int64_t ranks_idled = 0;       // shrink: surviving ranks set aside to keep rank_multiple
    std::int64_t links_lost = 0;        // terminal outages that took a link down
    std::int64_t gateway_links_lost = 0;  // of them, gateway terminals' (links between clusters)
    std::int64_t damaged_steps = 0;     // steps run on a damaged fabric (rerouted, or fewer ranks)
    // Gateway failover (RecoveryConfig::gateway_failover_s): steps' time stalled on a failed link not
    // yet detected (part of fabric_loss_s), and the bytes sent into it, re-sent after detection.
    double failover_stall_s = 0.0;
    double bytes_retried = 0.0;
    double step_time_median_s = 0.0;    // over completed steps (damaged ones included)
    double step_time_p99_s = 0.0;
    // Where the rest of the time went; useful + all of these − fabric_gain_s = elapsed.
    std::array<double, fault_kind_count> rework_s{};    // rolled-back work + interrupted step/checkpoint
    std::array<double, fault_kind_count> recovery_s{};  // wait for a satellite + restart R (repeats included)
    double sdc_recompute_s = 0.0;
    double checkpoint_s = 0.0;          // completed checkpoints
    double tail_s = 0.0;                // unfinished step or checkpoint at the end
    // Steps' extra time on a damaged fabric (reroutes, re-formed rings), split by sign so that
    // neither is negative: a smaller re-formed ring can be faster than the full one (a gain).
    double fabric_loss_s = 0.0;         // sum of the steps' positive extras
    double fabric_gain_s = 0.0;         // sum of the steps' negative extras, as a positive number
    double stalled_s = 0.0;             // waiting for a path: the damaged fabric could not complete a step
    double shrunk_s = 0.0;              // work a shrunk ring did not do: step time × (1 − ranks/initial ranks)
    double restart_total_s = 0.0;       // the restarts R within recovery_s (repeats included)
    std::array<std::int64_t, fault_kind_count> events_by_kind{};  // radiation events in [0, elapsed)
    // Operational events (FaultEvent::cause >= 0), by cause: those in [0, elapsed), those that
    // interrupted the job, and the time each cause cost (its rework and recovery, also in the
    // per-kind arrays above under the kind its effect plays as).
    OperationalCounts operational;
    std::vector<FaultEffect> effects;   // one per input event
    // With record_timeline: the job's phases in order, tiling [0, elapsed_s).
    std::vector<JobInterval> timeline;
    std::vector<SpareSwap> swaps;  // in time order (replacements of them)
    std::vector<LinkOutage> link_outages;  // with record_timeline and a fabric, in time order
};

// What each satellite was going through at an instant, for pictures of the run (the VTK frames'
// `status`): the one enum viz::SatelliteStatus also names.
using SatelliteCondition = links::SatelliteStatus;

// Each satellite's condition at t1, with (t0, t1] the time since the previous picture: rebooting
// when a crash (chip or host) hit it within reboot_s before t1; else faulted when any fault event
// hit it in (t0, t1]; else spare when held in reserve at t1 (starts_as_spare at first, then as the
// play's swaps moved them); else ok. events sorted by time.
std::vector<SatelliteCondition> satellite_conditions(std::span<const FaultEvent> events,
                                                     std::span<const SpareSwap> swaps,
                                                     std::int32_t satellite_count, const RecoveryConfig& config,
                                                     double t0, double t1);

// Play sorted events (sample_fault_events) against the job over [0, duration_s). Satellites
// 0 … N-S-1 start as ranks, N-S … N-1 as spares (S = spare_satellites); with spare_group_size G,
// the last S of each group of G are its spares and replace only its ranks. Rules:
//  - a step starting at t lasts d = step_duration_at_s(t); a detected SDC on an active rank
//    during it makes the step run again; an undetected one marks it corrupted;
//  - UECC/crash on an active rank during a step or checkpoint: the work since the last
//    checkpoint and the partial step/checkpoint are lost (rework); then recovery: a crashed
//    satellite is down for reboot_s and is replaced by the earliest-available spare if that is
//    sooner, else the job waits for it; then restart R, which an interrupt on an active rank
//    starts again (as in Daly's model);
//  - after τ of useful compute since the last checkpoint, a checkpoint of δ is written;
//  - crashes of idle/spare satellites only take them down;
//  - on_rank_loss (RecoveryConfig) says what a crash of a rank does: wait, shrink or spare;
//  - with a fabric: a terminal outage takes one of its satellite's links down for link_outage_s,
//    and a step started while the fabric is damaged (links down, satellites rebooting, ranks
//    moved or dropped) lasts step_duration_at_s(t) + fabric->extra_step_s(t, damage) — the
//    damage at the step's start holds for the step; a step that cannot complete (+inf) waits
//    (stalled) until the next repair or topology change. Useful time credits the undamaged step
//    time × ranks/initial ranks; the extra is fabric_loss_s (or fabric_gain_s when it is
//    negative), the missing ranks' share shrunk_s.
//    Without a fabric link outages and rebooting satellites cost nothing here.
// Useful time counts completed steps not rolled back (the tail since the last checkpoint
// included). For constant failure rate 1/M (interrupts only), renewal theory gives exactly
//     goodput = w / (M e^{R/M} (e^{(w+δ)/M} − 1)),   w = τ rounded up to whole steps,
// (expected_goodput_constant_rate); to first order waste ≈ δ/τ + (τ+δ)/(2M) + R/M — the
// job.hpp checkpoint_waste_fraction's (τ+R)/M counts a whole interval of rework per failure
// where the mean loss is half of one.
// With `stop` set (a user's Ctrl-C), the play throws TrialsInterrupted at its next event (a fabric
// whose FlowContext::stop is set throws Interrupted from inside a step, which unwinds it too).
GoodputResult simulate_training_with_faults(std::span<const FaultEvent> events, std::int32_t satellite_count,
                                            double duration_s, const StepDurations& steps,
                                            const RecoveryConfig& config, bool record_timeline = false,
                                            FabricModel* fabric = nullptr, const std::atomic<bool>* stop = nullptr);

// Analytic goodput for Poisson interrupts of mean interval M (see above; Daly 2006, eq. 11 form).
double expected_goodput_constant_rate(double work_per_checkpoint_s, double checkpoint_cost_s, double restart_s,
                                      double mtbf_s);

// ---- Monte Carlo ----

struct TrialStatistics {
    double mean = 0.0;
    double median = 0.0;        // of the trials (linear interpolation)
    double stddev = 0.0;        // sample standard deviation over trials
    // 95 % interval for the mean. trial_statistics: percentile bootstrap (it stays within the
    // values' range, so a goodput interval stays in [0, 1] and a rate's is never negative, where
    // mean ± 1.96 σ/√n went below zero for rare events). Event counts per trial are Poisson:
    // monte_carlo_goodput gives events_per_day the exact Garwood interval (poisson_rate_ci95).
    double mean_ci95_low = 0.0;
    double mean_ci95_high = 0.0;
    // Where the trials lie: the nearest-rank 2.5th and 97.5th percentiles, two of the trials' own
    // values (never interpolated). Below 40 trials those ranks are the first and the last, so the
    // interval is the trials' min–max (spread_kind says which).
    double spread_low = 0.0;
    double spread_high = 0.0;
};
// "min_max" below 40 trials, "nearest_rank_p2.5_p97.5" from 40 (TrialStatistics::spread_low/high).
const char* spread_kind(std::size_t trials);
inline constexpr std::size_t spread_min_max_below_trials = 40;
TrialStatistics trial_statistics(std::span<const double> values);
// Garwood's exact 95 % interval for a Poisson mean: `total` events counted over `trials` trials
// of `days` each (the sum is Poisson with mean trials · rate · days), as a rate per day:
// [Γ⁻¹(0.025; total), Γ⁻¹(0.975; total + 1)] / (trials · days), the lower end 0 when total = 0.
std::pair<double, double> poisson_rate_ci95(double total, std::int32_t trials, double days);

struct MonteCarloResult {
    std::int32_t trials = 0;
    double checkpoint_interval_s = 0.0;
    TrialStatistics goodput;
    TrialStatistics interruptions_per_day;  // rollbacks per day of elapsed time
    TrialStatistics events_per_day;         // all fault events in the run, per day
    std::array<double, fault_kind_count> mean_events_by_kind{};
    // Operational causes, means over the trials: events, interruptions, time lost (s).
    std::array<double, max_operational_causes> mean_events_by_cause{};
    std::array<double, max_operational_causes> mean_interruptions_by_cause{};
    std::array<double, max_operational_causes> mean_lost_by_cause_s{};
    double total_interruptions = 0.0;  // every trial's rollbacks summed (Poisson: poisson_rate_ci95)
    std::vector<double> goodput_per_trial;
    // Per trial: where the time went (s) and what the fabric lost.
    struct Trial {
        double goodput = 0.0;
        double lost_faults_s = 0.0;       // rework + waiting for satellites + SDC recomputes
        double lost_restarts_s = 0.0;     // restarts R
        double lost_checkpoints_s = 0.0;  // completed checkpoints
        double lost_fabric_s = 0.0;       // damaged-fabric extra step time (its positive part) + stalls
        double gained_fabric_s = 0.0;     // steps a smaller re-formed ring ran faster than the full one
        double lost_shrink_s = 0.0;       // shrunk ring's missing share
        double step_time_median_s = 0.0;
        double step_time_p99_s = 0.0;
        std::int64_t ranks_lost = 0;
        std::int64_t spare_swaps = 0;     // ranks moved to a hot spare
        std::int64_t links_lost = 0;
        std::int64_t gateway_links_lost = 0;
        double lost_waiting_s = 0.0;      // cluster replicas (diloco, noloco): waiting for other replicas
        double failover_stall_s = 0.0;    // steps and outer syncs stalled on undetected gateway failures
        double bytes_retried = 0.0;       // bytes sent into them (ring, hierarchical: steps' collectives)
        double outer_sync_p99_s = 0.0;    // diloco, noloco: the outer syncs' duration (stalls included), p99
        std::int64_t damaged_steps = 0;
        std::int64_t rollbacks = 0;
    };
    std::vector<Trial> per_trial;
    Backend backend = Backend::cpu;  // where the events were drawn
    std::int32_t threads = 1;        // CPU threads that played the trials
};

// One trial's row: goodput, time lost by cause, what the fabric lost (lost_waiting_s left 0).
MonteCarloResult::Trial trial_summary(const GoodputResult& r);

// A Monte Carlo's trials shared among cooperating processes (src/ shares them among MPI ranks; the
// library knows no MPI and does no I/O). This process plays trial t only where t % parts == part
// (each trial's events depend only on the seed and t, so who plays it changes nothing); gather then
// gives it every other trial's row, as that trial's part played it, before any figure over the
// trials is taken, so every part ends with the figures one process gives. Every part calls gather
// the same number of times in the same order: once per Monte Carlo, even when it was stopped.
struct TrialRow {
    MonteCarloResult::Trial trial;
    std::int64_t events = 0;                                      // fault events the trial drew
    std::array<std::int64_t, fault_kind_count> events_by_kind{};  // of them, by kind
    OperationalCounts operational;                                // operational ones, by cause
};
struct TrialShare {
    std::int32_t part = 0;
    std::int32_t parts = 1;
    // rows: one per trial, this part's own filled in; stopped: this part was stopped (Ctrl-C) before
    // it played all of its own. Fills in the other parts' rows; returns whether any part was stopped.
    std::function<bool(std::span<TrialRow> rows, bool stopped)> gather;
    bool plays(std::int32_t trial) const { return parts <= 1 || trial % parts == part; }
    // How many of trials 0 … trials-1 this part plays, and the j-th of them.
    std::int32_t own_count(std::int32_t trials) const { return parts <= 1 ? trials : (trials - part + parts - 1) / parts; }
    std::int32_t own_trial(std::int32_t j) const { return parts <= 1 ? j : part + j * parts; }
};

// Runs work(i) for i = 0 … count-1 on `threads` worker threads (each takes the next i; the
// caller only waits); the first exception is rethrown after every thread has stopped.
// With `stop` (a user's Ctrl-C): once it is set no further trial starts, the ones running stop at
// their next event (work throws Interrupted, simulate_training_with_faults' stop), and
// TrialsInterrupted is thrown.
void for_each_trial(std::int32_t threads, std::int32_t count, const std::function<void(std::int32_t)>& work,
                    const std::atomic<bool>* stop = nullptr);
struct TrialsInterrupted : Interrupted {
    TrialsInterrupted() : Interrupted("interrupted during the fault trials") {}
};

// Draws trials 0 … trials-1 (sample_fault_events_batch's events) and runs play(trial, events) for
// each on `threads` worker threads, as for_each_trial. On the CPU each worker draws the trial it
// plays (no serial stage); on the GPU the device draws the next batch of monte_carlo_batch_trials
// while the workers play this one. The events, and so any result, do not depend on either.
// With `share`, only this part's trials are drawn (CPU) and played.
void for_each_drawn_trial(const DoseRateSeries& series, const FaultModel& model, double duration_s, std::uint64_t seed,
                          std::int32_t trials, Backend backend, std::int32_t threads,
                          const std::function<void(std::int32_t, std::span<const FaultEvent>)>& play,
                          const std::atomic<bool>* stop = nullptr, const TrialShare* share = nullptr);

// trials independent repeats (trial = 0 … trials-1) of sample_fault_events +
// simulate_training_with_faults (on `fabric` when given), played on `threads` CPU threads (0:
// all cores); each trial's result depends only on its own events, so any thread count gives the
// same per-trial results, in trial order. Auto interval with mtbf_s = 0: the MTBF is taken from the rate
// model (interruption_mtbf_s over the active satellites), not from the sampled events. The
// events are drawn by for_each_drawn_trial on the backend (automatic: the GPU when present); the
// recovery play runs on CPU threads. With `share` (TrialShare) this process plays its part of the
// trials and gathers the others' rows: the result is the same.
inline constexpr std::int32_t monte_carlo_batch_trials = 4096;
// Expected fault events (one batch of trials together) past which a caller should not draw them:
// about 1.2 GB of FaultEvent. The scenario loader refuses such runs; the simulation checks again.
inline constexpr double max_fault_events_in_memory = 5.0e7;
MonteCarloResult monte_carlo_goodput(const DoseRateSeries& series, const FaultModel& model,
                                     const RecoveryConfig& config, const StepDurations& steps, double duration_s,
                                     std::uint64_t seed, std::int32_t trials, Backend backend = Backend::cpu,
                                     FabricModel* fabric = nullptr, std::int32_t threads = 1,
                                     const std::atomic<bool>* stop = nullptr, const TrialShare* share = nullptr);

namespace core {

// Stream id of (trial, satellite, kind): trial in bits 40+, satellite in bits 8–39, kind 0–7.
SKYFABRIC_HD inline std::uint64_t fault_stream_id(std::uint64_t trial, std::uint32_t satellite, std::uint32_t kind) {
    return (trial << 40) ^ (static_cast<std::uint64_t>(satellite) << 8) ^ kind;
}
inline constexpr std::uint64_t faults_seed_tag = 0x5AA0F417ull;

// Thinning on a piecewise-linear rate λ_j = scale · values[j·stride] at t_j = start + j·step
// (held at the last value from t_{n-1} to end_s), over [start, end_s). Lewis–Shedler thinning
// with a piecewise-constant bound: the samples are grouped, left to right, into windows that
// grow until (max of λ over the window's samples) × (window length) >= window_mass (or the
// series ends); in each window candidates arrive at the bound λ* (exponential gaps) and one at
// time t is kept when u < λ(t)/λ*. The max of a linear segment is at an end, so λ* >= λ(t):
// exact. Windows keep the draws near the number of events (≈ window_mass + 1 per window plus
// λ*/λ̄ per event) instead of one per sample. A candidate past its window's end is discarded
// and the next window starts afresh at its beginning (memorylessness). Candidate c uses Philox
// block (key, stream, c): words 0–1 → gap −ln(u)/λ*, word 2 → acceptance, word 3 → a mark
// uniform in [0, 1) handed to emit(t, mark). The windows depend only on the data, not on the
// draws: a Monte Carlo builds them once and every trial (and every backend) thins the same
// windows with its own stream. Written once for host and device.

// Candidates at rate `bound` on [t0, t1); the rate is read on samples [j0, j1] (j1 == j0: the
// constant `bound`, e.g. the held last value).
struct ThinningWindow {
    double t0 = 0.0, t1 = 0.0, bound = 0.0;
    std::int64_t j0 = 0, j1 = 0;
};

// Calls on_window(ThinningWindow) for each window of the series, left to right.
template <class OnWindow>
SKYFABRIC_HD inline void thinning_windows(const double* values, std::int64_t sample_count, std::int64_t stride,
                                          double scale, double start_s, double step_s, double end_s,
                                          OnWindow&& on_window, double window_mass = 1.0) {
    if (sample_count <= 0 || !(end_s > start_s)) return;
    const auto v = [&](std::int64_t j) { return scale * values[j * stride]; };
    std::int64_t j = 0;
    while (j + 1 < sample_count) {
        const double t0 = start_s + static_cast<double>(j) * step_s;
        if (t0 >= end_s) return;
        double bound = v(j) > v(j + 1) ? v(j) : v(j + 1);
        std::int64_t k = j + 1;  // window = segments [j, k)
        while (k + 1 < sample_count && bound * static_cast<double>(k - j) * step_s < window_mass &&
               start_s + static_cast<double>(k) * step_s < end_s) {
            const double next = v(k + 1);
            if (next > bound) bound = next;
            ++k;
        }
        double t1 = start_s + static_cast<double>(k) * step_s;
        if (t1 > end_s) t1 = end_s;
        on_window(ThinningWindow{t0, t1, bound, j, k});
        j = k;
    }
    const double t_last = start_s + static_cast<double>(sample_count - 1) * step_s;
    if (t_last < end_s) on_window(ThinningWindow{t_last, end_s, v(sample_count - 1), 0, 0});
}

// The candidates of one window; c is the stream's running candidate counter.
template <class Emit>
SKYFABRIC_HD inline void thin_window(const ThinningWindow& w, const double* values, std::int64_t stride,
                                     double scale, double start_s, double step_s, std::uint64_t key,
                                     std::uint64_t stream, std::uint64_t& c, Emit&& emit) {
    if (!(w.bound > 0.0)) return;
    const auto v = [&](std::int64_t j) { return scale * values[j * stride]; };
    double t = w.t0;
    for (;;) {
        const physics::rng::Philox4x32 r = physics::rng::random_block(key, stream, c++);
        t += -std::log(physics::rng::unit_from_bits53(r.v[0], r.v[1])) / w.bound;
        if (t >= w.t1) return;
        double rate = w.bound;
        if (w.j1 > w.j0) {
            std::int64_t seg = w.j0 + static_cast<std::int64_t>((t - w.t0) / step_s);
            if (seg > w.j1 - 1) seg = w.j1 - 1;
            if (seg < w.j0) seg = w.j0;
            const double ta = start_s + static_cast<double>(seg) * step_s;
            const double a = v(seg);
            rate = a + (v(seg + 1) - a) * ((t - ta) / step_s);
        }
        if (physics::rng::unit_from_bits32(r.v[2]) * w.bound < rate) emit(t, physics::rng::unit_from_bits32(r.v[3]));
    }
}

// Windows and draws in one pass; returns the candidates used.
template <class Emit>
SKYFABRIC_HD inline std::uint64_t thin_piecewise_linear(const double* values, std::int64_t sample_count,
                                                        std::int64_t stride, double scale, double start_s,
                                                        double step_s, double end_s, std::uint64_t key,
                                                        std::uint64_t stream, Emit&& emit,
                                                        double window_mass = 1.0) {
    std::uint64_t c = 0;
    thinning_windows(
        values, sample_count, stride, scale, start_s, step_s, end_s,
        [&](const ThinningWindow& w) { thin_window(w, values, stride, scale, start_s, step_s, key, stream, c, emit); },
        window_mass);
    return c;
}

// How a dose-driven event is marked with its kind: the four dose-driven kinds share one rate
// shape Ḋ(t), so their superposition is sampled at total · Ḋ (total = Σ_k n_k/D_k) and each
// event gets kind k with probability (n_k/D_k)/total (Poisson marking: the same process as four
// independent streams, a quarter of the work). The mark uniform u picks the kind from the
// cumulative shares; for an SDC, u rescaled to its share is a fresh uniform that decides
// detection.
struct FaultMarks {
    double total_per_rad = 0.0;           // Σ_k n_k/D_k over sdc, hbm_uecc, chip_crash, host_crash
    double cumulative_per_rad[4] = {};    // running sums of n_k/D_k in FaultKind order
    double sdc_detection_probability = 0.0;
    double link_outage_rate_per_s = 0.0;  // constant, per satellite
};

// Every event of one satellite in one trial, handed to emit(FaultEvent): the dose-driven stream
// fault_stream_id(trial, satellite, 0) thinned over that satellite's windows (thinning_windows
// of its dose-rate column at scale marks.total_per_rad), then the link-outage stream
// fault_stream_id(trial, satellite, 4) at its constant rate over [start_s, end_s); each in time
// order. The CPU loop and the GPU kernel both call this, so they draw the same events.
template <class Emit>
SKYFABRIC_HD inline void sample_satellite_faults(const double* dose_rate_column, const ThinningWindow* windows,
                                                 std::int64_t window_count, double start_s, double step_s,
                                                 double end_s, const FaultMarks& marks, std::uint64_t key,
                                                 std::uint64_t trial, std::int32_t satellite, Emit&& emit) {
    const auto sat = static_cast<std::uint32_t>(satellite);
    std::uint64_t c = 0;
    const std::uint64_t dose_stream = fault_stream_id(trial, sat, 0);
    for (std::int64_t w = 0; w < window_count; ++w) {
        thin_window(windows[w], dose_rate_column, 1, marks.total_per_rad, start_s, step_s, key, dose_stream, c,
                    [&](double t, double mark) {
                        const double x = mark * marks.total_per_rad;
                        int kind = 0;
                        while (kind < 3 && x >= marks.cumulative_per_rad[kind]) ++kind;
                        const bool detected =
                            kind == 0 && x / marks.cumulative_per_rad[0] < marks.sdc_detection_probability;
                        emit(FaultEvent{t, satellite, static_cast<FaultKind>(kind), detected});
                    });
    }
    if (marks.link_outage_rate_per_s > 0.0 && end_s > start_s) {
        std::uint64_t c_link = 0;
        thin_window(ThinningWindow{start_s, end_s, marks.link_outage_rate_per_s, 0, 0}, dose_rate_column, 1, 1.0,
                    start_s, step_s, key, fault_stream_id(trial, sat, static_cast<std::uint32_t>(FaultKind::link_outage)),
                    c_link, [&](double t, double mark) { emit(FaultEvent{t, satellite, FaultKind::link_outage, false, mark}); });
    }
}

}  // namespace core

}  // namespace skyfabric::workloads
