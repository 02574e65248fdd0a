#pragma once
// Reading back what Hdf5File wrote (root string attributes, whole float64 datasets), for commands
// that turn a finished run into another format (`skyfabric oem`).
#include <hdf5.h>

#include <filesystem>
#include <string>
#include <vector>

namespace skyfabric::output {

class Hdf5Reader {
public:
    // Opens read-only; throws ScenarioError (exit 2) naming the path when it is not an HDF5 file.
    explicit Hdf5Reader(const std::filesystem::path& path);
    ~Hdf5Reader();
    Hdf5Reader(const Hdf5Reader&) = delete;
    Hdf5Reader& operator=(const Hdf5Reader&) = delete;

    bool has_dataset(const std::string& path) const;
    // A root attribute as text; "" when absent.
    std::string string_attribute(const std::string& name) const;
    // A dataset's dimensions, read without its data. Throws OutputError.
    std::vector<hsize_t> shape(const std::string& path) const;
    // The whole dataset as float64, row-major; `shape` receives its dimensions. Throws OutputError.
    std::vector<double> float64(const std::string& path, std::vector<hsize_t>& shape) const;

private:
    std::filesystem::path path_;
    hid_t file_ = -1;
};

}  // namespace skyfabric::output
