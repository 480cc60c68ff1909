#include "test_support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>

extern char** environ;

namespace tensogram::cli::test {

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace

run_result run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_program(TENSOGRAM_CLI, args, env);
}

run_result run_program(const std::string& program, const std::vector<std::string>& args,
                       const std::vector<std::string>& env) {
  const scratch_dir tmp;
  const std::string out_path = (tmp / "stdout").string();
  const std::string err_path = (tmp / "stderr").string();

  std::vector<std::string> argv_store;
  argv_store.emplace_back(program);
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TENSOGRAM_", 10) != 0) env_store.emplace_back(*e);
  }
  env_store.insert(env_store.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  run_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::string fixture(const std::string& name) {
  return std::string(TENSOGRAM_FIXTURES) + "/tgm/" + name;
}

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  const std::string s = slurp(path);
  return bytes_of(s);
}

void write_file(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

scratch_dir::scratch_dir() {
  std::random_device rd;
  for (;;) {
    path_ = std::filesystem::temp_directory_path() /
            ("tensogram-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (std::filesystem::create_directory(path_)) return;
  }
}

scratch_dir::~scratch_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::byte> make_npy(const std::string& dict, const std::vector<std::byte>& data, int major,
                                bool pad) {
  const std::size_t len_size = major == 1 ? 2 : 4;
  std::string header = dict;
  if (pad) {
    const std::size_t unpadded = 8 + len_size + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
  }
  std::vector<std::byte> out = bytes_of("\x93NUMPY");
  out.push_back(static_cast<std::byte>(major));
  out.push_back(std::byte{0});
  for (std::size_t i = 0; i < len_size; ++i)
    out.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xFF));
  const std::vector<std::byte> h = bytes_of(header);
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string npy_dict(const std::string& descr, const std::vector<std::uint64_t>& shape, bool fortran) {
  std::string s =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + "), }";
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

}  // namespace tensogram::cli::test
