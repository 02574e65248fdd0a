#include "output/hdf5_file.hpp"

#include <hdf5_hl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace skyfabric::output {

namespace {

// The OS reason HDF5 recorded for the failure (its file drivers put "errno = 28, error message = 'No space
// left on device'" on the error stack), or the innermost description.
herr_t collect_reason(unsigned, const H5E_error2_t* error, void* data) {
    auto& reason = *static_cast<std::string*>(data);
    if (error->desc == nullptr) return 0;
    const std::string desc = error->desc;
    const auto at = desc.find("error message = '");
    if (at != std::string::npos) {
        const auto start = at + 17;
        reason = desc.substr(start, desc.find('\'', start) - start);
        return 1;  // found: stop walking
    }
    if (reason.empty()) reason = desc;
    return 0;
}

}  // namespace

std::string hdf5_error_reason() {
    std::string reason;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_reason, &reason);
    H5Eclear2(H5E_DEFAULT);
    return reason;
}

void check(herr_t status, const std::string& what) {
    if (status < 0) {
        const std::string reason = hdf5_error_reason();
        throw OutputError("HDF5: " + what + " failed" + (reason.empty() ? "" : ": " + reason));
    }
}

hid_t link_create_properties() {
    static const hid_t lcpl = [] {
        const hid_t p = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(p, 1);
        return p;
    }();
    return lcpl;
}

namespace {

hid_t native(ElementType type) {
    switch (type) {
        case ElementType::float64: return H5T_NATIVE_DOUBLE;
        case ElementType::int64: return H5T_NATIVE_INT64;
        case ElementType::int32: return H5T_NATIVE_INT32;
        case ElementType::uint8: return H5T_NATIVE_UINT8;
    }
    return H5T_NATIVE_DOUBLE;
}

std::size_t element_bytes(ElementType type) {
    switch (type) {
        case ElementType::float64:
        case ElementType::int64: return 8;
        case ElementType::int32: return 4;
        case ElementType::uint8: return 1;
    }
    return 8;
}

// Variable-length UTF-8 strings: h5py reads them as str.
hid_t string_type() {
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

void write_string_attribute(hid_t object, const std::string& name, const std::string& value) {
    if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
    const hid_t type = string_type();
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    const char* text = value.c_str();
    const herr_t status = attr < 0 ? -1 : H5Awrite(attr, type, &text);
    if (attr >= 0) H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    check(status, "writing attribute " + name);
}

template <class T>
void write_scalar_attribute(hid_t object, const std::string& name, hid_t type, const T& value) {
    if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    const herr_t status = attr < 0 ? -1 : H5Awrite(attr, type, &value);
    if (attr >= 0) H5Aclose(attr);
    H5Sclose(space);
    check(status, "writing attribute " + name);
}

}  // namespace

namespace {

// Before the library's first use. A file whose close failed (disk full) stays in HDF5's open-file
// table, and HDF5's own exit handler would close it again and crash (H5F__close_cb): files are closed
// by their owners here, so that handler is not installed. Errors are reported by us, not printed.
void prepare_hdf5() { silence_hdf5_on_this_thread(); }

}  // namespace

void silence_hdf5_on_this_thread() {
    // Once, before any other call into the library (whichever thread comes first): a call would
    // initialise it and install the exit handler.
    static const bool prepared = [] {
        H5dont_atexit();
        return true;
    }();
    (void)prepared;
    // The library is built thread-safe: each thread has its own error stack and its own printing,
    // so the thread that writes in the background (BackgroundRecorders) is silenced too, else a
    // full disk prints the whole HDF5-DIAG stack there.
    thread_local const bool silenced = [] {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return true;
    }();
    (void)silenced;
}

bool hdf5_run_file_is_complete(const std::filesystem::path& path) {
    prepare_hdf5();
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
    }
    bool complete = false;
    if (H5Aexists(f, "complete") > 0) {
        const hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
        const hid_t type = a >= 0 ? H5Aget_type(a) : -1;  // the h5py-style bool enum over int8
        std::int8_t value = 0;
        complete = type >= 0 && H5Tget_size(type) == 1 && H5Aread(a, type, &value) >= 0 && value != 0;
        if (type >= 0) H5Tclose(type);
        if (a >= 0) H5Aclose(a);
    }
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return complete;
}

Hdf5File::Hdf5File(const std::filesystem::path& path) : path_(path) {
    prepare_hdf5();
    // Created afresh (EXCL after removing the name): a symlink planted at `path` is replaced, never followed.
    ::unlink(path.c_str());
    file_ = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (file_ < 0) {
        const std::string reason = hdf5_error_reason();
        throw OutputError("cannot create HDF5 file " + path.string() + (reason.empty() ? "" : ": " + reason));
    }
}

Hdf5File::~Hdf5File() {
    if (file_ >= 0) H5Fclose(file_);
}

void Hdf5File::flush() { check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush of " + path_.string()); }

void Hdf5File::set_attribute(const std::string& name, const std::string& value) {
    write_string_attribute(file_, name, value);
}
void Hdf5File::set_attribute(const std::string& name, std::int64_t value) {
    write_scalar_attribute(file_, name, H5T_NATIVE_INT64, value);
}
void Hdf5File::set_attribute(const std::string& name, std::uint64_t value) {
    write_scalar_attribute(file_, name, H5T_NATIVE_UINT64, value);
}
void Hdf5File::set_attribute(const std::string& name, double value) {
    write_scalar_attribute(file_, name, H5T_NATIVE_DOUBLE, value);
}
void Hdf5File::set_attribute_bool(const std::string& name, bool value) {
    // The enum h5py uses for numpy bool, so Python reads True/False.
    const hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
    std::int8_t f = 0, t = 1;
    H5Tenum_insert(type, "FALSE", &f);
    H5Tenum_insert(type, "TRUE", &t);
    const std::int8_t v = value ? 1 : 0;
    write_scalar_attribute(file_, name, type, v);
    H5Tclose(type);
}
void Hdf5File::set_attribute(const std::string& object_path, const std::string& name, const std::string& value) {
    const hid_t object = H5Oopen(file_, object_path.c_str(), H5P_DEFAULT);
    if (object < 0) throw OutputError("HDF5: no object " + object_path);
    write_string_attribute(object, name, value);
    H5Oclose(object);
}

void Hdf5File::set_attribute(const std::string& object_path, const std::string& name, double value) {
    const hid_t object = H5Oopen(file_, object_path.c_str(), H5P_DEFAULT);
    if (object < 0) throw OutputError("HDF5: no object " + object_path);
    write_scalar_attribute(object, name, H5T_NATIVE_DOUBLE, value);
    H5Oclose(object);
}

void Hdf5File::set_attribute(const std::string& object_path, const std::string& name, std::int64_t value) {
    const hid_t object = H5Oopen(file_, object_path.c_str(), H5P_DEFAULT);
    if (object < 0) throw OutputError("HDF5: no object " + object_path);
    write_scalar_attribute(object, name, H5T_NATIVE_INT64, value);
    H5Oclose(object);
}

void Hdf5File::set_enum_names(const std::string& dataset_path, const std::string& name, const std::string& names) {
    set_attribute(dataset_path, name, names);
    // The same list as CF-1.8 flags: flag_values in the dataset's own type, flag_meanings
    // space-separated, which netCDF tools read without knowing skyfabric's "0=a,1=b" form.
    std::vector<std::int32_t> values;
    std::string meanings;
    std::size_t start = 0;
    while (start < names.size()) {
        const std::size_t end = std::min(names.find(',', start), names.size());
        const std::string item = names.substr(start, end - start);
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos) throw OutputError("HDF5: " + dataset_path + ": enum name '" + item + "' is not N=name");
        values.push_back(std::stoi(item.substr(0, eq)));
        meanings += (meanings.empty() ? "" : " ") + item.substr(eq + 1);
        start = end + 1;
    }
    const hid_t set = H5Dopen2(file_, dataset_path.c_str(), H5P_DEFAULT);
    if (set < 0) throw OutputError("HDF5: no dataset " + dataset_path);
    const hid_t type = H5Dget_type(set);
    const hsize_t count = values.size();
    const hid_t space = H5Screate_simple(1, &count, nullptr);
    const hid_t attribute = H5Acreate2(set, "flag_values", type, space, H5P_DEFAULT, H5P_DEFAULT);
    const herr_t status = attribute < 0 ? -1 : H5Awrite(attribute, H5T_NATIVE_INT32, values.data());
    if (attribute >= 0) H5Aclose(attribute);
    H5Sclose(space);
    H5Tclose(type);
    write_string_attribute(set, "flag_meanings", meanings);
    H5Dclose(set);
    check(status, "writing " + dataset_path + " flag_values");
}

namespace {
template <class T>
void write_whole(hid_t file, const std::string& path, std::span<const T> data, const std::vector<hsize_t>& dims,
                 hid_t type, const std::string& units) {
    const hsize_t count = std::accumulate(dims.begin(), dims.end(), hsize_t{1}, std::multiplies<>());
    if (count != data.size()) throw OutputError("HDF5: " + path + ": data size does not match its shape");
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t set = H5Dcreate2(file, path.c_str(), type, space, link_create_properties(), H5P_DEFAULT, H5P_DEFAULT);
    herr_t status = set < 0 ? -1 : H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data());
    if (set >= 0) {
        write_string_attribute(set, "units", units);
        H5Dclose(set);
    }
    H5Sclose(space);
    check(status, "writing " + path);
}
}  // namespace

void Hdf5File::write_array(const std::string& path, std::span<const double> data, std::vector<hsize_t> dims,
                           const std::string& units) {
    write_whole(file_, path, data, dims, H5T_NATIVE_DOUBLE, units);
}
void Hdf5File::write_array(const std::string& path, std::span<const std::int32_t> data, std::vector<hsize_t> dims,
                           const std::string& units) {
    write_whole(file_, path, data, dims, H5T_NATIVE_INT32, units);
}

namespace {

// An open dataset, closed at the end of the scope.
struct Dataset {
    hid_t id;
    Dataset(hid_t file, const std::string& path) : id(H5Dopen2(file, path.c_str(), H5P_DEFAULT)) {
        if (id < 0) {
            H5Eclear2(H5E_DEFAULT);
            throw OutputError("HDF5: no dataset " + path);
        }
    }
    ~Dataset() { H5Dclose(id); }
    Dataset(const Dataset&) = delete;
    Dataset& operator=(const Dataset&) = delete;
};

}  // namespace

void Hdf5File::make_dimension(const std::string& path, hsize_t size, bool unlimited) {
    const hsize_t max_size = unlimited ? H5S_UNLIMITED : size;
    const hid_t space = H5Screate_simple(1, &size, &max_size);
    const hid_t props = H5Pcreate(H5P_DATASET_CREATE);
    if (unlimited) {
        const hsize_t chunk = 1024;
        H5Pset_chunk(props, 1, &chunk);  // nothing is written, so no chunk is ever stored
    }
    const hid_t set = H5Dcreate2(file_, path.c_str(), H5T_NATIVE_FLOAT, space, link_create_properties(), props, H5P_DEFAULT);
    H5Pclose(props);
    H5Sclose(space);
    if (set < 0) check(-1, "creating dimension " + path);
    // netCDF-4's mark of a dimension without a coordinate variable: this text and the size in ten columns.
    char name[96];
    std::snprintf(name, sizeof name, "This is a netCDF dimension but not a netCDF variable.%10llu",
                  static_cast<unsigned long long>(unlimited ? 0 : size));
    const herr_t status = H5DSset_scale(set, name);
    H5Dclose(set);
    check(status, "making " + path + " a dimension");
}

void Hdf5File::make_coordinate(const std::string& path) {
    const Dataset set(file_, path);
    const std::string name = path.substr(path.rfind('/') + 1);
    check(H5DSset_scale(set.id, name.c_str()), "making " + path + " a dimension");
}

void Hdf5File::attach_dimensions(const std::string& dataset_path, const std::vector<std::string>& dimension_paths) {
    const Dataset set(file_, dataset_path);
    for (std::size_t axis = 0; axis < dimension_paths.size(); ++axis) {
        const Dataset scale(file_, dimension_paths[axis]);
        check(H5DSattach_scale(set.id, scale.id, static_cast<unsigned>(axis)),
              "attaching " + dimension_paths[axis] + " to " + dataset_path);
    }
}

void Hdf5File::attach_dimension_to_group(const std::string& group, const std::string& dimension_path) {
    const hid_t g = H5Gopen2(file_, group.c_str(), H5P_DEFAULT);
    if (g < 0) check(-1, "opening " + group);
    H5G_info_t info{};
    const herr_t status = H5Gget_info(g, &info);
    std::vector<std::string> datasets;
    for (hsize_t i = 0; status >= 0 && i < info.nlinks; ++i) {
        char name[256];
        if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0) continue;
        const hid_t object = H5Oopen(g, name, H5P_DEFAULT);
        if (object >= 0 && H5Iget_type(object) == H5I_DATASET) datasets.push_back(group + "/" + name);
        if (object >= 0) H5Oclose(object);
    }
    H5Gclose(g);
    check(status, "listing " + group);
    for (const auto& path : datasets) {
        if (path != dimension_path) attach_dimensions(path, {dimension_path});
    }
}

Hdf5Series::Hdf5Series(Hdf5File& file, const std::string& path, std::vector<hsize_t> tail_dims, ElementType type,
                       const std::string& units, int compression_level)
    : memtype_(native(type)), path_(path), tail_dims_(std::move(tail_dims)) {
    const hsize_t row_elements =
        std::accumulate(tail_dims_.begin(), tail_dims_.end(), hsize_t{1}, std::multiplies<>());
    row_bytes_ = static_cast<std::size_t>(row_elements) * element_bytes(type);
    // About 1 MiB per chunk, at least one row, at most 1024 rows.
    chunk_rows_ = std::clamp<hsize_t>((1u << 20) / std::max<std::size_t>(row_bytes_, 1), 1, 1024);

    std::vector<hsize_t> dims{0}, max_dims{H5S_UNLIMITED}, chunk{chunk_rows_};
    for (hsize_t d : tail_dims_) {
        dims.push_back(d);
        max_dims.push_back(d);
        chunk.push_back(std::max<hsize_t>(d, 1));
    }
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data());
    const hid_t props = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(props, static_cast<int>(chunk.size()), chunk.data());
    if (compression_level > 0 && row_bytes_ > 0) {
        H5Pset_shuffle(props);
        H5Pset_deflate(props, static_cast<unsigned>(compression_level));
    }
    // A chunk cache of one chunk: the one that flush() left part-written (flush_all, every 256 samples) stays
    // there, and no chunk already written is held (HDF5's default holds up to 1 MiB of them a dataset: ~60 MB
    // for a day of serving's request columns and the time series).
    const hid_t access = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(access, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, static_cast<std::size_t>(chunk_rows_) * row_bytes_, 1.0);
    dataset_ = H5Dcreate2(file.id(), path.c_str(), memtype_, space, link_create_properties(), props, access);
    H5Pclose(access);
    H5Pclose(props);
    H5Sclose(space);
    if (dataset_ < 0) throw OutputError("HDF5: cannot create dataset " + path);
    write_string_attribute(dataset_, "units", units);
    buffer_.resize(static_cast<std::size_t>(chunk_rows_) * row_bytes_);
}

Hdf5Series::~Hdf5Series() {
    try {
        flush();
    } catch (...) {
        // Destructors must not throw; a failed final flush was already reported by end().
    }
    if (dataset_ >= 0) H5Dclose(dataset_);
}

void Hdf5Series::append(const void* row) {
    // A zero-width row (e.g. no neighbours with one satellite) may come as a null pointer.
    if (row_bytes_ > 0) std::memcpy(buffer_.data() + static_cast<std::size_t>(buffered_rows_) * row_bytes_, row, row_bytes_);
    if (++buffered_rows_ == chunk_rows_) flush();
}

void Hdf5Series::append_rows(const void* rows, std::size_t count) {
    // As many rows at a time as the chunk's buffer has room for (a block of requests: thousands).
    const auto* bytes = static_cast<const unsigned char*>(rows);
    while (count > 0) {
        const auto take = std::min<std::size_t>(count, static_cast<std::size_t>(chunk_rows_ - buffered_rows_));
        if (row_bytes_ > 0) std::memcpy(buffer_.data() + static_cast<std::size_t>(buffered_rows_) * row_bytes_, bytes, take * row_bytes_);
        bytes += take * row_bytes_;
        count -= take;
        if ((buffered_rows_ += take) == chunk_rows_) flush();
    }
}

void Hdf5Series::flush() {
    if (buffered_rows_ == 0) return;
    std::vector<hsize_t> new_dims{rows_written_ + buffered_rows_}, start{rows_written_}, count{buffered_rows_};
    for (hsize_t d : tail_dims_) {
        new_dims.push_back(d);
        start.push_back(0);
        count.push_back(d);
    }
    check(H5Dset_extent(dataset_, new_dims.data()), "extending " + path_);
    const hid_t file_space = H5Dget_space(dataset_);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    const hid_t mem_space = H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr);
    const herr_t status = H5Dwrite(dataset_, memtype_, mem_space, file_space, H5P_DEFAULT, buffer_.data());
    H5Sclose(mem_space);
    H5Sclose(file_space);
    check(status, "writing " + path_);
    rows_written_ += buffered_rows_;
    buffered_rows_ = 0;
}

}  // namespace skyfabric::output
