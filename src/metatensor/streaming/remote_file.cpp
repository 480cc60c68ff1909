// `remote_file`: a remote file's header, validated, and a sparse image that
// tensors are fetched into (spec 06 §10.1, §10.4 step 3, §10.7).
//
// The image is one anonymous private mapping of the file's size (or memory
// the caller provides): pages of tensors never fetched are never committed,
// and because every tensor lands at its absolute offset, the validated
// `metatensor::file` over the image hands out the ordinary views of §9 once
// a tensor's bytes are all there.
#include "metatensor/stream_client.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"
#include "transport.hpp"

namespace metatensor::streaming {

namespace detail {

// Anonymous memory for the image: zero pages until written, page-aligned
// (every placement alignment of §6.5 divides the page size of our hosts; a
// larger one is caught by `file::from_header_image`).
class anonymous_mapping {
 public:
  explicit anonymous_mapping(std::uint64_t size) : size_(static_cast<std::size_t>(size)) {
    if (size_ == 0) return;
    void* p =
        ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      throw tensogram::remote_error("cannot reserve " + std::to_string(size) + " bytes for the file image");
    }
    data_ = static_cast<std::byte*>(p);
    // Tensors arrive in large runs: 2 MiB pages fault 512 times less often
    // than 4 KiB ones (the profile of a 256 MiB fetch spent a quarter of its
    // time in page faults). Still untouched pages stay uncommitted.
    tensogram::advise_huge_pages(data_, size_);
  }
  ~anonymous_mapping() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  anonymous_mapping(const anonymous_mapping&) = delete;
  anonymous_mapping& operator=(const anonymous_mapping&) = delete;
  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_;
};

struct request_block {
  std::weak_ptr<remote_core> core;
  std::uint64_t id = 0;
  std::string tensor;
  byte_range range;
  bool whole_into_image = false;  // completes a physical tensor of the image
  std::function<void(const tensor_request&)> on_complete;

  std::atomic<std::uint64_t> received{0};
  mutable std::mutex mutex;
  std::condition_variable cv;
  request_status status = request_status::pending;
  std::exception_ptr error;
  bool settled = false;  // status final and `on_complete` has returned: waiters may go
};

struct remote_core final : transport_listener, std::enable_shared_from_this<remote_core> {
  remote_url url;
  client_options options;
  std::unique_ptr<transport> link;
  opened_file opened;
  std::unique_ptr<anonymous_mapping> own_image;
  std::span<std::byte> image;
  std::optional<safetensors::file> base;
  std::optional<metatensor::file> meta;

  mutable std::mutex mutex;
  std::uint64_t next_id = 1;
  std::map<std::uint64_t, std::shared_ptr<request_block>> active;
  std::set<std::string, std::less<>> requested;  // whole tensors asked for, into the image
  std::set<std::string, std::less<>> present;    // whole tensors in the image
  mutable std::set<std::string, std::less<>> blob_checked;
  bool closed = false;

  // ---- transport_listener ----------------------------------------------------------
  std::shared_ptr<request_block> find(std::uint64_t id) {
    std::lock_guard lock(mutex);
    const auto it = active.find(id);
    return it == active.end() ? nullptr : it->second;
  }
  void on_progress(std::uint64_t id, std::uint64_t received) override {
    if (auto b = find(id)) b->received.store(received, std::memory_order_relaxed);
  }
  void on_complete(std::uint64_t id) override { end(id, request_status::complete, nullptr); }
  void on_failed(std::uint64_t id, std::exception_ptr e) override {
    end(id, request_status::failed, std::move(e));
  }
  void on_cancelled(std::uint64_t id) override {
    end(id, request_status::cancelled,
        std::make_exception_ptr(tensogram::cancelled_error("request for a tensor was cancelled")));
  }
  void on_connection_lost(std::exception_ptr e) override {
    std::vector<std::uint64_t> ids;
    {
      std::lock_guard lock(mutex);
      for (const auto& [id, b] : active) ids.push_back(id);
    }
    for (const auto id : ids) end(id, request_status::failed, e);
  }

  void end(std::uint64_t id, request_status status, std::exception_ptr error) {
    std::shared_ptr<request_block> b;
    {
      std::lock_guard lock(mutex);
      const auto it = active.find(id);
      if (it == active.end()) return;
      b = it->second;
      active.erase(it);
      if (b->whole_into_image) {
        if (status == request_status::complete) {
          present.insert(b->tensor);
        } else {
          requested.erase(b->tensor);  // may be asked for again
        }
      }
    }
    {
      std::lock_guard lock(b->mutex);
      if (status == request_status::complete) b->received.store(b->range.end - b->range.begin);
      b->status = status;
      b->error = std::move(error);
    }
    // The callback runs before waiters wake, so whoever waits on a request
    // sees everything its callback did.
    if (b->on_complete) b->on_complete(tensor_request(b));
    {
      std::lock_guard lock(b->mutex);
      b->settled = true;
    }
    b->cv.notify_all();
  }

  tensor_request make_request(std::string_view name, request_options options) {
    if (options.urgency > 7) {
      throw tensogram::invalid_arg_error("urgency " + std::to_string(options.urgency) + " is above 7");
    }
    transport_request r;
    r.get.tensor = std::string(name);
    r.get.urgency = options.urgency;
    r.get.incremental = options.incremental;
    const safetensors::tensor_view* t = base->find(name);
    // An unknown name is still sent: the server's MT_NOT_FOUND is the answer
    // (§10.4); there is nothing to receive, so the range is empty.
    const std::uint64_t size = t != nullptr ? t->end() - t->begin() : 0;
    const byte_range range = options.range.value_or(byte_range{0, size});
    if (t != nullptr && (range.begin > range.end || range.end > size)) {
      throw protocol_error(stream_errc::bad_range, "tensor \"" + r.get.tensor + "\": range [" +
                                                       std::to_string(range.begin) + ", " +
                                                       std::to_string(range.end) + ") is not within its " +
                                                       std::to_string(size) + " bytes");
    }
    r.get.range = range;
    r.tensor_offset = t != nullptr ? base->data_offset() + t->begin() : 0;
    r.tensor_size = size;
    const std::uint64_t length = range.end - range.begin;
    const bool into_caller = options.into.data() != nullptr;
    if (into_caller) {
      if (options.into.size() != length) {
        throw tensogram::invalid_arg_error("`into` holds " + std::to_string(options.into.size()) +
                                           " bytes, the range " + std::to_string(length));
      }
      r.destination = options.into;
    } else {
      r.destination = image.subspan(static_cast<std::size_t>(r.tensor_offset + range.begin),
                                    static_cast<std::size_t>(length));
      // The image is the caller's mapping of this file: write the file.
      if (own_image == nullptr && this->options.image_fd >= 0) {
        r.file = {this->options.image_fd, r.tensor_offset + range.begin};
      }
    }
    auto b = std::make_shared<request_block>();
    b->core = weak_from_this();
    b->tensor = r.get.tensor;
    b->range = range;
    b->whole_into_image = t != nullptr && !into_caller && range.begin == 0 && range.end == size;
    b->on_complete = std::move(options.on_complete);
    {
      std::lock_guard lock(mutex);
      if (closed) throw tensogram::invalid_arg_error(url.text + ": the remote file is closed");
      b->id = r.id = next_id++;
      active.emplace(b->id, b);
      if (b->whole_into_image) requested.insert(b->tensor);
    }
    link->start(std::move(r));
    return tensor_request(b);
  }

  void require_present(std::string_view name) const {
    std::lock_guard lock(mutex);
    if (!present.contains(name)) {
      throw tensogram::invalid_arg_error("tensor \"" + std::string(name) + "\" has not been received (yet)");
    }
  }

  const metatensor::file& meta_file() const {
    if (!meta)
      throw tensogram::invalid_arg_error(url.text + " is a plain safetensors file, not a metatensor file");
    return *meta;
  }

  // §10.7: a logical tensor's views need its primary and heap, and for
  // BlobRefs the checks of §6.4 once both are in.
  void require_logical(std::string_view name) const {
    const metatensor::file& f = meta_file();
    require_present(f.primary(name).name());
    if (const auto* heap = f.heap(name)) {
      require_present(heap->name());
      std::unique_lock lock(mutex);
      if (blob_checked.contains(name)) return;
      lock.unlock();
      f.check_blob_refs(name);
      lock.lock();
      blob_checked.insert(std::string(name));
    }
  }
};

}  // namespace detail

// ---- tensor_request ----------------------------------------------------------------------

namespace {
const detail::request_block& block_of(const std::shared_ptr<detail::request_block>& b) {
  if (!b) throw tensogram::invalid_arg_error("empty tensor_request");
  return *b;
}
}  // namespace

const std::string& tensor_request::tensor() const {
  return block_of(block_).tensor;
}
byte_range tensor_request::range() const {
  return block_of(block_).range;
}
std::uint64_t tensor_request::size() const {
  return block_of(block_).range.end - block_of(block_).range.begin;
}
std::uint64_t tensor_request::received() const {
  return block_of(block_).received.load(std::memory_order_relaxed);
}

request_status tensor_request::status() const {
  const auto& b = block_of(block_);
  std::lock_guard lock(b.mutex);
  return b.status;
}

void tensor_request::wait() const {
  auto& b = const_cast<detail::request_block&>(block_of(block_));
  std::unique_lock lock(b.mutex);
  b.cv.wait(lock, [&] { return b.settled; });
  if (b.error) std::rethrow_exception(b.error);
}

bool tensor_request::wait_for(std::chrono::milliseconds timeout) const {
  auto& b = const_cast<detail::request_block&>(block_of(block_));
  std::unique_lock lock(b.mutex);
  return b.cv.wait_for(lock, timeout, [&] { return b.settled; });
}

std::exception_ptr tensor_request::error() const {
  const auto& b = block_of(block_);
  std::lock_guard lock(b.mutex);
  return b.error;
}

void tensor_request::cancel() const {
  const auto& b = block_of(block_);
  if (status() != request_status::pending) return;
  if (auto core = b.core.lock()) core->link->cancel(b.id);
}

void tensor_request::set_priority(std::uint8_t urgency, bool incremental) const {
  const auto& b = block_of(block_);
  if (urgency > 7) throw tensogram::invalid_arg_error("urgency " + std::to_string(urgency) + " is above 7");
  if (status() != request_status::pending) return;
  if (auto core = b.core.lock()) core->link->update_priority(b.id, stream_priority{urgency, incremental});
}

// ---- remote_file -------------------------------------------------------------------------

namespace {

bool has_metatensor_keys(const safetensors::file& base) {
  for (const auto& [key, value] : base.metadata()) {
    if (key.starts_with("metatensor.")) return true;
  }
  return false;
}

}  // namespace

remote_file remote_file::open(std::string_view url, client_options options) {
  auto core = std::make_shared<detail::remote_core>();
  core->url = detail::parse_remote_url(url);
  core->options = std::move(options);
  core->link = core->url.kind == detail::remote_url::scheme::quic
                   ? detail::make_quic_transport(core->url, core->options, *core)
                   : detail::make_http_transport(core->url, core->options, *core);
  core->opened = core->link->open();
  const auto& info = core->opened.info;
  try {
    if (core->opened.header.size() != info.header_size || info.header_size > info.file_size) {
      throw protocol_error(stream_errc::protocol_error, "the header does not match the announced sizes");
    }
    if (core->options.image_provider) {
      core->image = core->options.image_provider(info.file_size);
      if (core->image.size() != info.file_size) {
        throw tensogram::invalid_arg_error("image_provider returned " + std::to_string(core->image.size()) +
                                           " bytes for a file of " + std::to_string(info.file_size));
      }
    } else {
      core->own_image = std::make_unique<detail::anonymous_mapping>(info.file_size);
      core->image = core->own_image->bytes();
    }
    std::copy(core->opened.header.begin(), core->opened.header.end(), core->image.begin());
    // §10.4 step 3: structural validation of the header, BlobRefs excepted.
    const auto image = tensogram::buffer::borrowed(core->image);
    core->base = safetensors::file::from_buffer(image);
    if (has_metatensor_keys(*core->base)) core->meta = metatensor::file::from_header_image(image);
  } catch (const std::exception& e) {
    core->link->close(stream_errc::invalid_file, e.what());
    throw;
  }
  return remote_file(std::move(core));
}

remote_file::~remote_file() {
  if (core_) close();
}
remote_file::remote_file(remote_file&&) noexcept = default;
remote_file& remote_file::operator=(remote_file&& other) noexcept {
  if (this != &other) {
    if (core_) close();
    core_ = std::move(other.core_);
  }
  return *this;
}

std::uint64_t remote_file::file_size() const noexcept {
  return core_->opened.info.file_size;
}
std::span<const std::byte> remote_file::header() const noexcept {
  return core_->opened.header;
}
const std::optional<std::string>& remote_file::etag() const noexcept {
  return core_->opened.info.etag;
}
const safetensors::file& remote_file::base() const noexcept {
  return *core_->base;
}
bool remote_file::is_metatensor() const noexcept {
  return core_->meta.has_value();
}
std::span<const std::byte> remote_file::image() const noexcept {
  return core_->image;
}

std::vector<std::string> remote_file::physical_names() const {
  std::vector<std::string> names;
  for (const auto& t : core_->base->tensors()) names.emplace_back(t.name());
  return names;
}

tensor_request remote_file::get(std::string_view physical_name, request_options options) {
  return core_->make_request(physical_name, std::move(options));
}

std::vector<tensor_request> remote_file::get_all(std::uint8_t urgency,
                                                 std::function<void(const tensor_request&)> on_complete) {
  std::vector<tensor_request> out;
  for (const auto& t : core_->base->tensors()) {
    {
      std::lock_guard lock(core_->mutex);
      if (core_->requested.contains(t.name()) || core_->present.contains(t.name())) continue;
    }
    request_options o;
    o.urgency = urgency;
    o.on_complete = on_complete;
    out.push_back(get(t.name(), std::move(o)));
  }
  return out;
}

std::vector<tensor_request> remote_file::get_logical(std::string_view logical_name, std::uint8_t urgency,
                                                     std::function<void(const tensor_request&)> on_complete) {
  const metatensor::file& f = core_->meta_file();
  std::vector<tensor_request> out;
  request_options o;
  o.urgency = urgency;
  o.on_complete = on_complete;
  out.push_back(get(f.primary(logical_name).name(), o));
  // §10.5: the heap no more urgent than its index (equal here).
  if (const auto* heap = f.heap(logical_name)) out.push_back(get(heap->name(), o));
  return out;
}

bool remote_file::has(std::string_view physical_name) const {
  std::lock_guard lock(core_->mutex);
  return core_->present.contains(physical_name);
}

safetensors::tensor_view remote_file::tensor(std::string_view physical_name) const {
  const auto& t = core_->base->at(physical_name);
  core_->require_present(physical_name);
  return t;
}

flat_view remote_file::flat(std::string_view logical_name) const {
  core_->require_logical(logical_name);
  return core_->meta->flat(logical_name);
}

record_view remote_file::records(std::string_view logical_name) const {
  core_->require_logical(logical_name);
  return core_->meta->records(logical_name);
}

blob_view remote_file::blobs(std::string_view logical_name) const {
  core_->require_logical(logical_name);
  return core_->meta->blobs(logical_name);
}

const metatensor::file& remote_file::image_file() const {
  return core_->meta_file();
}

void remote_file::close() {
  {
    std::lock_guard lock(core_->mutex);
    if (core_->closed) return;
    core_->closed = true;
  }
  core_->link->close(stream_errc::no_error, "closed by the client");
  // Requests still pending end as cancelled (the transport no longer reports).
  std::vector<std::uint64_t> ids;
  {
    std::lock_guard lock(core_->mutex);
    for (const auto& [id, b] : core_->active) ids.push_back(id);
  }
  for (const auto id : ids) core_->on_cancelled(id);
}

}  // namespace metatensor::streaming
