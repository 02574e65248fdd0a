#include "output/hdf5_reader.hpp"

#include "output/hdf5_file.hpp"
#include "scenario/yaml_reader.hpp"

namespace skyfabric::output {

Hdf5Reader::Hdf5Reader(const std::filesystem::path& path) : path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // failures are reported here, not printed by HDF5
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_ < 0)
        throw scenario::ScenarioError(path.string() + ": not an HDF5 file that can be read (" + hdf5_error_reason() + ")");
}

Hdf5Reader::~Hdf5Reader() {
    if (file_ >= 0) H5Fclose(file_);
}

bool Hdf5Reader::has_dataset(const std::string& path) const {
    // Each link of the path must exist before the object is asked for.
    for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        const std::string prefix = path.substr(0, slash);
        if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
        if (slash == std::string::npos) break;
    }
    const hid_t set = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);  // fails for a group
    if (set < 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
    }
    H5Dclose(set);
    return true;
}

std::string Hdf5Reader::string_attribute(const std::string& name) const {
    if (H5Aexists(file_, name.c_str()) <= 0) return {};
    const hid_t a = H5Aopen(file_, name.c_str(), H5P_DEFAULT);
    const hid_t type = a >= 0 ? H5Aget_type(a) : -1;
    std::string out;
    if (type >= 0 && H5Tget_class(type) == H5T_STRING) {
        if (H5Tis_variable_str(type) > 0) {
            char* text = nullptr;
            if (H5Aread(a, type, &text) >= 0 && text) out = text;
            if (text) H5free_memory(text);
        } else {
            std::string buffer(H5Tget_size(type), '\0');
            if (H5Aread(a, type, buffer.data()) >= 0) out = buffer.c_str();
        }
    }
    if (type >= 0) H5Tclose(type);
    if (a >= 0) H5Aclose(a);
    return out;
}

std::vector<hsize_t> Hdf5Reader::shape(const std::string& path) const {
    const hid_t set = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
    if (set < 0) throw OutputError(path_.string() + ": cannot open " + path + " (" + hdf5_error_reason() + ")");
    const hid_t space = H5Dget_space(set);
    const int rank = H5Sget_simple_extent_ndims(space);
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank > 0 ? rank : 0), 0);
    if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    H5Sclose(space);
    H5Dclose(set);
    return dims;
}

std::vector<double> Hdf5Reader::float64(const std::string& path, std::vector<hsize_t>& shape) const {
    const hid_t set = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
    if (set < 0) throw OutputError(path_.string() + ": cannot open " + path + " (" + hdf5_error_reason() + ")");
    const hid_t space = H5Dget_space(set);
    const int rank = H5Sget_simple_extent_ndims(space);
    shape.assign(static_cast<std::size_t>(rank > 0 ? rank : 0), 0);
    if (rank > 0) H5Sget_simple_extent_dims(space, shape.data(), nullptr);
    hsize_t count = 1;
    for (const hsize_t d : shape) count *= d;
    std::vector<double> values(static_cast<std::size_t>(count));
    const herr_t status = count == 0 ? 0 : H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Sclose(space);
    H5Dclose(set);
    if (status < 0) throw OutputError(path_.string() + ": cannot read " + path + " (" + hdf5_error_reason() + ")");
    return values;
}

}  // namespace skyfabric::output
