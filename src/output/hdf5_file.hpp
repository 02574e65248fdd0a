#pragma once
// A thin RAII layer over the HDF5 C API: a file, root attributes, fixed datasets and
// time series that grow one row at a time (buffered into whole chunks, compressed).
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace skyfabric::output {

struct OutputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The reason HDF5 gave for its last failure (the OS's, when a file driver recorded one); clears it.
std::string hdf5_error_reason();
// HDF5 prints no error stack from the calling thread (its failures are reported by us, with the OS
// reason); every thread that calls HDF5 calls this first.
void silence_hdf5_on_this_thread();

// Whether `path` opens as an HDF5 file whose root attribute `complete` is true (a run's result.h5).
bool hdf5_run_file_is_complete(const std::filesystem::path& path);

enum class ElementType { float64, int64, int32, uint8 };

class Hdf5File;

// A dataset of shape [rows x tail...], extended as rows are appended.
class Hdf5Series {
public:
    Hdf5Series(Hdf5File& file, const std::string& path, std::vector<hsize_t> tail_dims, ElementType type,
               const std::string& units, int compression_level);
    ~Hdf5Series();
    Hdf5Series(const Hdf5Series&) = delete;
    Hdf5Series& operator=(const Hdf5Series&) = delete;

    void append(const void* row);  // one row: product(tail_dims) elements
    void append_rows(const void* rows, std::size_t count);
    void flush();                  // writes buffered rows
    hsize_t rows() const { return rows_written_ + buffered_rows_; }

private:
    hid_t dataset_ = -1;
    hid_t memtype_ = -1;
    std::string path_;
    std::vector<hsize_t> tail_dims_;
    std::size_t row_bytes_ = 0;
    hsize_t chunk_rows_ = 1;
    hsize_t rows_written_ = 0;
    hsize_t buffered_rows_ = 0;
    std::vector<unsigned char> buffer_;
};

class Hdf5File {
public:
    explicit Hdf5File(const std::filesystem::path& path);  // creates (truncates)
    ~Hdf5File();
    Hdf5File(const Hdf5File&) = delete;
    Hdf5File& operator=(const Hdf5File&) = delete;

    hid_t id() const { return file_; }
    const std::filesystem::path& path() const { return path_; }

    void set_attribute(const std::string& name, const std::string& value);
    void set_attribute(const std::string& name, std::int64_t value);
    void set_attribute(const std::string& name, std::uint64_t value);
    void set_attribute(const std::string& name, double value);
    void set_attribute_bool(const std::string& name, bool value);
    void set_attribute(const std::string& object_path, const std::string& name, const std::string& value);
    void set_attribute(const std::string& object_path, const std::string& name, double value);
    void set_attribute(const std::string& object_path, const std::string& name, std::int64_t value);
    // An enum's names, "0=ok,1=rerouted,...", as the attribute `name` and as CF flag_values /
    // flag_meanings on the dataset.
    void set_enum_names(const std::string& dataset_path, const std::string& name, const std::string& names);

    // A whole dataset written at once.
    void write_array(const std::string& path, std::span<const double> data, std::vector<hsize_t> dims,
                     const std::string& units);
    void write_array(const std::string& path, std::span<const std::int32_t> data, std::vector<hsize_t> dims,
                     const std::string& units);

    // netCDF-4 dimensions, as HDF5 dimension scales, so that netCDF readers (xarray with h5netcdf) name
    // every axis. A dimension is named by its dataset's last path component.
    // A dimension without coordinate values (netCDF's "dimension but not a variable"): a dataset that
    // holds no data, of `size`, or growing with the data it is attached to when `unlimited`.
    void make_dimension(const std::string& path, hsize_t size, bool unlimited = false);
    // The existing 1-D dataset at `path` as the coordinate variable of its own dimension (/time_s).
    void make_coordinate(const std::string& path);
    // Attaches dimension_paths[i] to axis i of the dataset at dataset_path.
    void attach_dimensions(const std::string& dataset_path, const std::vector<std::string>& dimension_paths);
    // Attaches the dimension at dimension_path to axis 0 of every other dataset directly in `group`.
    void attach_dimension_to_group(const std::string& group, const std::string& dimension_path);

    void flush();

private:
    hid_t file_ = -1;
    std::filesystem::path path_;
};

// Creates any missing groups on the way to a dataset path.
hid_t link_create_properties();
void check(herr_t status, const std::string& what);

}  // namespace skyfabric::output
