#include "goals.hpp"

#include <sched.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace tensogram_bench {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw std::runtime_error("goals file " + path + ": " + what);
}

}  // namespace

std::vector<goal> read_goals(const std::string& path) {
  std::ifstream f(path);
  if (!f) bad(path, "cannot be read (run the benchmark that writes it first)");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    bad(path, std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("goals") || !doc["goals"].is_array()) bad(path, "no \"goals\" array");
  std::vector<goal> out;
  for (const nlohmann::json& g : doc["goals"]) {
    if (!g.is_object() || !g.contains("goal") || !g["goal"].is_string() || !g.contains("target") ||
        !g["target"].is_number()) {
      bad(path, "a goal without \"goal\" and \"target\": " + g.dump());
    }
    goal x;
    x.name = g["goal"].get<std::string>();
    x.target = g["target"].get<double>();
    if (g.contains("value") && g["value"].is_number()) x.value = g["value"].get<double>();
    if (g.contains("comparison")) {
      x.at_least = g["comparison"] == ">=";
    } else if (g.contains("higher_is_better")) {
      x.at_least = g["higher_is_better"].get<bool>();
    } else {
      bad(path, "goal \"" + x.name + "\" has neither \"comparison\" nor \"higher_is_better\"");
    }
    x.information = g.value("information", false);
    x.note = g.value("note", std::string());
    out.push_back(std::move(x));
  }
  return out;
}

nlohmann::json to_json(const goal& g) {
  return {{"goal", g.name},     {"value", g.value ? nlohmann::json(*g.value) : nlohmann::json(nullptr)},
          {"target", g.target}, {"comparison", g.at_least ? ">=" : "<="},
          {"met", g.met()},     {"information", g.information},
          {"note", g.note}};
}

nlohmann::json to_json(const std::vector<goal>& goals) {
  nlohmann::json a = nlohmann::json::array();
  for (const goal& g : goals) a.push_back(to_json(g));
  return a;
}

std::string machine_description() {
  std::string model = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    // x86 says "model name", arm64 kernels only "CPU part"; the first wins.
    if (line.starts_with("model name")) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) model = line.substr(colon + 2);
      break;
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  return model + ", " + (cpus > 0 ? std::to_string(cpus) : std::string("?")) + " CPUs";
}

void print_goals(const std::vector<goal>& goals) {
  std::printf("\ngoals (measured on %s):\n", machine_description().c_str());
  int met = 0;
  int missed = 0;
  int unmeasured = 0;
  for (const goal& g : goals) {
    const char* verdict = "NOT MET";
    if (!g.value) {
      verdict = "n/a";
    } else if (g.met()) {
      verdict = "met";
    }
    if (g.information) {
      verdict = "(info)";
    } else if (!g.value) {
      ++unmeasured;
    } else if (g.met()) {
      ++met;
    } else {
      ++missed;
    }
    if (g.value) {
      std::printf("  %-60s %8.4f  %s %-6.3g %-8s %s\n", g.name.c_str(), *g.value,
                  g.at_least ? ">=" : "<=", g.target, verdict, g.note.c_str());
    } else {
      std::printf("  %-60s %8s  %s %-6.3g %-8s %s\n", g.name.c_str(), "-", g.at_least ? ">=" : "<=", g.target,
                  verdict, g.note.c_str());
    }
  }
  std::printf("goals: %d met, %d not met, %d not measured\n", met, missed, unmeasured);
}

}  // namespace tensogram_bench
