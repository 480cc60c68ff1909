// The reference's three C++ async front ends on one file (docs/async.md):
// callbacks (tensogram::async_callback), futures (tensogram::stdfuture) and
// C++20 coroutines (tensogram::coro), plus cancellation. They share one
// process-wide runtime, configured first and shut down last.
//
//   tensogram_async_example [file.tgm]
// Writes `steps` messages of one float32 field each, reads them back through
// each front end, and exits 1 if any result differs from what was written.
#include <chrono>
#include <cstdio>
#include <exception>
#include <future>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/async/callback.hpp>
#include <tensogram/async/coro.hpp>
#include <tensogram/async/std_future.hpp>

namespace {

namespace tg = tensogram;
namespace tac = tensogram::async_callback;
using namespace std::chrono_literals;

constexpr std::size_t steps = 6;
constexpr std::size_t points = 1000;

// Message k holds `points` values equal to k.
void write_file(const std::string& path) {
  tg::file out = tg::file::create(path);
  std::vector<float> field(points);
  for (std::size_t k = 0; k < steps; ++k) {
    std::fill(field.begin(), field.end(), static_cast<float>(k));
    tg::global_metadata meta;
    tg::cbor::value entry = tg::cbor::value::make_map();
    entry.set("step", static_cast<std::int64_t>(k));
    meta.base.push_back(entry);
    const tg::object_input objects[] = {{tg::data_object_descriptor::contiguous(tg::dtype::float32, {points}),
                                         std::as_bytes(std::span(field))}};
    out.append(meta, objects);
  }
}

double sum_of(const tg::message& m) {
  const float* v = m.object(0).data_as<float>();
  return std::accumulate(v, v + m.object(0).element_count<float>(), 0.0);
}

// 1. Callbacks: each result arrives on a dispatcher thread; a promise hands
// the last one back to this thread.
std::size_t count_with_callbacks(const std::string& path) {
  std::promise<std::size_t> done;
  tac::async_file::open(path, [&done](tac::result<tac::async_file> opened) {
    if (!opened.ok()) {
      done.set_exception(tg::make_error(opened.code(), opened.message()));
      return;
    }
    // The callback owns the file until the count arrives.
    auto file = std::make_shared<tac::async_file>(opened.take());
    file->message_count([&done, file](tac::result<std::size_t> n) {
      if (n.ok()) {
        done.set_value(n.value());
      } else {
        done.set_exception(tg::make_error(n.code(), n.message()));
      }
    });
  });
  return done.get_future().get();
}

// 2. Futures: launch every decode, then collect; failures are the typed
// exceptions from get().
double sum_with_futures(const std::string& path) {
  tg::stdfuture::async_file file = tg::stdfuture::async_file::open(path).get();
  std::vector<std::future<tg::message>> pending;
  for (std::size_t k = 0; k < steps; ++k) pending.push_back(file.decode_message(k));
  double total = 0;
  for (auto& p : pending) total += sum_of(p.get());
  return total;
}

// 3. Coroutines: the same sum, written sequentially.
tg::coro::task<double> sum_with_coroutine(std::string path) {
  tg::coro::async_file file = co_await tg::coro::async_file::open(path);
  double total = 0;
  co_await tg::coro::async_for_each(file, [&total](tg::message m) { total += sum_of(m); });
  co_return total;
}

// 4. Cancellation: a token cancelled before the launch fails the operation
// with cancelled_error.
bool cancelled_decode_fails(const std::string& path) {
  tg::stdfuture::async_file file = tg::stdfuture::async_file::open(path).get();
  tac::cancellation_token token;
  token.cancel();
  try {
    (void)file.decode_message(0, &token).get();
  } catch (const tg::cancelled_error& e) {
    std::printf("cancelled as asked: %s\n", e.what());
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "async_example.tgm";
  try {
    tac::runtime_configure(2, 1);  // before the first async call
    write_file(path);
    const double expected = static_cast<double>(points) * (steps * (steps - 1) / 2);

    const std::size_t n = count_with_callbacks(path);
    std::printf("callbacks:  %zu messages\n", n);
    const double by_futures = sum_with_futures(path);
    std::printf("futures:    sum %.0f\n", by_futures);
    const double by_coroutine = tg::coro::block_on(sum_with_coroutine(path));
    std::printf("coroutines: sum %.0f\n", by_coroutine);
    const bool cancelled = cancelled_decode_fails(path);

    const std::uint64_t still_running = tac::runtime_shutdown_blocking(5s);
    if (n != steps || by_futures != expected || by_coroutine != expected || !cancelled ||
        still_running != 0) {
      std::fprintf(stderr, "unexpected results (expected %zu messages, sum %.0f)\n", steps, expected);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
