// Scanning a byte source (spec 01 §16, spec 04 E.3). Reads are probes: the
// 24-byte preamble at the forward position and the 16 bytes that end the
// postamble at the backward bound. Each probe also checks what the previous
// one left pending (the end magic of the message just hopped over, the
// preamble of the message the backward walker just found), so one batched
// read per round confirms one message from each end. Anything unexpected
// stops that walker; whatever neither walker confirmed is then searched in
// bounded chunks, as the forward scan of §16.2 does.
#include "tensogram/io/source_scan.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/wire.hpp"

namespace tensogram::io {

namespace {

using format::min_message_size;
using format::preamble_size;

// The 16 bytes a backward probe needs: postamble total_length + end magic.
constexpr std::uint64_t postamble_tail = 16;

bool preamble_ok(std::span<const std::byte> p) noexcept {
  return p.size() >= preamble_size && format::has_start_magic(p) &&
         load_be16(p.data() + 8) == format::wire_version;
}

std::uint64_t preamble_length(std::span<const std::byte> p) noexcept {
  return load_be64(p.data() + 16);
}

std::uint16_t preamble_flags(std::span<const std::byte> p) noexcept {
  return load_be16(p.data() + 10);
}

// Sequential search over [begin, end) of the source, one chunk in memory at
// a time; the chunk is kept so nearby lookups do not read again.
class chunk_reader {
 public:
  chunk_reader(byte_source& src, std::uint64_t end) : src_(src), end_(end) {}

  // First offset q >= from with `magic` at [q, q + 8) and q + 8 <= end.
  std::optional<std::uint64_t> find(const std::array<char, 8>& magic, std::uint64_t from) {
    std::uint64_t pos = from;
    while (pos + 8 <= end_) {
      const std::span<const std::byte> c = chunk_at(pos);
      const auto* base = reinterpret_cast<const char*>(c.data());
      const void* hit = ::memmem(base, c.size(), magic.data(), magic.size());
      if (hit != nullptr) return pos + static_cast<std::uint64_t>(static_cast<const char*>(hit) - base);
      if (pos + c.size() >= end_) return std::nullopt;
      pos += c.size() - 7;  // overlap: a magic may straddle chunks
    }
    return std::nullopt;
  }

  // `length` bytes at `offset` (within end), from the chunk when it has them.
  buffer bytes(std::uint64_t offset, std::uint64_t length) {
    if (offset >= chunk_off_ && offset + length <= chunk_off_ + chunk_.size()) {
      return chunk_.slice(static_cast<std::size_t>(offset - chunk_off_), static_cast<std::size_t>(length));
    }
    return src_.read_one({offset, length});
  }

 private:
  // Bytes from `pos` to the end of a chunk (at least 8 unless at the end).
  std::span<const std::byte> chunk_at(std::uint64_t pos) {
    if (!(pos >= chunk_off_ && pos + 8 <= chunk_off_ + chunk_.size())) {
      chunk_off_ = pos;
      chunk_ = src_.read_one({pos, std::min(scan_chunk_size, end_ - pos)});
    }
    return chunk_.bytes().subspan(static_cast<std::size_t>(pos - chunk_off_));
  }

  byte_source& src_;
  std::uint64_t end_;
  std::uint64_t chunk_off_ = 0;
  buffer chunk_;
};

// Forward scan of [begin, end) (spec 01 §16.1–16.2) with chunked reads.
std::vector<scan_entry> chunked_forward_scan(byte_source& src, std::uint64_t begin, std::uint64_t end,
                                             std::vector<std::uint16_t>& flags) {
  std::vector<scan_entry> out;
  chunk_reader reader(src, end);
  // No end magic lies in [no_end_from, end): later streaming candidates are
  // rejected at once instead of searching to the end again (which would make
  // hostile input with many start magics quadratic).
  std::uint64_t no_end_from = end;
  std::uint64_t pos = begin;
  while (pos + min_message_size <= end) {
    const std::optional<std::uint64_t> c = reader.find(format::start_magic, pos);
    if (!c || *c + min_message_size > end) break;
    const buffer pre = reader.bytes(*c, preamble_size);
    std::optional<scan_entry> hit;
    if (preamble_ok(pre.bytes())) {
      const std::uint64_t len = preamble_length(pre.bytes());
      if (len > 0) {
        if (len >= min_message_size && len <= end - *c &&
            format::has_end_magic(reader.bytes(*c + len - 8, 8).bytes())) {
          hit = scan_entry{static_cast<std::size_t>(*c), static_cast<std::size_t>(len)};
        }
      } else if (*c + preamble_size < no_end_from) {
        // Streaming message: the first end magic after the preamble ends it.
        if (const std::optional<std::uint64_t> q = reader.find(format::end_magic, *c + preamble_size)) {
          hit = scan_entry{static_cast<std::size_t>(*c), static_cast<std::size_t>(*q + 8 - *c)};
        } else {
          no_end_from = *c + preamble_size;
        }
      }
    }
    if (hit) {
      out.push_back(*hit);
      flags.push_back(preamble_flags(pre.bytes()));
      pos = hit->offset + hit->length;
    } else {
      pos = *c + 1;
    }
  }
  return out;
}

struct pending {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint16_t flags = 0;  // preamble flags, once the preamble was read
  [[nodiscard]] std::uint64_t end() const noexcept { return offset + length; }
  [[nodiscard]] bool same_extent(const pending& o) const noexcept {
    return offset == o.offset && length == o.length;
  }
};

// A probe result awaiting confirmation. Not std::optional: GCC 12 at -O3
// reports false -Wmaybe-uninitialized on optional payloads here (GCC bug
// 105593 and kin).
class pending_slot {
 public:
  explicit operator bool() const noexcept { return active_; }
  const pending* operator->() const noexcept { return &value_; }
  const pending& operator*() const noexcept { return value_; }
  pending_slot& operator=(const pending& p) noexcept {
    value_ = p;
    active_ = true;
    return *this;
  }
  void reset() noexcept { active_ = false; }

 private:
  pending value_{};
  bool active_ = false;
};

scan_entry entry(const pending& p) {
  return scan_entry{static_cast<std::size_t>(p.offset), static_cast<std::size_t>(p.length)};
}

}  // namespace

std::vector<scan_entry> scan_source(byte_source& src, scan_mode mode, std::uint64_t max_message_size,
                                    std::vector<std::uint16_t>* flags_out) {
  if (const buffer* m = src.mapping()) {
    // Scanned in place: the mapping is the file.
    std::vector<scan_entry> found = mode == scan_mode::bidirectional
                                        ? format::scan(m->bytes(), max_message_size)
                                        : format::forward_scan(m->bytes(), 0, m->size());
    if (flags_out != nullptr) {
      flags_out->clear();
      for (const scan_entry& e : found) flags_out->push_back(preamble_flags(m->bytes().subspan(e.offset)));
    }
    return found;
  }
  std::vector<std::uint16_t> fwd_flags;
  std::vector<std::uint16_t> bwd_flags;
  const std::uint64_t size = src.size();
  std::vector<scan_entry> fwd;
  std::vector<scan_entry> bwd;
  std::uint64_t f = 0;     // everything before f is confirmed (forward)
  std::uint64_t b = size;  // everything from b on is confirmed (backward)
  bool fwd_on = true;
  bool bwd_on = mode == scan_mode::bidirectional;
  pending_slot pf;  // preamble read at f; end magic not yet seen
  pending_slot pb;  // postamble read at b; preamble not yet seen

  while ((fwd_on || bwd_on) && f + min_message_size <= b) {
    std::vector<byte_range> req;
    std::optional<std::size_t> fi;
    std::optional<std::size_t> bi;
    std::uint64_t bstart = 0;
    if (fwd_on) {
      // The pending message's end magic and the next preamble in one probe.
      const std::uint64_t start = pf ? pf->end() - 8 : f;
      fi = req.size();
      req.push_back({start, std::min(size, start + (pf ? 8 : 0) + preamble_size) - start});
    }
    if (bwd_on) {
      // The pending message's preamble and the postamble before it.
      const std::uint64_t end = pb ? pb->offset + preamble_size : b;
      bstart = pb ? (pb->offset >= postamble_tail ? pb->offset - postamble_tail : 0) : b - postamble_tail;
      bi = req.size();
      req.push_back({bstart, end - bstart});
    }
    const std::vector<buffer> got = src.read(req);

    if (fi) {
      std::span<const std::byte> fb = got[*fi].bytes();
      if (pf) {
        if (format::has_end_magic(fb)) {
          fwd.push_back(entry(*pf));
          fwd_flags.push_back(pf->flags);
          f = pf->end();
          pf.reset();
          fb = fb.subspan(8);
        } else {
          fwd_on = false;  // declared length does not land on an end magic
          pf.reset();
        }
      }
      if (fwd_on && f + min_message_size <= b) {
        const std::uint64_t len = preamble_ok(fb) ? preamble_length(fb) : 0;
        // A streaming message (length 0) or garbage: left to the chunked scan.
        if (len >= min_message_size && len <= b - f) {
          pf = pending{f, len, preamble_flags(fb)};
        } else {
          fwd_on = false;
        }
      }
    }
    if (bi) {
      std::span<const std::byte> bb = got[*bi].bytes();
      std::size_t post_end = bb.size();
      if (pb) {
        const auto at = static_cast<std::size_t>(pb->offset - bstart);
        const std::span<const std::byte> p = bb.subspan(at);
        // The preamble's own length must agree, or this is not the start.
        if (pb->offset >= f && preamble_ok(p) && preamble_length(p) == pb->length) {
          bwd.push_back(entry(*pb));
          bwd_flags.push_back(preamble_flags(p));
          b = pb->offset;
          post_end = at;
        } else {
          bwd_on = false;
        }
        pb.reset();
      }
      if (bwd_on && f + min_message_size <= b && post_end >= postamble_tail) {
        const std::span<const std::byte> tail = bb.subspan(post_end - postamble_tail, postamble_tail);
        const std::uint64_t len = load_be64(tail.data());
        // len 0 is a streaming message: the backward walk stops (§16.3).
        if (format::has_end_magic(tail.subspan(8)) && len >= min_message_size && len <= max_message_size &&
            len <= b - f) {
          pb = pending{b - len, len};
        } else {
          bwd_on = false;
        }
      } else {
        bwd_on = false;
      }
    }
    // The walkers meet: one message seen from both ends is confirmed by the
    // two probes together; any other overlap means the file is not what the
    // lengths claim, and the rest goes to the chunked scan.
    if (pf && pf->end() > b) {
      pf.reset();
      fwd_on = false;
    }
    if (pf && pb && pf->end() > pb->offset) {
      if (pf->same_extent(*pb)) {
        fwd.push_back(entry(*pf));
        fwd_flags.push_back(pf->flags);
        f = pf->end();
      } else {
        fwd_on = false;
        bwd_on = false;
      }
      pf.reset();
      pb.reset();
    }
    if (!fwd_on) pf.reset();
    if (!bwd_on) pb.reset();
  }
  if (f + min_message_size <= b) {
    std::vector<scan_entry> mid = chunked_forward_scan(src, f, b, fwd_flags);
    fwd.insert(fwd.end(), mid.begin(), mid.end());
  }
  fwd.insert(fwd.end(), bwd.rbegin(), bwd.rend());
  if (flags_out != nullptr) {
    fwd_flags.insert(fwd_flags.end(), bwd_flags.rbegin(), bwd_flags.rend());
    *flags_out = std::move(fwd_flags);
  }
  return fwd;
}

}  // namespace tensogram::io
