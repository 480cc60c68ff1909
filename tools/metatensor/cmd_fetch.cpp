// `metatensor fetch URL [TENSOR...] -o FILE`: fetches a remote metatensor or
// safetensors file, or some of its tensors, over QUIC (spec 06 §10) or HTTP
// range requests (§10.9), into a local file of the remote's size.
//
// The client writes every tensor straight at its absolute offset (§10.7)
// into a temporary file next to the output, with pwrite(2)
// (`client_options::image_fd`), and reads it back through a shared mapping
// of that file (`client_options::image_provider`), so nothing is copied
// twice and tensors not fetched stay zero (sparse on most file systems). The temporary file is
// renamed into place only when every request succeeded and, unless
// --no-validate, what arrived passed the structural checks (§8.1); on any
// failure, or SIGINT/SIGTERM, it is removed and an existing FILE is left
// untouched.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <metatensor.hpp>
#include <metatensor/stream_client.hpp>

#include "global_options.hpp"
#include "metatensor_commands.hpp"
#include "multi_progress.hpp"
#include "signals.hpp"
#include "tool_error.hpp"

namespace metatensor::cli {

namespace {

using tensogram::cli::tool_error;

[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what, int err) {
  throw tool_error("cannot write " + path.string() + ": " + what + ": " + std::strerror(err));
}

// The output file while it is being fetched: `FILE.tmp-XXXXXX`, mapped
// shared so the client's writes land in it. Removed unless committed.
class output_image {
 public:
  explicit output_image(std::filesystem::path destination) : destination_(std::move(destination)) {
    std::random_device rd;
    // O_EXCL and a random suffix make the name ours alone; mode 0666 lets
    // the umask decide, as for any new file (src/io/atomic_file.cpp does
    // the same).
    static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
      std::string name = destination_.string();
      name += ".tmp-";
      for (int i = 0; i < 6; ++i) name += alphabet[rd() % (sizeof alphabet - 1)];
      temp_ = name;
      fd_ = ::open(temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) fail_errno(destination_, "cannot create temporary file", errno);
    }
    if (fd_ < 0) fail_errno(destination_, "cannot create temporary file", EEXIST);
  }
  output_image(const output_image&) = delete;
  output_image& operator=(const output_image&) = delete;
  ~output_image() {
    unmap();
    if (fd_ >= 0) ::close(fd_);
    abandon();
  }

  // The image provider: called once, with the remote file's size.
  std::span<std::byte> map(std::uint64_t size) {
    if (size == 0 || size > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) {
      throw tool_error("remote file size " + std::to_string(size) + " cannot be mapped");
    }
    // ftruncate leaves every byte zero (and unallocated): tensors that are
    // not fetched read as zeros.
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) fail_errno(destination_, "ftruncate", errno);
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) fail_errno(destination_, "mmap", errno);
    map_ = p;
    size_ = size;
    return {static_cast<std::byte*>(p), static_cast<std::size_t>(size)};
  }

  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {static_cast<std::byte*>(map_), size_}; }
  [[nodiscard]] int fd() const noexcept { return fd_; }

  // Flushes the mapping and renames the file into place.
  void commit() {
    if (map_ != nullptr && ::msync(map_, size_, MS_SYNC) != 0) fail_errno(destination_, "msync", errno);
    unmap();
    // fsync before rename: otherwise a crash can leave the new name
    // pointing at an empty file on some file systems.
    if (::fsync(fd_) != 0) fail_errno(destination_, "fsync", errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail_errno(destination_, "close", errno);
    const std::lock_guard lock(name_lock_);
    if (::rename(temp_.c_str(), destination_.c_str()) != 0) fail_errno(destination_, "rename", errno);
    committed_ = true;
  }

  // Removes the temporary file unless committed; safe from another thread
  // (the signal thread) at any time.
  void abandon() noexcept {
    const std::lock_guard lock(name_lock_);
    if (committed_ || removed_) return;
    ::unlink(temp_.c_str());
    removed_ = true;
  }

 private:
  void unmap() noexcept {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
  }

  std::filesystem::path destination_;
  std::filesystem::path temp_;
  int fd_ = -1;
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::mutex name_lock_;  // commit/abandon on different threads
  bool committed_ = false;
  bool removed_ = false;
};

bool has_scheme(const std::string& url) {
  for (const char* scheme : {"metatensor://", "http://", "https://"}) {
    if (url.rfind(scheme, 0) == 0) return true;
  }
  return false;
}

// The physical tensors to fetch, in the order asked, without repeats: every
// one by default; a logical tensor name (metatensor files) brings its heap.
std::vector<std::string> physical_targets(const streaming::remote_file& f, const fetch_args& args) {
  const std::vector<std::string> all = f.physical_names();
  if (args.tensors.empty()) return all;
  const std::set<std::string> known(all.begin(), all.end());
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto add = [&](const std::string& name) {
    if (seen.insert(name).second) out.push_back(name);
  };
  for (const std::string& name : args.tensors) {
    if (known.count(name) == 0) {
      std::string listed;
      for (std::size_t i = 0; i < all.size() && i < 8; ++i) listed += (i ? ", " : "") + all[i];
      if (all.size() > 8) listed += ", ... (" + std::to_string(all.size()) + " in all)";
      throw tool_error(args.url + ": no tensor named '" + name + "'; physical tensors: " + listed);
    }
    add(name);
    if (f.is_metatensor() && f.image_file().contains(name)) {
      const tensor_layout& l = f.image_file().layout(name);
      if (l.has_heap) add(l.heap_name());
    }
  }
  return out;
}

std::uint64_t tensor_bytes(const streaming::remote_file& f, const std::string& name) {
  return f.base().at(name).bytes().size();
}

// Completes the structural validation of §8.1 on what arrived. The client
// validated the header when it opened the file (§10.4 step 3: §2 and, for a
// metatensor file, every check of §8.2 before the BlobRefs); what remains is
// step 8, the BlobRef checks of §6.4, which read tensor data and so run here
// (§10.7), in §8.2's order (logical tensors by name), for every logical
// tensor whose primary and heap both arrived. A tensor not fetched is zero
// in the output and is not checked. The library runs the checks; the first
// failure is thrown as a metatensor::error naming the MT_ code and the
// tensor, element and byte offset.
void validate_received(const streaming::remote_file& f) {
  if (!f.is_metatensor()) return;  // plain safetensors: §2 is all header
  const metatensor::file& image = f.image_file();
  for (const std::string& name : image.tensor_names()) {
    const tensor_layout& l = image.layout(name);
    if (!l.has_heap) continue;  // no BlobRefs
    if (!f.has(name) || !f.has(l.heap_name())) continue;
    image.check_blob_refs(name);
  }
}

}  // namespace

void run_fetch(const fetch_args& args, std::ostream& out, std::ostream& err, bool show_progress) {
  if (!has_scheme(args.url)) {
    throw tensogram::cli::usage_error("URL must start with metatensor://, http:// or https:// (got '" +
                                      args.url + "')");
  }
  if (args.urgency > 7) throw tensogram::cli::usage_error("--urgency must be 0..7");
  if (args.parallel == 0) throw tensogram::cli::usage_error("--parallel must be at least 1");

  const auto t0 = std::chrono::steady_clock::now();
  output_image image(args.output);

  // Blocked before the client starts its transfer thread, so only the
  // signal thread takes SIGINT/SIGTERM (signals.hpp). Interrupted, we
  // remove the temporary file and leave at once: the transfer thread dies
  // with the process, nothing else needs unwinding.
  const blocked_signals blocked;
  const signal_thread on_signal([&image](int signo) {
    image.abandon();
    const std::string msg = std::string("error: interrupted (") + signal_name(signo) + ")\n";
    (void)::write(STDERR_FILENO, msg.data(), msg.size());
    std::_Exit(128 + signo);
  });

  // Completion callbacks run on the transfer thread and only count and
  // notify; the main thread polls statuses, refills the window of requests
  // in flight and redraws the bars.
  std::mutex done_lock;
  std::condition_variable done_cv;
  std::uint64_t completions = 0;
  const auto notify = [&](const streaming::tensor_request&) {
    {
      const std::lock_guard lock(done_lock);
      ++completions;
    }
    done_cv.notify_one();
  };

  streaming::client_options options;
  options.verify_peer = !args.insecure;
  options.ca_file = args.ca_file;
  options.http_parallel = args.parallel;
  options.image_provider = [&image](std::uint64_t size) { return image.map(size); };
  // Tensors are written to the file with pwrite(2), not through the
  // mapping (a page fault per 4 KiB page: 3-10x slower, docs/benchmarks.md).
  options.image_fd = image.fd();

  streaming::remote_file f = [&] {
    try {
      return streaming::remote_file::open(args.url, options);
    } catch (const std::exception& e) {
      throw tool_error(args.url + ": " + e.what());
    }
  }();
  const std::span<std::byte> bytes = image.bytes();
  if (bytes.size() != f.file_size()) {
    throw tool_error(args.url + ": the client did not use the output mapping (" +
                     std::to_string(bytes.size()) + " of " + std::to_string(f.file_size()) + " bytes)");
  }
  // Bytes [0, 8 + N): the client may keep the header apart from the image.
  const std::span<const std::byte> header = f.header();
  if (header.data() != bytes.data()) std::memcpy(bytes.data(), header.data(), header.size());

  const std::vector<std::string> targets = physical_targets(f, args);
  std::uint64_t total_bytes = 0;
  for (const std::string& name : targets) total_bytes += tensor_bytes(f, name);

  struct in_flight {
    std::string name;
    streaming::tensor_request request;
  };
  std::vector<in_flight> active;
  std::size_t next = 0;
  std::size_t finished = 0;
  std::uint64_t finished_bytes = 0;
  std::uint64_t seen_completions = 0;
  multi_progress bars(err, show_progress);
  std::vector<multi_progress::row> rows;

  while (finished < targets.size()) {
    // Keep up to --parallel requests in flight: over QUIC one stream each,
    // ordered by the server's §10.5 scheduler; over HTTP the client runs
    // --parallel transfers at once itself.
    while (active.size() < args.parallel && next < targets.size()) {
      const std::string& name = targets[next++];
      streaming::request_options ro;
      ro.urgency = static_cast<std::uint8_t>(args.urgency);
      ro.on_complete = notify;
      active.push_back({name, f.get(name, ro)});
    }
    {
      std::unique_lock lock(done_lock);
      done_cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return completions != seen_completions; });
      seen_completions = completions;
    }
    for (auto it = active.begin(); it != active.end();) {
      if (it->request.status() == streaming::request_status::pending) {
        ++it;
        continue;
      }
      try {
        it->request.wait();  // rethrows a failure (MT_NOT_FOUND, MT_BAD_RANGE, lost connection, ...)
      } catch (const std::exception& e) {
        throw tool_error(args.url + ": tensor '" + it->name + "': " + e.what());
      }
      ++finished;
      finished_bytes += it->request.size();
      it = active.erase(it);
    }
    if (show_progress) {
      rows.clear();
      std::uint64_t moving = 0;
      for (const in_flight& a : active) {
        const std::uint64_t got = a.request.received();
        moving += got;
        rows.push_back({a.name, got, a.request.size()});
      }
      const multi_progress::row total{
          std::to_string(finished) + "/" + std::to_string(targets.size()) + " tensors",
          finished_bytes + moving, total_bytes};
      bars.draw(rows, total);
    }
  }
  bars.finish();
  if (!args.no_validate) {
    try {
      validate_received(f);
    } catch (const metatensor::error& e) {
      throw tool_error(args.url + ": invalid file, not written (--no-validate keeps it): " + e.what());
    }
  }
  const std::uint64_t file_size = f.file_size();
  f.close();
  image.commit();

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.3f s, %.1f MB/s", seconds,
                seconds > 0 ? static_cast<double>(finished_bytes) / 1e6 / seconds : 0.0);
  out << "fetched " << finished << (finished == 1 ? " tensor, " : " tensors, ") << finished_bytes
      << " bytes in " << rate << ": " << args.output << " (" << file_size << " bytes)\n";
}

}  // namespace metatensor::cli
