// Files opened other than by a read-only map (docs/metatensor-python.md):
//
// * `open_copy_on_write(path)`: a private writable map, for PyTorch. Torch
//   has no read-only tensors, and an in-place operation on a tensor over a
//   read-only map would crash the process. Over a MAP_PRIVATE writable map
//   the tensors still share the file's pages until one is written; a write
//   copies that one page for this process and never reaches the file.
// * `open_bytes_writable(data)`: a file image copied once, writable.
// * `RemoteFile`: a remote file (http://, https://, metatensor:// over
//   QUIC) through the library's streaming client: the header at open, each
//   tensor fetched into the sparse image on first use. Arrays are views of
//   that image, which they keep alive.
//
// Each hands its `opened` to the Python `File` (`File(handle)`), so the
// views, kinds and errors are those of a local file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metatensor/stream_client.hpp"
#include "mt_binding.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

namespace {

[[noreturn]] void throw_errno(const std::string& path, const char* what, int err) {
  throw tensogram::io_error(path + ": " + what + ": " + std::strerror(err));
}

// A whole file mapped MAP_PRIVATE with write permission: copy-on-write.
class private_map {
 public:
  explicit private_map(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_errno(path, "open", errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw_errno(path, "stat", err);
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
      const int err = errno;
      ::close(fd);  // the mapping keeps the file
      if (p == MAP_FAILED) throw_errno(path, "mmap", err);
      data_ = static_cast<std::byte*>(p);
    } else {
      ::close(fd);
    }
  }
  ~private_map() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  private_map(const private_map&) = delete;
  private_map& operator=(const private_map&) = delete;
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

opened_handle open_copy_on_write(const std::string& path) {
  py::gil_scoped_release unlocked;
  try {
    auto map = std::make_shared<const private_map>(path);
    auto f = open_image(tensogram::buffer::borrowed(map->bytes()));
    f->owner = std::move(map);
    f->writable = true;
    return {std::move(f)};
  } catch (const metatensor::error& e) {
    throw e.with_context(path);
  }
}

opened_handle open_bytes_writable(const py::bytes& data) {
  const std::string_view view = data;  // immutable: readable without the GIL
  py::gil_scoped_release unlocked;
  std::vector<std::byte> copy(view.size());
  if (!view.empty()) std::memcpy(copy.data(), view.data(), view.size());
  auto f = open_image(tensogram::buffer::owned(std::move(copy)));
  f->writable = true;  // the copy is ours
  return {std::move(f)};
}

// A remote file for the Python `File`: `fetch(name)` brings a tensor's bytes
// into the image before `File.tensor(name)` views them.
class py_remote {
 public:
  static py_remote open(const std::string& url, bool writable, double timeout, bool verify,
                        const std::string& ca_file) {
    streaming::client_options options;
    options.verify_peer = verify;
    options.ca_file = ca_file;
    options.open_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000.0));
    py_remote out;
    {
      py::gil_scoped_release unlocked;  // connecting and receiving the header
      out.remote_ = std::make_shared<streaming::remote_file>(streaming::remote_file::open(url, options));
    }
    auto f = std::make_shared<opened>();
    if (out.remote_->is_metatensor()) {
      f->mt = out.remote_->image_file();
    } else {
      f->plain = out.remote_->base();
    }
    f->owner = out.remote_;  // the image lives in the remote file
    f->writable = writable;
    out.opened_ = std::move(f);
    return out;
  }

  [[nodiscard]] opened_handle handle() const { return {opened_}; }
  [[nodiscard]] std::uint64_t file_size() const { return remote_->file_size(); }
  [[nodiscard]] std::uint64_t header_size() const { return remote_->header().size(); }

  // Makes logical tensor `name` (a physical one of a plain file) present:
  // requests what is missing, waits without the GIL, and for tensors with
  // a heap runs the BlobRef checks (§10.7) before anything reads them.
  void fetch(const std::string& name) {
    const auto& f = *opened_;
    if (f.mt ? !f.mt->contains(name) : f.plain->find(name) == nullptr) throw_not_found(name);
    py::gil_scoped_release unlocked;
    std::vector<std::string> wanted;
    if (f.mt) {
      wanted.emplace_back(f.mt->primary(name).name());
      if (const auto* heap = f.mt->heap(name)) wanted.emplace_back(heap->name());
    } else {
      wanted.push_back(name);
    }
    std::vector<streaming::tensor_request> requests;
    {
      // One request per physical tensor even when threads ask at once: a
      // second request would rewrite bytes the first caller may be reading.
      std::lock_guard lock(*mutex_);
      for (const auto& physical : wanted) {
        if (remote_->has(physical)) continue;
        auto it = in_flight_.find(physical);
        if (it == in_flight_.end() || it->second.status() == streaming::request_status::failed ||
            it->second.status() == streaming::request_status::cancelled) {
          it = in_flight_.insert_or_assign(physical, remote_->get(physical)).first;
        }
        requests.push_back(it->second);
      }
    }
    for (const auto& r : requests) r.wait();
    if (!f.mt) return;
    switch (f.mt->layout(name).kind) {
      case tensor_kind::flat: static_cast<void>(remote_->flat(name)); break;
      case tensor_kind::record: static_cast<void>(remote_->records(name)); break;
      case tensor_kind::blob: static_cast<void>(remote_->blobs(name)); break;
    }
  }

  [[nodiscard]] bool has(const std::string& physical_name) const { return remote_->has(physical_name); }

  // Ends the connection; arrays already returned keep the image.
  void close() {
    py::gil_scoped_release unlocked;
    remote_->close();
  }

 private:
  std::shared_ptr<streaming::remote_file> remote_;
  opened_ptr opened_;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();  // guards in_flight_
  std::map<std::string, streaming::tensor_request, std::less<>> in_flight_;
};

}  // namespace

void register_sources(py::module_& m) {
  py::class_<opened_handle>(m, "_Opened", "An opened file on its way to `File(opened)`.");
  m.def("open_copy_on_write", &open_copy_on_write, py::arg("path"),
        "Maps a file privately and writably (copy-on-write: writes stay in this process) and validates it.");
  m.def("open_bytes_writable", &open_bytes_writable, py::arg("data"),
        "Validates a writable copy of a file image.");
  py::class_<py_remote>(m, "RemoteFile",
                        "A remote metatensor or safetensors file: header at open, tensors fetched on demand.")
      .def_static("open", &py_remote::open, py::arg("url"), py::arg("writable") = false,
                  py::arg("timeout") = 30.0, py::arg("verify") = true, py::arg("ca_file") = "",
                  "Connects and receives and validates the header (http://, https://, metatensor://).")
      .def_property_readonly("opened", &py_remote::handle, "The file for `File(opened)`.")
      .def_property_readonly("file_size", &py_remote::file_size)
      .def_property_readonly("header_size", &py_remote::header_size, "8 + N: the bytes fetched at open.")
      .def("fetch", &py_remote::fetch, py::arg("name"),
           "Fetches a tensor's bytes (and heap) unless present; the GIL is released while waiting.")
      .def("has", &py_remote::has, py::arg("physical_name"), "True when a physical tensor is in the image.")
      .def("close", &py_remote::close, "Ends the connection; arrays already returned stay valid.");
}

}  // namespace metatensor::python
