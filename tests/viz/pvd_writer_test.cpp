// PvdSeriesWriter: .vtp frames read back with VTK's own reader, .pvd index parsed as text.
#include <skyfabric/viz/pvd_writer.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkStringArray.h>
#include <vtkXMLPolyDataReader.h>

namespace {

namespace fs = std::filesystem;
using skyfabric::links::Link;
using skyfabric::links::Topology;
using skyfabric::viz::ClusterFrame;
using skyfabric::viz::ClusterPair;
using skyfabric::viz::LinkFrameData;
using skyfabric::viz::PvdSeriesWriter;
using skyfabric::viz::SatelliteFrame;
using skyfabric::viz::SatelliteStatus;

class ScratchDir {
public:
    ScratchDir() {
        path_ = fs::temp_directory_path() /
                ("skyfabric_viz_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                 "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct FiveSatellites {
    static constexpr int n = 5;
    std::vector<Eigen::Vector3d> positions;
    std::vector<std::int32_t> status;
    std::vector<double> dose, dv, nn, utilisation;
    Topology topology;

    explicit FiveSatellites(int frame) {
        for (int i = 0; i < n; ++i) {
            positions.emplace_back(100.0 * i, 10.0 * frame, -5.0 * i);
            status.push_back(i == 2 ? static_cast<std::int32_t>(SatelliteStatus::faulted) : 0);
            dose.push_back(0.01 * i + frame);
            dv.push_back(0.5 * i);
            nn.push_back(100.0 + i);
        }
        topology.time_s = 60.0 * frame;
        topology.node_count = n;
        for (int i = 0; i + 1 < n; ++i) {
            Link link;
            link.source = i;
            link.target = i + 1;
            link.distance_m = 100.0 + i;
            link.capacity_bps = 1.0e12 * (i + 1);
            link.margin_db = 3.0 + i;
            topology.links.push_back(link);
            utilisation.push_back(0.25 * i);
        }
    }
    SatelliteFrame frame() const {
        return SatelliteFrame{topology.time_s, positions, status, dose, dv, nn, {}};
    }
    LinkFrameData links() const { return LinkFrameData{&topology, utilisation, {}}; }
};

vtkSmartPointer<vtkPolyData> read_vtp(const fs::path& path) {
    vtkNew<vtkXMLPolyDataReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    return reader->GetOutput();
}

TEST(PvdSeriesWriter, WritesThreeFramesThatReadBackWithCountsAndValues) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path() / "vtk", "formation_lvlh");
    for (int f = 0; f < 3; ++f) {
        const FiveSatellites sats(f);
        writer.write_frame(sats.frame(), sats.links());
        EXPECT_EQ(writer.frames_written(), static_cast<std::size_t>(f + 1));
    }

    for (int f = 0; f < 3; ++f) {
        char name[64];
        std::snprintf(name, sizeof name, "formation_lvlh_%06d.vtp", f);
        const fs::path file = dir.path() / "vtk" / name;
        ASSERT_TRUE(fs::exists(file)) << file;
        const auto poly = read_vtp(file);
        const FiveSatellites expected(f);

        ASSERT_EQ(poly->GetNumberOfPoints(), 5);
        EXPECT_EQ(poly->GetNumberOfVerts(), 5);
        ASSERT_EQ(poly->GetNumberOfLines(), 4);
        for (int i = 0; i < 5; ++i) {
            double p[3];
            poly->GetPoint(i, p);
            EXPECT_DOUBLE_EQ(p[0], expected.positions[i].x());
            EXPECT_DOUBLE_EQ(p[1], expected.positions[i].y());
            EXPECT_DOUBLE_EQ(p[2], expected.positions[i].z());
        }

        vtkPointData* pd = poly->GetPointData();
        for (const char* array : {"id", "status", "dose_rad", "delta_v_m_s", "nearest_neighbour_m"}) {
            ASSERT_NE(pd->GetArray(array), nullptr) << array;
            EXPECT_EQ(pd->GetArray(array)->GetNumberOfTuples(), 5) << array;
        }
        for (int i = 0; i < 5; ++i) {
            EXPECT_EQ(pd->GetArray("id")->GetTuple1(i), i);
            EXPECT_EQ(pd->GetArray("status")->GetTuple1(i), expected.status[i]);
            EXPECT_DOUBLE_EQ(pd->GetArray("dose_rad")->GetTuple1(i), expected.dose[i]);
            EXPECT_DOUBLE_EQ(pd->GetArray("delta_v_m_s")->GetTuple1(i), expected.dv[i]);
            EXPECT_DOUBLE_EQ(pd->GetArray("nearest_neighbour_m")->GetTuple1(i), expected.nn[i]);
        }

        // Cell order: 5 vertex cells, then the 4 lines.
        vtkCellData* cd = poly->GetCellData();
        for (const char* array : {"capacity_bps", "margin_db", "utilisation", "distance_m"}) {
            ASSERT_NE(cd->GetArray(array), nullptr) << array;
            ASSERT_EQ(cd->GetArray(array)->GetNumberOfTuples(), 9) << array;
            EXPECT_TRUE(std::isnan(cd->GetArray(array)->GetTuple1(0))) << array;
        }
        vtkCellArray* lines = poly->GetLines();
        lines->InitTraversal();
        vtkNew<vtkIdList> ends;
        for (int k = 0; k < 4; ++k) {
            ASSERT_TRUE(lines->GetNextCell(ends));
            ASSERT_EQ(ends->GetNumberOfIds(), 2);
            EXPECT_EQ(ends->GetId(0), k);
            EXPECT_EQ(ends->GetId(1), k + 1);
            const Link& link = expected.topology.links[k];
            EXPECT_DOUBLE_EQ(cd->GetArray("capacity_bps")->GetTuple1(5 + k), link.capacity_bps);
            EXPECT_DOUBLE_EQ(cd->GetArray("margin_db")->GetTuple1(5 + k), link.margin_db);
            EXPECT_DOUBLE_EQ(cd->GetArray("distance_m")->GetTuple1(5 + k), link.distance_m);
            EXPECT_DOUBLE_EQ(cd->GetArray("utilisation")->GetTuple1(5 + k), expected.utilisation[k]);
        }

        vtkDataArray* time_value = poly->GetFieldData()->GetArray("TimeValue");
        ASSERT_NE(time_value, nullptr);
        EXPECT_DOUBLE_EQ(time_value->GetTuple1(0), 60.0 * f);
    }

    const std::string pvd = slurp(dir.path() / "vtk" / "formation_lvlh.pvd");
    const std::regex dataset(R"re(<DataSet timestep="([^"]+)"[^>]*file="([^"]+)")re");
    std::vector<std::pair<double, std::string>> listed;
    for (auto it = std::sregex_iterator(pvd.begin(), pvd.end(), dataset); it != std::sregex_iterator(); ++it) {
        listed.emplace_back(std::stod((*it)[1]), (*it)[2]);
    }
    ASSERT_EQ(listed.size(), 3u) << pvd;
    EXPECT_EQ(listed[0], (std::pair<double, std::string>{0.0, "formation_lvlh_000000.vtp"}));
    EXPECT_EQ(listed[1], (std::pair<double, std::string>{60.0, "formation_lvlh_000001.vtp"}));
    EXPECT_EQ(listed[2], (std::pair<double, std::string>{120.0, "formation_lvlh_000002.vtp"}));
    // No temporaries left behind.
    for (const auto& entry : fs::directory_iterator(dir.path() / "vtk")) {
        EXPECT_EQ(entry.path().extension() == ".tmp", false) << entry.path();
    }
}

TEST(PvdSeriesWriter, EmptyOptionalArraysAndNoTopologyGiveZerosAndNoLines) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "eci");
    const std::vector<Eigen::Vector3d> positions{{7.0e6, 0.0, 0.0}, {7.0e6, 150.0, 0.0}};
    writer.write_frame(SatelliteFrame{12.5, positions, {}, {}, {}, {}, {}}, LinkFrameData{});
    const auto poly = read_vtp(dir.path() / "eci_000000.vtp");
    EXPECT_EQ(poly->GetNumberOfPoints(), 2);
    EXPECT_EQ(poly->GetNumberOfLines(), 0);
    EXPECT_EQ(poly->GetPointData()->GetArray("status")->GetTuple1(1), 0);
    EXPECT_EQ(poly->GetPointData()->GetArray("dose_rad")->GetTuple1(1), 0.0);
    EXPECT_DOUBLE_EQ(poly->GetFieldData()->GetArray("TimeValue")->GetTuple1(0), 12.5);
    EXPECT_NE(slurp(dir.path() / "eci.pvd").find("timestep=\"12.5\""), std::string::npos);
}

TEST(PvdSeriesWriter, PvdIsValidAfterEveryFrameSoAPartialRunOpens) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "f");
    const FiveSatellites sats(0);
    writer.write_frame(sats.frame(), sats.links());
    const std::string after_one = slurp(dir.path() / "f.pvd");
    EXPECT_NE(after_one.find("</VTKFile>"), std::string::npos);
    EXPECT_NE(after_one.find("f_000000.vtp"), std::string::npos);
    EXPECT_EQ(after_one.find("f_000001.vtp"), std::string::npos);
}

TEST(PvdSeriesWriter, RejectsMismatchedArrayLengthsAndLinksOutsideTheFormation) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "f");
    FiveSatellites sats(0);
    const std::vector<double> short_dose{1.0, 2.0};
    SatelliteFrame bad = sats.frame();
    bad.dose_rad = short_dose;
    EXPECT_THROW(writer.write_frame(bad, sats.links()), std::invalid_argument);

    sats.topology.links[0].target = 5;
    EXPECT_THROW(writer.write_frame(sats.frame(), sats.links()), std::invalid_argument);
    EXPECT_EQ(writer.frames_written(), 0u);
}

TEST(PvdSeriesWriter, ThrowsRuntimeErrorNamingThePathWhenTheDirectoryCannotBeMade) {
    ScratchDir dir;
    fs::create_directories(dir.path());
    std::ofstream(dir.path() / "plain_file") << "x";
    try {
        PvdSeriesWriter writer(dir.path() / "plain_file" / "vtk", "f");
        FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("plain_file"), std::string::npos) << e.what();
    }
}

TEST(PvdSeriesWriter, ConstellationLinksCarryLinkClassAndOneClusterWritesNone) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "f");
    const FiveSatellites sats(0);
    const std::vector<std::int32_t> cluster_of{0, 0, 0, 1, 1};  // link (2, 3) joins the clusters
    writer.write_frame(sats.frame(), LinkFrameData{&sats.topology, {}, cluster_of});
    writer.write_frame(sats.frame(), sats.links());
    const auto two = read_vtp(dir.path() / "f_000000.vtp");
    vtkDataArray* link_class = two->GetCellData()->GetArray("link_class");
    ASSERT_NE(link_class, nullptr);
    ASSERT_EQ(link_class->GetNumberOfTuples(), 9);
    EXPECT_EQ(link_class->GetTuple1(0), -1);  // a satellite's vertex cell
    const std::vector<double> expected{0, 0, 1, 0};
    for (int k = 0; k < 4; ++k) EXPECT_EQ(link_class->GetTuple1(5 + k), expected[k]) << k;
    EXPECT_EQ(read_vtp(dir.path() / "f_000001.vtp")->GetCellData()->GetArray("link_class"), nullptr);
}

TEST(PvdSeriesWriter, ConstellationFramesCarryEachSatelliteInItsOwnClustersFrame) {
    // Issue 52 (item 14): position_cluster_lvlh_m, three components per satellite, exactly as given
    // (scripts/render --cluster N draws them); a frame without them has no such array, and a count
    // that does not match the satellites is refused.
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "f");
    const FiveSatellites sats(0);
    const std::vector<std::int32_t> cluster_of{0, 0, 0, 1, 1};
    std::vector<Eigen::Vector3d> own;
    for (int i = 0; i < 5; ++i) own.emplace_back(0.5 * i, -1.0 * i, 100.0 + i);
    SatelliteFrame frame = sats.frame();
    frame.cluster_lvlh_m = own;
    writer.write_frame(frame, LinkFrameData{&sats.topology, {}, cluster_of});
    writer.write_frame(sats.frame(), LinkFrameData{&sats.topology, {}, cluster_of});
    const auto written = read_vtp(dir.path() / "f_000000.vtp");  // holds the array below
    vtkDataArray* array = written->GetPointData()->GetArray("position_cluster_lvlh_m");
    ASSERT_NE(array, nullptr);
    ASSERT_EQ(array->GetNumberOfTuples(), 5);
    ASSERT_EQ(array->GetNumberOfComponents(), 3);
    for (int i = 0; i < 5; ++i)
        for (int k = 0; k < 3; ++k) EXPECT_EQ(array->GetComponent(i, k), own[static_cast<std::size_t>(i)][k]) << i << k;
    EXPECT_EQ(read_vtp(dir.path() / "f_000001.vtp")->GetPointData()->GetArray("position_cluster_lvlh_m"), nullptr);
    frame.cluster_lvlh_m = std::span<const Eigen::Vector3d>(own).first(4);
    EXPECT_THROW(writer.write_frame(frame, LinkFrameData{&sats.topology, {}, cluster_of}), std::invalid_argument);
}

TEST(ClusterPairs, GroupGatewayLinksByPairWithSummedCapacityAndMeanLatency) {
    Topology topology;
    topology.node_count = 6;
    const auto add = [&](int a, int b, double capacity_bps, double latency_s) {
        Link link;
        link.source = a;
        link.target = b;
        link.capacity_bps = capacity_bps;
        link.latency_s = latency_s;
        topology.links.push_back(link);
    };
    add(0, 1, 9.0, 9.0);   // inside cluster 0: not a pair
    add(0, 4, 1.0, 1.0e-4);  // clusters 0-2
    add(1, 2, 2.0, 2.0e-4);  // clusters 0-1
    add(1, 5, 3.0, 3.0e-4);  // clusters 0-2
    add(3, 4, 4.0, 4.0e-4);  // clusters 1-2
    const std::vector<std::int32_t> cluster_of{0, 0, 1, 1, 2, 2};
    const auto pairs = skyfabric::viz::cluster_pairs(topology, cluster_of);
    ASSERT_EQ(pairs.size(), 3u);
    EXPECT_EQ(std::pair(pairs[0].a, pairs[0].b), std::pair(0, 1));
    EXPECT_EQ(std::pair(pairs[1].a, pairs[1].b), std::pair(0, 2));
    EXPECT_EQ(std::pair(pairs[2].a, pairs[2].b), std::pair(1, 2));
    EXPECT_EQ(pairs[1].gateway_links, 2);
    EXPECT_DOUBLE_EQ(pairs[1].capacity_bps, 4.0);
    EXPECT_DOUBLE_EQ(pairs[1].latency_s, 2.0e-4);
    EXPECT_EQ(pairs[2].gateway_links, 1);
    EXPECT_THROW(skyfabric::viz::cluster_pairs(topology, std::vector<std::int32_t>{0, 0}), std::invalid_argument);
}

TEST(PvdSeriesWriter, ClusterFrameHasOnePointPerClusterAndOneLinePerJoinedPair) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "constellation");
    const std::vector<Eigen::Vector3d> centroids{{0.0, 0.0, 0.0}, {0.0, 1.0e5, 0.0}, {0.0, 2.0e5, 0.0}};
    const std::vector<std::int32_t> satellites{81, 81, 80};
    const std::vector<ClusterPair> pairs{{0, 1, 2, 8.0e11, 3.3e-4}, {1, 2, 1, 4.0e11, 3.4e-4}};
    writer.write_cluster_frame(ClusterFrame{30.0, centroids, satellites, pairs});
    const auto poly = read_vtp(dir.path() / "constellation_000000.vtp");
    ASSERT_EQ(poly->GetNumberOfPoints(), 3);
    EXPECT_EQ(poly->GetNumberOfVerts(), 3);
    ASSERT_EQ(poly->GetNumberOfLines(), 2);
    double p[3];
    poly->GetPoint(1, p);
    EXPECT_DOUBLE_EQ(p[1], 1.0e5);
    EXPECT_EQ(poly->GetPointData()->GetArray("cluster")->GetTuple1(2), 2);
    EXPECT_EQ(poly->GetPointData()->GetArray("satellites")->GetTuple1(2), 80);
    vtkCellData* cd = poly->GetCellData();
    EXPECT_TRUE(std::isnan(cd->GetArray("capacity_bps")->GetTuple1(0)));
    EXPECT_EQ(cd->GetArray("gateway_links")->GetTuple1(3), 2);
    EXPECT_DOUBLE_EQ(cd->GetArray("capacity_bps")->GetTuple1(4), 4.0e11);
    EXPECT_DOUBLE_EQ(cd->GetArray("latency_s")->GetTuple1(3), 3.3e-4);
    EXPECT_EQ(cd->GetArray("link_source")->GetTuple1(4), 1);
    EXPECT_EQ(cd->GetArray("link_target")->GetTuple1(4), 2);
    EXPECT_DOUBLE_EQ(poly->GetFieldData()->GetArray("TimeValue")->GetTuple1(0), 30.0);
    EXPECT_NE(slurp(dir.path() / "constellation.pvd").find("constellation_000000.vtp"), std::string::npos);
    const std::vector<ClusterPair> outside{{0, 3, 1, 1.0, 1.0}};
    EXPECT_THROW(writer.write_cluster_frame(ClusterFrame{60.0, centroids, satellites, outside}), std::invalid_argument);
}

}  // namespace

namespace {

// What is learnt after the run lands in the frame's own arrays, read back by VTK's reader: the status
// replaced, listed links marked down and their utilisation set, every other value as first written.
TEST(PvdSeriesWriter, RewriteAfterRunSetsStatusFaultDownAndUtilisationInPlace) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path(), "f");
    const FiveSatellites first(0), second(1);
    writer.write_frame(first.frame(), first.links());
    writer.write_frame(second.frame(), second.links());
    const auto size_before = fs::file_size(dir.path() / "f_000001.vtp");
    const std::vector<std::int32_t> status{0, 2, 1, 3, 0};
    const std::vector<std::pair<std::int32_t, std::int32_t>> down{{1, 2}};
    const std::vector<PvdSeriesWriter::LinkValue> used{{0, 1, 0.75}, {3, 4, 0.5}};
    writer.rewrite_after_run(1, {status, down, used});
    EXPECT_EQ(fs::file_size(dir.path() / "f_000001.vtp"), size_before);

    const auto poly = read_vtp(dir.path() / "f_000001.vtp");
    ASSERT_EQ(poly->GetNumberOfPoints(), 5);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(poly->GetPointData()->GetArray("status")->GetTuple1(i), status[i]) << i;
    vtkCellData* cd = poly->GetCellData();
    // Cells 5..8 are the links (0,1), (1,2), (2,3), (3,4).
    const std::vector<double> fault_down{0, 1, 0, 0}, utilisation{0.75, 0.25, 0.5, 0.5};
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(cd->GetArray("fault_down")->GetTuple1(5 + k), fault_down[k]) << k;
        EXPECT_DOUBLE_EQ(cd->GetArray("utilisation")->GetTuple1(5 + k), utilisation[k]) << k;
        EXPECT_DOUBLE_EQ(cd->GetArray("capacity_bps")->GetTuple1(5 + k), second.topology.links[k].capacity_bps) << k;
    }
    EXPECT_TRUE(std::isnan(cd->GetArray("utilisation")->GetTuple1(0)));
    // Frame 0 untouched.
    EXPECT_EQ(read_vtp(dir.path() / "f_000000.vtp")->GetPointData()->GetArray("status")->GetTuple1(1), 0);
    EXPECT_THROW(writer.rewrite_after_run(2, {status, down, used}), std::invalid_argument);
    const std::vector<std::int32_t> short_status{0, 1};
    EXPECT_THROW(writer.rewrite_after_run(0, {short_status, {}, {}}), std::invalid_argument);
}

// Each satellite frame names its status values (field data status_names, value by value) from the
// C++ table: what the renderer reads, after the run's faults were patched in too.
TEST(SatelliteStatus, FramesCarryTheTablesNamesInValueOrder) {
    ScratchDir dir;
    PvdSeriesWriter writer(dir.path() / "vtk", "formation_lvlh");
    const FiveSatellites sats(0);
    writer.write_frame(sats.frame(), sats.links());
    const std::vector<std::int32_t> status{1, 2, 3, 0, 1};
    writer.rewrite_after_run(0, {status, {}, {}});
    const auto poly = read_vtp(dir.path() / "vtk" / "formation_lvlh_000000.vtp");
    auto* names = vtkStringArray::SafeDownCast(poly->GetFieldData()->GetAbstractArray("status_names"));
    ASSERT_NE(names, nullptr);
    const auto& table = skyfabric::links::satellite_status_names;
    ASSERT_EQ(static_cast<std::size_t>(names->GetNumberOfValues()), table.size());
    for (std::size_t v = 0; v < table.size(); ++v)
        EXPECT_EQ(names->GetValue(static_cast<vtkIdType>(v)), table.name(static_cast<SatelliteStatus>(v))) << v;
    EXPECT_EQ(poly->GetPointData()->GetArray("status")->GetTuple1(2), 3);
    EXPECT_EQ(poly->GetFieldData()->GetArray("TimeValue")->GetTuple1(0), sats.frame().time_s);
}

// For frames written before they carried their names, the renderer falls back to its own
// STATUS_NAMES (index = value), which must be the C++ table's names in value order.
TEST(SatelliteStatus, RendererNamesAreTheTables) {
    std::ifstream in(fs::path(SKYFABRIC_SOURCE_DIR) / "viz/paraview/skyrender/style.py");
    ASSERT_TRUE(in) << "viz/paraview/skyrender/style.py";
    const std::string style((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::smatch list;
    ASSERT_TRUE(std::regex_search(style, list, std::regex(R"re(\nSTATUS_NAMES = \[([^\]]*)\])re")));
    std::vector<std::string> python;
    const std::string items = list[1];
    const std::regex quoted(R"re("([^"]*)")re");
    for (auto it = std::sregex_iterator(items.begin(), items.end(), quoted); it != std::sregex_iterator(); ++it)
        python.push_back((*it)[1]);
    const auto& table = skyfabric::links::satellite_status_names;
    ASSERT_EQ(python.size(), table.size());
    for (std::size_t v = 0; v < table.size(); ++v)
        EXPECT_EQ(python[v], table.name(static_cast<SatelliteStatus>(v))) << "STATUS_NAMES[" << v << "]";
}

}  // namespace
