#include "help_text.hpp"

#include <array>
#include <string>

#include <CLI/CLI.hpp>

namespace tensogram::cli {

namespace {

// Examples follow the command synopses of spec 04 §A.5 (and its worked
// session, §A.6). Entries for subcommands this build lacks (the GRIB/NetCDF
// converters) are harmless: they apply only to registered subcommands.
constexpr std::array<subcommand_help, 20> table = {{
    {"info", "tensogram info forecast.tgm"},
    {"ls", "tensogram ls -w 'mars.levtype!=pl' -p mars.param,mars.levtype forecast.tgm"},
    {"dump", "tensogram dump -w mars.param=133 -j forecast.tgm"},
    {"get", "tensogram get -p mars.param,mars.levtype forecast.tgm"},
    {"set", "tensogram set -s mars.date=20260402,mars.class=rd -w mars.param=167 in.tgm out.tgm"},
    {"copy", "tensogram copy -w mars.type=fc forecast.tgm 'by_param/[mars.param].tgm'"},
    {"merge", "tensogram merge -s last -o merged.tgm a.tgm b.tgm"},
    {"split", "tensogram split -o 'field_[index].tgm' forecast.tgm"},
    {"reshuffle", "tensogram reshuffle -o random_access.tgm streamed.tgm"},
    {"validate", "tensogram validate --full --json forecast.tgm"},
    {"doctor", "tensogram doctor --json"},
    {"convert-grib",
     "tensogram convert-grib --split --encoding simple_packing --compression szip -o fc.tgm 2t.grib2"},
    {"convert-netcdf", "tensogram convert-netcdf --split-by variable --cf -o era5.tgm era5.nc"},
    {"to-grib", "tensogram to-grib -o forecast.grib2 forecast.tgm"},
    {"to-netcdf", "tensogram to-netcdf -o era5.nc era5.tgm"},
    {"convert-npy",
     "tensogram convert-npy --encoding simple_packing --bits 16 --compression szip --meta mars.param=2t -o "
     "t2m.tgm "
     "t2m.npy"},
    {"to-npy", "tensogram to-npy -o arrays/ forecast.tgm"},
    {"completion", "tensogram completion bash > ~/.local/share/bash-completion/completions/tensogram"},
    {"help-markdown", "tensogram help-markdown > docs/cli-reference.md"},
    {"help", "tensogram help ls"},
}};

}  // namespace

std::span<const subcommand_help> subcommand_help_table() noexcept {
  return table;
}

const subcommand_help* find_subcommand_help(std::string_view name) noexcept {
  for (const subcommand_help& h : table) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

void apply_help_text(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App* a) { return !a->get_name().empty(); })) {
    const subcommand_help* h = find_subcommand_help(sub->get_name());
    if (h == nullptr) continue;
    const std::string old = sub->get_footer();
    std::string footer = "Example:\n  " + std::string(h->example);
    if (!old.empty()) footer += "\n\n" + old;
    sub->footer(footer);
  }
}

}  // namespace tensogram::cli
