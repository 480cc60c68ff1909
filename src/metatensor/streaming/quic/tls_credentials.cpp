// TLS material for metatensor streaming (spec 06 §10.2, §10.8): self-signed
// certificates for loopback tests and small deployments, and the GnuTLS
// credentials and sessions the QUIC engine runs its handshakes with.
#include "tls_credentials.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string_view>
#include <system_error>

#include "quic_engine.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::streaming::quic {

namespace {

using detail::credentials_ptr;
using detail::session_ptr;

struct x509_privkey_deleter {
  void operator()(gnutls_x509_privkey_t k) const noexcept { gnutls_x509_privkey_deinit(k); }
};
struct privkey_deleter {
  void operator()(gnutls_privkey_t k) const noexcept { gnutls_privkey_deinit(k); }
};
struct x509_crt_deleter {
  void operator()(gnutls_x509_crt_t c) const noexcept { gnutls_x509_crt_deinit(c); }
};
// A gnutls_datum_t whose buffer GnuTLS allocated.
struct owned_datum {
  gnutls_datum_t d{nullptr, 0};
  owned_datum() = default;
  owned_datum(const owned_datum&) = delete;
  owned_datum& operator=(const owned_datum&) = delete;
  ~owned_datum() { gnutls_free(d.data); }
};

[[noreturn]] void fail(std::string_view what, int rv) {
  throw tensogram::io_error(std::string(what) + ": " + gnutls_strerror(rv));
}

void check(int rv, std::string_view what) {
  if (rv < 0) fail(what, rv);
}

/// Writes `bytes` to `target` through a temporary file in the same directory
/// and rename(2), so readers never see a half-written PEM file; `mode` is set
/// before any byte is written (the key never exists world-readable).
void write_atomically(const std::filesystem::path& target, const gnutls_datum_t& bytes, mode_t mode) {
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / (target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    throw tensogram::io_error("cannot create a temporary file next to " + target.string() + ": " +
                              std::strerror(errno));
  }
  auto cleanup = [&](const std::string& why) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw tensogram::io_error("cannot write " + target.string() + ": " + why);
  };
  if (::fchmod(fd, mode) != 0) cleanup(std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size) {
    const auto n = ::write(fd, bytes.data + done, bytes.size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      cleanup(std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) cleanup(std::strerror(errno));
  if (::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw tensogram::io_error("cannot write " + target.string() + ": " + std::strerror(errno));
  }
  if (::rename(tmpl.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    throw tensogram::io_error("cannot rename into " + target.string() + ": " + why);
  }
}

// Priorities for QUIC (RFC 9001 §4.2: TLS 1.3 only; §5.3: only AEADs with
// a header-protection scheme, so no CCM_8).  The middlebox compatibility
// mode of TLS 1.3 must be off (RFC 9001 §8.4).
constexpr const char* quic_priorities =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "%DISABLE_TLS13_COMPAT_MODE";

bool set_alpn(gnutls_session_t s) {
  gnutls_datum_t proto{reinterpret_cast<unsigned char*>(const_cast<char*>(alpn.data())),
                       static_cast<unsigned int>(alpn.size())};
  // §10.2: a peer that does not speak metatensor/1 is refused during the
  // handshake (no_application_protocol alert, RFC 9001 §8.1).
  return gnutls_alpn_set_protocols(s, &proto, 1, GNUTLS_ALPN_MANDATORY) == 0;
}

bool is_ip_literal(const std::string& name) {
  std::array<unsigned char, 16> buf{};
  return ::inet_pton(AF_INET, name.c_str(), buf.data()) == 1 ||
         ::inet_pton(AF_INET6, name.c_str(), buf.data()) == 1;
}

}  // namespace

void generate_self_signed(const std::filesystem::path& cert_pem, const std::filesystem::path& key_pem,
                          const std::vector<std::string>& names) {
  if (names.empty()) throw tensogram::io_error("a self-signed certificate needs at least one name");

  gnutls_x509_privkey_t raw_key = nullptr;
  check(gnutls_x509_privkey_init(&raw_key), "gnutls_x509_privkey_init");
  std::unique_ptr<std::remove_pointer_t<gnutls_x509_privkey_t>, x509_privkey_deleter> key(raw_key);
  check(gnutls_x509_privkey_generate(key.get(), GNUTLS_PK_ECDSA,
                                     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0),
        "cannot generate an ECDSA P-256 key");

  gnutls_privkey_t raw_pk = nullptr;
  check(gnutls_privkey_init(&raw_pk), "gnutls_privkey_init");
  std::unique_ptr<std::remove_pointer_t<gnutls_privkey_t>, privkey_deleter> signer(raw_pk);
  check(gnutls_privkey_import_x509(signer.get(), key.get(), 0), "gnutls_privkey_import_x509");

  gnutls_x509_crt_t raw_crt = nullptr;
  check(gnutls_x509_crt_init(&raw_crt), "gnutls_x509_crt_init");
  std::unique_ptr<std::remove_pointer_t<gnutls_x509_crt_t>, x509_crt_deleter> crt(raw_crt);

  check(gnutls_x509_crt_set_version(crt.get(), 3), "gnutls_x509_crt_set_version");
  // RFC 5280 §4.1.2.2: a positive serial of at most 20 octets, unique per
  // issuer; 16 random octets with the top bit cleared.
  std::array<unsigned char, 16> serial{};
  check(gnutls_rnd(GNUTLS_RND_NONCE, serial.data(), serial.size()), "gnutls_rnd");
  serial[0] = static_cast<unsigned char>((serial[0] & 0x7f) | 0x01);
  check(gnutls_x509_crt_set_serial(crt.get(), serial.data(), serial.size()), "gnutls_x509_crt_set_serial");

  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  // A little slack for clocks that differ between hosts.
  check(gnutls_x509_crt_set_activation_time(crt.get(), now - 60 * 60), "gnutls_x509_crt_set_activation_time");
  check(gnutls_x509_crt_set_expiration_time(crt.get(), now + 365L * 24 * 60 * 60),
        "gnutls_x509_crt_set_expiration_time");

  const std::string& cn = names.front();
  check(gnutls_x509_crt_set_dn_by_oid(crt.get(), GNUTLS_OID_X520_COMMON_NAME, 0, cn.data(),
                                      static_cast<unsigned int>(cn.size())),
        "gnutls_x509_crt_set_dn_by_oid");
  for (const auto& name : names) {
    std::array<unsigned char, 16> ip{};
    int rv = 0;
    if (::inet_pton(AF_INET, name.c_str(), ip.data()) == 1) {
      rv = gnutls_x509_crt_set_subject_alt_name(crt.get(), GNUTLS_SAN_IPADDRESS, ip.data(), 4,
                                                GNUTLS_FSAN_APPEND);
    } else if (::inet_pton(AF_INET6, name.c_str(), ip.data()) == 1) {
      rv = gnutls_x509_crt_set_subject_alt_name(crt.get(), GNUTLS_SAN_IPADDRESS, ip.data(), 16,
                                                GNUTLS_FSAN_APPEND);
    } else {
      rv = gnutls_x509_crt_set_subject_alt_name(crt.get(), GNUTLS_SAN_DNSNAME, name.data(),
                                                static_cast<unsigned int>(name.size()), GNUTLS_FSAN_APPEND);
    }
    check(rv, "cannot add subject alternative name '" + name + "'");
  }
  // An end-entity certificate for a TLS server (RFC 5280 §4.2.1.3, 4.2.1.9,
  // 4.2.1.12); clients trust it directly through `ca_file`.
  check(gnutls_x509_crt_set_basic_constraints(crt.get(), 0, -1), "gnutls_x509_crt_set_basic_constraints");
  check(gnutls_x509_crt_set_key_usage(crt.get(), GNUTLS_KEY_DIGITAL_SIGNATURE),
        "gnutls_x509_crt_set_key_usage");
  check(gnutls_x509_crt_set_key_purpose_oid(crt.get(), GNUTLS_KP_TLS_WWW_SERVER, 0),
        "gnutls_x509_crt_set_key_purpose_oid");
  check(gnutls_x509_crt_set_key(crt.get(), key.get()), "gnutls_x509_crt_set_key");
  std::array<unsigned char, 64> key_id{};
  std::size_t key_id_size = key_id.size();
  check(gnutls_x509_crt_get_key_id(crt.get(), 0, key_id.data(), &key_id_size), "gnutls_x509_crt_get_key_id");
  check(gnutls_x509_crt_set_subject_key_id(crt.get(), key_id.data(), key_id_size),
        "gnutls_x509_crt_set_subject_key_id");
  check(gnutls_x509_crt_privkey_sign(crt.get(), crt.get(), signer.get(), GNUTLS_DIG_SHA256, 0),
        "cannot sign the certificate");

  owned_datum cert_text;
  check(gnutls_x509_crt_export2(crt.get(), GNUTLS_X509_FMT_PEM, &cert_text.d), "gnutls_x509_crt_export2");
  owned_datum key_text;
  check(gnutls_x509_privkey_export2(key.get(), GNUTLS_X509_FMT_PEM, &key_text.d),
        "gnutls_x509_privkey_export2");

  // The key first: a certificate without its key is useless, the reverse
  // merely stale.
  write_atomically(key_pem, key_text.d, 0600);
  write_atomically(cert_pem, cert_text.d, 0644);
}

namespace detail {

credentials_ptr load_server_credentials(const std::filesystem::path& cert_pem,
                                        const std::filesystem::path& key_pem) {
  std::error_code ec;
  for (const auto* p : {&cert_pem, &key_pem}) {
    if (p->empty()) throw tensogram::io_error("the QUIC server needs a certificate and a key (PEM files)");
    if (!std::filesystem::is_regular_file(*p, ec)) {
      throw tensogram::io_error("cannot read " + p->string() + ": no such file");
    }
  }
  gnutls_certificate_credentials_t raw = nullptr;
  check(gnutls_certificate_allocate_credentials(&raw), "gnutls_certificate_allocate_credentials");
  credentials_ptr cred(raw);
  const int rv = gnutls_certificate_set_x509_key_file(cred.get(), cert_pem.c_str(), key_pem.c_str(),
                                                      GNUTLS_X509_FMT_PEM);
  if (rv < 0) {
    throw tensogram::io_error("cannot load certificate " + cert_pem.string() + " with key " +
                              key_pem.string() + ": " + gnutls_strerror(rv));
  }
  return cred;
}

credentials_ptr load_client_credentials(bool verify_peer, const std::filesystem::path& ca_file) {
  gnutls_certificate_credentials_t raw = nullptr;
  check(gnutls_certificate_allocate_credentials(&raw), "gnutls_certificate_allocate_credentials");
  credentials_ptr cred(raw);
  if (!verify_peer) return cred;  // `--insecure`: nothing is checked
  // A host without a system CA store can still trust `ca_file`, so a
  // failure here is not an error by itself.
  (void)gnutls_certificate_set_x509_system_trust(cred.get());
  if (!ca_file.empty()) {
    const int n = gnutls_certificate_set_x509_trust_file(cred.get(), ca_file.c_str(), GNUTLS_X509_FMT_PEM);
    if (n < 0)
      throw tensogram::io_error("cannot load CA file " + ca_file.string() + ": " + gnutls_strerror(n));
    if (n == 0) throw tensogram::io_error("CA file " + ca_file.string() + " holds no certificate");
  }
  return cred;
}

session_ptr make_server_session(gnutls_certificate_credentials_t credentials) {
  gnutls_session_t raw = nullptr;
  // QUIC carries no EndOfEarlyData message (RFC 9001 §8.3).
  if (gnutls_init(&raw, GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA) != 0) return nullptr;
  session_ptr s(raw);
  if (gnutls_priority_set_direct(s.get(), quic_priorities, nullptr) != 0) return nullptr;
  if (gnutls_credentials_set(s.get(), GNUTLS_CRD_CERTIFICATE, credentials) != 0) return nullptr;
  if (!set_alpn(s.get())) return nullptr;
  return s;
}

session_ptr make_client_session(gnutls_certificate_credentials_t credentials, const std::string& server_name,
                                bool verify_peer) {
  gnutls_session_t raw = nullptr;
  check(gnutls_init(&raw, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA), "gnutls_init");
  session_ptr s(raw);
  check(gnutls_priority_set_direct(s.get(), quic_priorities, nullptr), "gnutls_priority_set_direct");
  check(gnutls_credentials_set(s.get(), GNUTLS_CRD_CERTIFICATE, credentials), "gnutls_credentials_set");
  if (!set_alpn(s.get())) throw tensogram::io_error("cannot set the ALPN protocol");
  if (!server_name.empty() && !is_ip_literal(server_name)) {
    check(gnutls_server_name_set(s.get(), GNUTLS_NAME_DNS, server_name.data(), server_name.size()),
          "gnutls_server_name_set");
  }
  if (verify_peer) {
    // GnuTLS checks the chain against the trust store and the name against
    // the certificate (DNS or IP SANs) during the handshake, which then
    // fails; certificate_failure() tells why.
    gnutls_session_set_verify_cert(s.get(), server_name.empty() ? nullptr : server_name.c_str(), 0);
  }
  return s;
}

std::string certificate_failure(gnutls_session_t session) {
  const unsigned status = gnutls_session_get_verify_cert_status(session);
  if (status == 0 || status == static_cast<unsigned>(-1)) return {};
  owned_datum text;
  if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text.d, 0) < 0 ||
      text.d.data == nullptr) {
    return "server certificate rejected (verification status " + std::to_string(status) + ")";
  }
  return "server certificate rejected: " +
         std::string(reinterpret_cast<const char*>(text.d.data), text.d.size);
}

}  // namespace detail
}  // namespace metatensor::streaming::quic
